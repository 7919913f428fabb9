//! Tests of `Crawler`: what a collector hears of a crawl, and a stored crawl resumed with the
//! settings it is given.

use std::sync::Mutex;

use kumo_core::Item;
use kumo_pipeline::CollectSink;
use kumo_testsite::{ServerBuilder, SiteConfig};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_hears_of_each_request_before_it_is_fetched() {
    let site = SiteConfig { pages: 20, page_bytes: 2_000, ..Default::default() };
    let unique = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let titles = CollectSink::new();
    let collector = Collector::new()
        .on_request({
            let asked = asked.clone();
            move |r| asked.lock().unwrap().push(r.url.to_string())
        })
        .on_html("title", |el, ctx| ctx.emit(Item::new().with("title", el.text())))
        .on_html("a[href]", |el, ctx| {
            if let Some(href) = el.attr("href") {
                ctx.visit(href);
            }
        });
    let summary = Crawler::new([server.url("/index.html")])
        .collector(collector)
        .sink(titles.clone())
        .run()
        .await
        .unwrap();
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), unique, "each page once, robots.txt not among them: {asked:?}");
    let fetched: Vec<String> =
        server.hits().into_iter().filter(|h| h.target != "/robots.txt").map(|h| h.target).collect();
    assert!(asked.iter().all(|u| fetched.iter().any(|t| u.ends_with(t.as_str()))));
    assert_eq!((summary.items, titles.snapshot().len()), (unique as u64, unique));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_crawl_resumes_with_the_settings_it_is_given() {
    let site = SiteConfig { pages: 30, page_bytes: 2_000, ..Default::default() };
    let unique = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let crawler = |max_pages: &str| {
        Crawler::new([server.url("/index.html")])
            .set("max_pages", max_pages)
            .unwrap()
            .store(Store::dir(dir.path().join("state")))
            .output(dir.path().join("pages.jsonl"))
    };
    let first = crawler("5").build().await.unwrap();
    assert!(!first.resumed() && first.changed().is_empty());
    drop(first); // never started: its state and output are let go
    let summary = crawler("5").run().await.unwrap();
    assert_eq!(summary.pages, 5);
    let mut again = crawler("0").build().await.unwrap();
    assert!(again.resumed());
    assert_eq!(again.changed().iter().map(ToString::to_string).collect::<Vec<_>>(), ["max_pages: 5 → 0"]);
    again.start().await.unwrap();
    let summary = again.wait().await.unwrap();
    assert_eq!(summary.pages as usize, unique, "the rest of the site, counted from the first run");
    let text = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    assert_eq!(text.lines().count(), unique, "every page once");
}
