//! `on_xpath` callbacks on fixed pages fetched from the test site: what a node handle gives
//! (text, attributes, HTML, child queries), XML responses, typed child requests, and bad
//! expressions refused at registration or reported as page issues, never a panic mid-crawl.

use kumo_core::{Request, Response};
use kumo_downloader::{Downloader, DownloaderConfig};
use kumo_engine::{Analysis, Analyzer};
use kumo_spider::{Collector, XPathError};
use kumo_testsite::{Fixture, ServerBuilder, TestServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const PAGE: &str = r#"<!DOCTYPE html><html><body>
<div class="quote" id="q1" data-n=" 7 "><span class="text">Be
   yourself</span> <small>Ann</small>
  <a class="tag" href="/tag/a/">a</a><a class="tag" href="/tag/b/">b &amp; c</a></div>
<div class="quote" id="q2"><span class="text">Bye</span><small>Bo</small></div>
<ul><li class="next"><a href="/page/2/">next</a></li></ul>
</body></html>"#;

const FEED: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>News</title>
<item><title>First &amp; best</title><guid isPermaLink="false">g-1</guid><category>a</category><category>b</category></item>
<item><title>Second</title><guid isPermaLink="true">g-2</guid></item>
</channel></rss>"#;

fn typed(content_type: &str, body: &str) -> Fixture {
    let mut page = Fixture::html(body);
    page.headers = vec![("content-type".into(), content_type.into())];
    page
}

async fn site() -> TestServer {
    ServerBuilder::new()
        .fixture("/", Fixture::html(PAGE))
        .fixture("/feed.xml", typed("application/rss+xml", FEED))
        .fixture("/plain.txt", typed("text/plain", PAGE))
        .start()
        .await
        .expect("test site")
}

/// Fetches `path` for real, then runs the collector on the response as the engine would.
async fn analyze(collector: &Collector, server: &TestServer, path: &str) -> (Response, Analysis) {
    let downloader = Downloader::new(1, DownloaderConfig::default()).expect("downloader");
    let resp = downloader.fetch(Request::get(server.url(path).parse().unwrap())).await.expect("fetched");
    let analysis = collector.analyze(&resp);
    (resp, analysis)
}

fn items(analysis: &Analysis) -> Vec<Value> {
    analysis.items.iter().map(|i| serde_json::to_value(i).unwrap()).collect()
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Page {
    n: u32,
}

#[tokio::test]
async fn a_node_gives_text_attributes_html_and_child_queries() {
    let server = site().await;
    let collector = Collector::new()
        .on_html("div.quote", |el, ctx| {
            ctx.emit(kumo_core::Item::new().with("css_outer", el.html()).with("css_inner", el.inner_html()));
        })
        .on_xpath("//div[@class='quote']", |q, ctx| {
            ctx.emit(
                kumo_core::Item::new()
                    .with("index", q.index())
                    .with("id", q.attr("id"))
                    .with("n", q.attr("data-n"))
                    .with("absent", q.attr("lang"))
                    .with("text", q.select_text(".//span[@class='text']"))
                    .with("author", q.select_text("small"))
                    .with("tags", q.select_texts(".//a[@class='tag']"))
                    .with("first_tag", q.select_attr(".//a[@class='tag']", "href"))
                    .with("tag_count", q.select_text("count(.//a[@class='tag'])"))
                    .with("all_text", q.text())
                    .with("outer", q.outer_html())
                    .with("inner", q.inner_html()),
            );
        })
        .on_xpath("//li[@class='next']/a", |a, ctx| {
            if let Some(href) = a.attr("href") {
                ctx.visit_with(&href, &Page { n: 2 });
            }
        });
    let (_, analysis) = analyze(&collector, &server, "/").await;
    let found = items(&analysis);
    assert_eq!(found.len(), 4, "{found:#?}");
    // `on_html` callbacks run before `on_xpath` ones.
    let (css, xpath) = found.split_at(2);
    assert_eq!(
        xpath[0],
        json!({
            "index": 0, "id": "q1", "n": "7", "absent": null, "text": "Be yourself", "author": "Ann",
            "tags": ["a", "b & c"], "first_tag": "/tag/a/", "tag_count": "2",
            "all_text": "Be yourself Ann ab & c",
            "outer": xpath[0]["outer"], "inner": xpath[0]["inner"],
        })
    );
    assert_eq!(
        xpath[1],
        json!({
            "index": 1, "id": "q2", "n": null, "absent": null, "text": "Bye", "author": "Bo", "tags": [],
            "first_tag": null, "tag_count": "0", "all_text": "ByeBo",
            "outer": r#"<div class="quote" id="q2"><span class="text">Bye</span><small>Bo</small></div>"#,
            "inner": r#"<span class="text">Bye</span><small>Bo</small>"#,
        })
    );
    // XPath and CSS handles serialize an element alike (kumo-parse's rules for both).
    for (c, x) in css.iter().zip(xpath) {
        assert_eq!(c["css_outer"], x["outer"]);
        assert_eq!(c["css_inner"], x["inner"]);
    }
    assert_eq!(analysis.requests.len(), 1);
    let next = &analysis.requests[0];
    assert_eq!(next.url.as_str(), server.url("/page/2/"));
    assert_eq!(next.data.get::<Page>(), Some(Page { n: 2 }), "typed data for the child request");
    assert!(analysis.issues.is_empty(), "{:?}", analysis.issues);
}

#[tokio::test]
async fn xml_responses_are_read_and_other_types_are_not() {
    let server = site().await;
    let collector = Collector::new().on_xpath("//item", |item, ctx| {
        ctx.emit(
            kumo_core::Item::new()
                .with("title", item.select_text("title"))
                .with("guid", item.select_text("guid"))
                // The HTML parser reads XML: attribute names are lower-cased.
                .with("permalink", item.select_attr("guid", "ispermalink"))
                .with("categories", item.select_texts("category")),
        );
    });
    let (_, feed) = analyze(&collector, &server, "/feed.xml").await;
    assert_eq!(
        items(&feed),
        vec![
            json!({ "title": "First & best", "guid": "g-1", "permalink": "false", "categories": ["a", "b"] }),
            json!({ "title": "Second", "guid": "g-2", "permalink": "true", "categories": [] }),
        ]
    );
    let (resp, plain) = analyze(&collector, &server, "/plain.txt").await;
    assert_eq!(resp.content_type(), Some("text/plain"));
    assert!(plain.items.is_empty() && plain.issues.is_empty(), "text/plain is not read as markup");
}

#[tokio::test]
async fn bad_child_queries_and_non_element_matches_are_page_issues() {
    let server = site().await;
    let collector = Collector::new()
        .on_xpath("//div[@class='quote']", |q, ctx| {
            // A bad child query finds nothing; the page says why.
            ctx.emit(kumo_core::Item::new().with("broken", q.select_text("span[")));
        })
        .on_xpath("//a/@href", |_, ctx| ctx.emit(kumo_core::Item::new().with("never", true)));
    let (_, analysis) = analyze(&collector, &server, "/").await;
    assert_eq!(items(&analysis), vec![json!({ "broken": null }), json!({ "broken": null })]);
    let issues = analysis.issues.join("\n");
    assert_eq!(analysis.issues.len(), 2, "one issue each, not one per match:\n{issues}");
    assert!(issues.contains(r#"invalid XPath "span[""#), "{issues}");
    assert!(issues.contains("a match that is not an element yields no item"), "{issues}");
}

#[test]
fn a_bad_expression_is_refused_when_registered() {
    let err = Collector::new().try_on_xpath("//div[@class='quote'", |_, _| {}).err().expect("refused");
    assert_eq!(err.expression, "//div[@class='quote'");
    assert!(err.reason.contains("unexpected trailing input"), "{err}");
    assert!(err.to_string().starts_with(r#"bad XPath expression "//div[@class='quote'": "#), "{err}");
    let ok: Result<Collector, XPathError> = Collector::new().try_on_xpath("//div[@class='quote']", |_, _| {});
    assert!(ok.is_ok());
}

#[test]
#[should_panic(expected = "bad XPath expression \"foo(\"")]
fn on_xpath_with_a_bad_literal_panics_at_registration() {
    let _ = Collector::new().on_xpath("foo(", |_, _| {});
}
