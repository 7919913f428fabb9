//! JSONPath fields on a JSON API response: single values keep their JSON type, lists, nested
//! models over JSON values, roots, regex filters, `dig`, and what happens on bodies that are
//! not JSON.

use insta::assert_json_snapshot;
use kumo_parse::extract::{Field, Model, Selector};
use serde_json::{Value, json};
use url::Url;

const RESPONSE: &str = r#"{
  "data": {
    "id": 42,
    "title": "  Quotes   API ",
    "published": true,
    "tags": ["life", "love", "humor"],
    "empty": "",
    "nothing": null,
    "authors": [
      { "name": "Albert Einstein", "born": "March 14, 1879", "links": { "self": "/api/authors/1" } },
      { "name": "Jane Austen", "born": "December 16, 1775", "links": { "self": "/api/authors/2?x=1#top" } },
      { "name": "Anonymous", "links": {} }
    ]
  },
  "results": [
    { "text": "A day without sunshine is like, you know, night.", "score": 3.5 },
    { "text": "Good friends, good books, and a sleepy conscience.", "score": 4 },
    { "score": 1 }
  ],
  "next": "/api/quotes?page=2"
}"#;

fn url() -> Url {
    Url::parse("http://quotes.example/api/quotes?page=1").unwrap()
}

fn model(toml_text: &str) -> Model {
    toml::from_str(toml_text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn single_list_and_nested_jsonpath_fields() {
    let m = model(
        r#"
        name = "api"
        fields = [
          { name = "id", json = "$.data.id", required = true },
          { name = "title", json = "$.data.title" },
          { name = "published", json = "$.data.published" },
          { name = "tags", json = "$.data.tags[*]", list = true },
          { name = "tag_array", json = "$.data.tags" },
          { name = "first_tag", json = "$.data.tags[0]" },
          { name = "empty", json = "$.data.empty" },
          { name = "nothing", json = "$.data.nothing" },
          { name = "absent", json = "$.data.absent" },
          { name = "author_names", json = "$.data.authors[*].name", list = true },
          { name = "born_years", json = "$..born", regex = "\\d{4}", list = true },
          { name = "lead", json = "$.data.authors[0]", fields = [
            { name = "name", json = "$.name" },
            { name = "url", json = "$.links.self", dig = true },
          ] },
          { name = "authors", json = "$.data.authors[*]", list = true, fields = [
            { name = "name", json = "$.name", required = true },
            { name = "born", json = "$.born" },
            { name = "url", json = "$.links.self", dig = true },
          ] },
          { name = "next", json = "$.next", dig = true },
        ]
    "#,
    );
    let out = m.compile().unwrap().extract(RESPONSE, true, &url());
    assert!(out.issues.is_empty() && out.invalid.is_empty(), "{out:#?}");
    let item = &out.items[0];
    assert_eq!(item.get("id").unwrap(), &json!(42), "numbers stay numbers");
    assert_eq!(item.get("title").unwrap(), "  Quotes   API ", "JSON strings are kept as they are");
    assert_eq!(item.get("published").unwrap(), &json!(true));
    assert_eq!(item.get("tags").unwrap(), &json!(["life", "love", "humor"]));
    assert_eq!(item.get("tag_array"), item.get("tags"));
    assert_eq!(item.get("empty").unwrap(), &Value::Null);
    assert_eq!(item.get("born_years").unwrap(), &json!(["1879", "1775"]));
    assert_eq!(
        item.get("lead").unwrap(),
        &json!({ "name": "Albert Einstein", "url": "http://quotes.example/api/authors/1" })
    );
    assert_eq!(item.get("authors").unwrap()[2], json!({ "name": "Anonymous", "born": null, "url": null }));
    let dig: Vec<&str> = out.dig.iter().map(Url::as_str).collect();
    assert_eq!(
        dig,
        [
            "http://quotes.example/api/authors/1",
            "http://quotes.example/api/authors/2?x=1",
            "http://quotes.example/api/quotes?page=2"
        ]
    );
    assert_json_snapshot!("json_api", json!({ "items": out.items, "dig": dig }));
}

#[test]
fn a_json_root_gives_one_item_per_value() {
    let m = Model::new(
        "result",
        vec![
            Field::json("text", "$.text").required(),
            Field::json("score", "$.score"),
            Field::regex("word", r"(\w+)"),
        ],
    )
    .with_root(Selector::json("$.results[*]"));
    let out = m.compile().unwrap().extract(RESPONSE, true, &url());
    assert_eq!(out.items.len(), 2);
    assert_eq!(out.invalid.len(), 1);
    assert_eq!(out.invalid[0].missing, ["text"]);
    assert_eq!(out.invalid[0].item.get("score").unwrap(), &json!(1));
    // Inside a JSON value, a regex reads its JSON text.
    assert_eq!(out.items[0].get("word").unwrap(), "text");
    assert_json_snapshot!(
        "json_results",
        json!({ "items": out.items, "invalid": out.invalid.iter().map(|i| json!({ "item": i.item, "missing": i.missing })).collect::<Vec<_>>() })
    );
}

#[test]
fn json_paths_read_bodies_not_labelled_json() {
    let m = Model::new("api", vec![Field::json("id", "$.data.id")]).compile().unwrap();
    let out = m.extract(RESPONSE, false, &url());
    assert_eq!(out.items[0].get("id").unwrap(), &json!(42));
}

#[test]
fn selectors_that_cannot_run_are_issues_not_failures() {
    let m = Model::new(
        "mixed",
        vec![Field::json("id", "$.data.id").required(), Field::css("title", "h1"), Field::xpath("x", "//h1")],
    )
    .compile()
    .unwrap();

    let on_json = m.extract(RESPONSE, true, &url());
    assert_eq!(on_json.items.len(), 1);
    assert_eq!(
        on_json.issues,
        [
            "model `mixed`, field `title`: css selectors do not apply to a JSON response",
            "model `mixed`, field `x`: xpath selectors do not apply to a JSON response",
        ]
    );

    let on_html = m.extract("<h1>Hello</h1>", false, &url());
    assert_eq!(on_html.items.len(), 0);
    assert_eq!(on_html.invalid[0].missing, ["id"]);
    assert_eq!(on_html.invalid[0].item.get("title").unwrap(), "Hello");
    assert_eq!(on_html.invalid[0].item.get("x").unwrap(), "Hello");
    assert_eq!(
        on_html.issues,
        ["model `mixed`, field `id`: the body is not JSON: expected value at line 1 column 1"]
    );
}
