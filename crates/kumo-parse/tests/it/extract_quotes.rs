//! Extraction models on fixed pages of the quotes site snapshot (`testdata/quotes-site`):
//! the output is pinned by insta snapshots, and what must hold whatever the snapshot says (CSS
//! and XPath agree, counts, validity) is asserted directly.

use std::path::PathBuf;

use insta::assert_json_snapshot;
use kumo_parse::extract::{Extraction, Field, Model, Take, extract_all};
use serde_json::{Value, json};
use url::Url;

/// The test data: `$KUMO_TESTDATA`, else the repository's `testdata/`.
fn testdata() -> PathBuf {
    match std::env::var_os("KUMO_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")),
    }
}

/// A page of the site and the URL it has on the live site.
fn page(path: &str) -> (String, Url) {
    let file = testdata().join("quotes-site").join(path).join("index.html");
    let body = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let url = Url::parse("http://quotes.toscrape.com/").unwrap().join(path).unwrap();
    (body, url)
}

fn model(toml_text: &str) -> Model {
    toml::from_str(toml_text).unwrap_or_else(|e| panic!("{e}"))
}

fn run(model: &Model, path: &str) -> Extraction {
    let (body, url) = page(path);
    model.compile().unwrap_or_else(|e| panic!("{e}")).extract(&body, false, &url)
}

fn items(extraction: &Extraction) -> Value {
    serde_json::to_value(&extraction.items).unwrap()
}

const QUOTES: &str = r#"
    name = "quote"
    root = { css = "div.quote" }
    fields = [
      { name = "text", css = "span.text", required = true },
      { name = "author", css = "small.author", required = true },
      { name = "tags", css = "a.tag", list = true },
    ]
"#;

#[test]
fn quotes_on_the_first_page() {
    let out = run(&model(QUOTES), "");
    assert_eq!(out.items.len(), 10);
    assert!(out.invalid.is_empty() && out.dig.is_empty() && out.issues.is_empty(), "{out:#?}");
    assert_eq!(out.items[0].get("tags").unwrap(), &json!(["change", "deep-thoughts", "thinking", "world"]));
    assert_json_snapshot!("quotes_index", items(&out));
}

#[test]
fn quotes_via_xpath_equal_quotes_via_css() {
    let xpath = model(
        r#"
        name = "quote"
        root = { xpath = "//div[@class='quote']" }
        fields = [
          { name = "text", xpath = ".//span[@class='text']", required = true },
          { name = "author", xpath = ".//small[@class='author']/text()", required = true },
          { name = "tags", xpath = ".//a[@class='tag']", list = true },
        ]
    "#,
    );
    let out = run(&xpath, "");
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    assert_eq!(out, run(&model(QUOTES), ""));
}

const AUTHOR_CSS: &str = r#"
    name = "author"
    fields = [
      { name = "name", css = "h3.author-title", required = true },
      { name = "birth_date", css = ".author-born-date" },
      { name = "birth_place", css = ".author-born-location", regex = "^in (.+)$" },
      { name = "description", css = ".author-description" },
    ]
"#;

const AUTHOR_XPATH: &str = r#"
    name = "author"
    fields = [
      { name = "name", xpath = "//h3[@class='author-title']/text()", required = true },
      { name = "birth_date", xpath = "//span[@class='author-born-date']" },
      { name = "birth_place", xpath = "//span[@class='author-born-location']/text()", regex = "^in (.+)$" },
      { name = "description", xpath = "//div[@class='author-description']" },
    ]
"#;

#[test]
fn author_page_via_css_and_via_xpath_give_equal_items() {
    let css = run(&model(AUTHOR_CSS), "author/Albert-Einstein/");
    let xpath = run(&model(AUTHOR_XPATH), "author/Albert-Einstein/");
    assert_eq!(css.items.len(), 1);
    assert_eq!(css.items, xpath.items);
    assert!(css.issues.is_empty() && xpath.issues.is_empty());
    let einstein = &css.items[0];
    assert_eq!(einstein.get("birth_place").unwrap(), "Ulm, Germany");
    // Character references are decoded, whitespace runs collapsed.
    let description = einstein.get("description").unwrap().as_str().unwrap();
    assert!(description.starts_with("In 1879, Albert Einstein was born in Ulm, Germany."));
    assert!(description.contains(r#"he advised: "In their struggle"#));
    assert!(description.ends_with("synonymous with genius.More: http://en.wikipedia.org/wiki/Albert_E...http://www.nobelprize.org/nobel_prize..."));
    assert_json_snapshot!("author_einstein", items(&css));
}

#[test]
fn every_author_page_agrees_between_css_and_xpath() {
    let css = model(AUTHOR_CSS).compile().unwrap();
    let xpath = model(AUTHOR_XPATH).compile().unwrap();
    let mut pages = 0;
    for entry in std::fs::read_dir(testdata().join("quotes-site/author")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let (body, url) = page(&format!("author/{name}/"));
        let both = extract_all(&[css.clone(), xpath.clone()], &body, false, &url);
        assert_eq!(both[0].items.len(), 1, "{name}");
        assert_eq!(both[0].items, both[1].items, "{name}");
        pages += 1;
    }
    assert_eq!(pages, 50);
}

#[test]
fn regex_filters_and_regex_selectors() {
    let m = model(
        r#"
        name = "regexes"
        fields = [
          { name = "born", css = ".author-born-date", regex = "(\\w+ \\d+, \\d{4})" },
          { name = "born_year", css = ".author-born-date", regex = "\\d{4}" },
          { name = "died", css = ".author-description", regex = "D\\. (\\d{4})" },
          { name = "no_match", css = ".author-born-date", regex = "(\\d{5})" },
          { name = "title", regex = "<title>([^<]*)</title>" },
          { name = "stylesheets", regex = "href=\"(/static/[^\"]+\\.css)\"", list = true },
          { name = "quoted", css = ".author-description", regex = "\"(extremely [^\"]+)\"" },
        ]
    "#,
    );
    let out = run(&m, "author/Albert-Einstein/");
    assert_eq!(
        items(&out),
        json!([{
            "born": "March 14, 1879",
            "born_year": "1879",
            "died": "1955",
            "no_match": null,
            "title": "Quotes to Scrape",
            "stylesheets": ["/static/bootstrap.min.css", "/static/main.css"],
            "quoted": "extremely powerful bombs of a new type",
        }])
    );
    assert_json_snapshot!("regexes_einstein", items(&out));
}

#[test]
fn attribute_and_html_takes() {
    let m = Model::new(
        "takes",
        vec![
            Field::css("keywords", "div.quote meta.keywords").attr("content"),
            Field::css("about", "div.quote a").attr("href"),
            Field::css("missing_attr", "div.quote a").attr("title"),
            Field::css("next_inner", "li.next").take(Take::InnerHtml),
            Field::css("next_outer", "li.next").take(Take::OuterHtml),
            Field::xpath("x_next_outer", "//li[@class='next']").take(Take::OuterHtml),
            Field::xpath("x_about", "//div[@class='quote']//a").attr("href"),
            Field::xpath("x_about_attr_node", "//div[@class='quote']//a/@href"),
            Field::xpath("x_count", "count(//div[@class='quote'])"),
        ],
    );
    let out = run(&m, "");
    let item = &out.items[0];
    assert_eq!(item.get("keywords").unwrap(), "change,deep-thoughts,thinking,world");
    assert_eq!(item.get("about").unwrap(), "/author/Albert-Einstein");
    assert_eq!(item.get("missing_attr").unwrap(), &Value::Null);
    assert_eq!(item.get("next_outer"), item.get("x_next_outer"));
    assert_eq!(item.get("x_about"), item.get("about"));
    assert_eq!(item.get("x_about_attr_node"), item.get("about"));
    assert_eq!(item.get("x_count").unwrap(), "10");
    assert_json_snapshot!("takes_index", items(&out));
}

#[test]
fn nested_models_give_objects_and_arrays_of_objects() {
    let m = model(
        r#"
        name = "quote"
        root = { css = "div.quote" }
        fields = [
          { name = "text", css = "span.text" },
          { name = "author", css = "span:has(> small.author)", required = true, fields = [
            { name = "name", css = "small.author", required = true },
            { name = "url", css = "a", attr = "href", dig = true, required = true },
          ] },
        ]
    "#,
    );
    let out = run(&m, "");
    assert_eq!(out.items.len(), 10);
    assert_eq!(
        out.items[1].get("author").unwrap(),
        &json!({ "name": "J.K. Rowling", "url": "http://quotes.toscrape.com/author/J-K-Rowling" })
    );
    assert_json_snapshot!("nested_author_objects", items(&out));

    // One item per page holding every quote: an array of objects, tags nested once more.
    let page = Model::new(
        "page",
        vec![Field::css("quotes", "div.quote").list().nested(Model::new(
            "quote",
            vec![
                Field::css("author", "small.author"),
                Field::css("tags", "div.tags").nested(Model::new(
                    "tags",
                    vec![Field::css("names", "a.tag").list(), Field::css("first", "a.tag")],
                )),
            ],
        ))],
    );
    let out = run(&page, "");
    assert_eq!(out.items.len(), 1);
    let quotes = out.items[0].get("quotes").unwrap().as_array().unwrap();
    assert_eq!(quotes.len(), 10);
    assert_eq!(
        quotes[1],
        json!({ "author": "J.K. Rowling", "tags": { "names": ["abilities", "choices"], "first": "abilities" } })
    );
    assert_json_snapshot!("nested_quote_list", items(&out));
}

#[test]
fn dig_fields_report_absolute_urls() {
    let m = model(
        r#"
        name = "links"
        fields = [
          { name = "next", css = "li.next a", attr = "href", dig = true },
          { name = "authors", css = ".quote a[href^='/author/']", attr = "href", list = true, dig = true },
          { name = "goodreads", xpath = "//footer//a[contains(@href, 'goodreads')]/@href", dig = true },
        ]
    "#,
    );
    let out = run(&m, "");
    let dig: Vec<&str> = out.dig.iter().map(Url::as_str).collect();
    assert_eq!(dig[0], "http://quotes.toscrape.com/page/2/");
    assert_eq!(dig.last().copied(), Some("https://www.goodreads.com/quotes"));
    let authors = out.items[0].get("authors").unwrap().as_array().unwrap();
    assert_eq!(authors.len(), 10, "the item keeps every value");
    assert!(dig.len() < authors.len() + 2, "dig is de-duplicated: {dig:?}");
    assert!(authors.iter().all(|a| a.as_str().unwrap().starts_with("http://quotes.toscrape.com/author/")));
    assert_json_snapshot!("dig_index", json!({ "items": items(&out), "dig": dig }));
}

#[test]
fn base_href_decides_where_dig_urls_point() {
    let m = Model::new("links", vec![Field::css("links", "a").attr("href").list().dig()]);
    let url = Url::parse("http://example.com/dir/page.html").unwrap();
    let html = r##"<base href="http://cdn.example.org/root/"><a href="a.html#top">a</a>
        <a href="mailto:x@example.com">m</a><a href="/b">b</a><a href="a.html">again</a>"##;
    let out = m.compile().unwrap().extract(html, false, &url);
    let dig: Vec<&str> = out.dig.iter().map(Url::as_str).collect();
    assert_eq!(dig, ["http://cdn.example.org/root/a.html", "http://cdn.example.org/b"]);
    assert_eq!(
        out.items[0].get("links").unwrap(),
        &json!([
            "http://cdn.example.org/root/a.html",
            "mailto:x@example.com",
            "http://cdn.example.org/b",
            "http://cdn.example.org/root/a.html"
        ])
    );
}

#[test]
fn missing_required_fields_make_items_invalid() {
    let m = model(
        r#"
        name = "loved"
        root = { css = "div.quote" }
        fields = [
          { name = "text", css = "span.text", required = true },
          { name = "love", css = "a.tag[href='/tag/love/page/1/']", required = true },
          { name = "born", css = ".author-born-date", required = true },
          { name = "tags", css = "a.tag.none", list = true, required = true },
          { name = "optional", css = "a.tag.none" },
        ]
    "#,
    );
    let out = run(&m, "");
    assert!(out.items.is_empty(), "never passed on as valid");
    assert_eq!(out.invalid.len(), 10);
    let with_love = out.invalid.iter().filter(|i| i.missing == ["born", "tags"]).count();
    let without = out.invalid.iter().filter(|i| i.missing == ["love", "born", "tags"]).count();
    assert_eq!((with_love, without), (1, 9));
    let first = &out.invalid[0].item;
    assert_eq!(first.get("born").unwrap(), &Value::Null);
    assert_eq!(first.get("tags").unwrap(), &json!([]));
    assert_eq!(first.get("optional").unwrap(), &Value::Null);
    assert!(first.get("text").unwrap().as_str().unwrap().starts_with("“The world"));

    // Nested required fields are reported by their path.
    let nested = Model::new(
        "page",
        vec![Field::css("quotes", "div.quote").list().nested(Model::new(
            "quote",
            vec![
                Field::css("author", "small.author"),
                Field::css("love", "a.tag[href*='/love/']").required(),
            ],
        ))],
    );
    let out = run(&nested, "");
    assert_eq!(out.invalid.len(), 1);
    let missing = &out.invalid[0].missing;
    assert_eq!(missing.len(), 9);
    assert_eq!(missing[0], "quotes[0].love");
}

#[test]
fn several_models_share_one_page() {
    let (body, url) = page("");
    let models = [
        model(QUOTES).compile().unwrap(),
        Model::new("next", vec![Field::css("next", "li.next a").attr("href").dig()]).compile().unwrap(),
        Model::new("x", vec![Field::xpath("title", "//title")]).compile().unwrap(),
    ];
    let all = extract_all(&models, &body, false, &url);
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].items.len(), 10);
    assert_eq!(all[1].dig[0].as_str(), "http://quotes.toscrape.com/page/2/");
    assert_eq!(all[2].items[0].get("title").unwrap(), "Quotes to Scrape");
}

#[test]
fn html_takes_agree_between_css_and_xpath() {
    let css = Model::new(
        "html",
        vec![
            Field::css("quotes", "div.quote").list().take(Take::OuterHtml),
            Field::css("quote_insides", "div.quote").list().take(Take::InnerHtml),
            Field::css("head", "head").take(Take::OuterHtml),
            Field::css("footer", "footer").take(Take::InnerHtml),
            Field::css("details", "div.author-details").take(Take::OuterHtml),
        ],
    );
    let xpath = Model::new(
        "html",
        vec![
            Field::xpath("quotes", "//div[@class='quote']").list().take(Take::OuterHtml),
            Field::xpath("quote_insides", "//div[@class='quote']").list().take(Take::InnerHtml),
            Field::xpath("head", "//head").take(Take::OuterHtml),
            Field::xpath("footer", "//footer").take(Take::InnerHtml),
            Field::xpath("details", "//div[@class='author-details']").take(Take::OuterHtml),
        ],
    );
    for path in ["", "page/2/", "author/Albert-Einstein/", "tag/love/"] {
        let (css, xpath) = (run(&css, path), run(&xpath, path));
        assert_eq!(css.items, xpath.items, "{path}");
        assert!(css.items[0].get("head").unwrap().as_str().unwrap().starts_with("<head>"), "{path}");
    }
}
