//! Pages built to hurt: deep nesting, junk bytes, empty bodies. Extraction must finish
//! without overflowing the stack or failing, whatever the selectors.

use kumo_parse::extract::{ExtractError, Field, MAX_DEPTH, Model, Take};
use serde_json::json;
use url::Url;

fn url() -> Url {
    Url::parse("http://hostile.example/").unwrap()
}

/// Just under the depth cap: the serializers and text walks must take it without recursion.
const DEPTH: usize = MAX_DEPTH - 10;

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let deeper = format!("{}<b>deep</b>{}", "<span>".repeat(50_000), "</span>".repeat(50_000));
    let html = format!("{}<b>deep</b>{}", "<span>".repeat(DEPTH), "</span>".repeat(DEPTH));
    let xpath = Model::new(
        "deep",
        vec![
            Field::xpath("b", "//b"),
            Field::xpath("text", "/html/body/span"),
            Field::xpath("outer", "/html/body/span").take(Take::OuterHtml),
            Field::xpath("inner", "/html/body").take(Take::InnerHtml),
            Field::xpath("spans", "count(//span)"),
            Field::xpath("inside", "/html/body")
                .nested(Model::new("inside", vec![Field::regex("b", "<b>(.*?)</b>")])),
        ],
    );
    let css = Model::new(
        "deep",
        vec![
            Field::css("b", "b"),
            Field::css("text", "body > span"),
            Field::css("outer", "body > span").take(Take::OuterHtml),
            Field::css("inner", "body").take(Take::InnerHtml),
            Field::css("inside", "body")
                .nested(Model::new("inside", vec![Field::regex("b", "<b>(.*?)</b>")])),
        ],
    );
    let (xpath, css) = (xpath.compile().unwrap(), css.compile().unwrap());
    for model in [&xpath, &css] {
        let out = model.extract(&deeper, false, &url());
        assert_eq!(out.failure, Some(ExtractError::TooDeep { limit: MAX_DEPTH }));
        assert!(out.items.is_empty() && out.invalid.is_empty());
    }
    let by_xpath = xpath.extract(&html, false, &url());
    let by_css = css.extract(&html, false, &url());
    for out in [&by_xpath, &by_css] {
        let item = &out.items[0];
        assert_eq!(item.get("b").unwrap(), "deep");
        assert_eq!(item.get("text").unwrap(), "deep");
        assert_eq!(item.get("outer").unwrap().as_str().unwrap().len(), html.len());
        assert_eq!(item.get("inside").unwrap(), &json!({ "b": "deep" }));
    }
    assert_eq!(by_xpath.items[0].get("spans").unwrap(), &json!(DEPTH.to_string()));
    assert_eq!(by_xpath.items[0].get("outer"), by_css.items[0].get("outer"));
    assert_eq!(by_xpath.items[0].get("inner"), by_css.items[0].get("inner"));
}

#[test]
fn junk_and_empty_bodies_give_empty_values_not_failures() {
    let model = Model::new(
        "any",
        vec![
            Field::css("css", "p"),
            Field::xpath("xpath", "//p"),
            Field::regex("regex", "p"),
            Field::json("json", "$.p"),
            Field::css("list", "p").list(),
        ],
    )
    .compile()
    .unwrap();
    for body in [
        "",
        "\u{0}\u{1}<<<>>>&&&;",
        "<table><tr><td><svg><foreignObject><math>",
        "</p></html><html>",
        "{\"p\": ",
    ] {
        let out = model.extract(body, false, &url());
        assert_eq!(out.items.len(), 1, "{body:?}");
        let item = &out.items[0];
        assert_eq!(item.get("css").unwrap(), &json!(null), "{body:?}");
        assert_eq!(item.get("xpath").unwrap(), &json!(null), "{body:?}");
        assert_eq!(item.get("list").unwrap(), &json!([]), "{body:?}");
        assert!(out.issues.iter().all(|i| i.contains("the body is not JSON")), "{body:?}: {:?}", out.issues);
    }
}
