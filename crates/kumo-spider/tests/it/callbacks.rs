//! `examples/quotes_callbacks.rs` (Colly-style callbacks, CSS and XPath) extracts exactly the
//! ground truth — 100 quotes, 50 authors, 137 tags — and exactly the items the configured
//! spider `examples/quotes.toml` extracts; the typed request data reaches the child pages.

use crate::common;
#[allow(dead_code)]
#[path = "../../../../examples/quotes_callbacks.rs"]
mod example;

use std::sync::Arc;
use std::time::Duration;

use kumo_core::Item;
use kumo_pipeline::{CollectSink, Sink};
use kumo_spider::{LoadOptions, SpiderFile, run_site};
use kumo_testsite::{ServerBuilder, TestServer};

/// The items as sorted JSON lines, to compare two crawls whatever their order.
fn lines(items: &[Item]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|i| serde_json::to_string(i).unwrap()).collect();
    v.sort();
    v
}

async fn configured_items(server: &TestServer) -> Vec<Item> {
    let opts = LoadOptions { base: Some(server.base_url()), ..Default::default() };
    let file = SpiderFile::load(&common::root().join("examples/quotes.toml"), &opts).unwrap();
    let sink = CollectSink::new();
    let items = sink.items();
    tokio::time::timeout(Duration::from_secs(120), run_site(&file.sites[0], vec![Box::new(sink)]))
        .await
        .expect("the configured crawl ends within 120 s")
        .unwrap();
    items.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_produce_the_ground_truth_and_the_configured_spiders_items() {
    let server =
        ServerBuilder::new().directory(common::testdata().join("quotes-site")).start().await.unwrap();
    let cfg =
        kumo_engine::CrawlConfig { seeds: vec![server.url("/").parse().unwrap()], ..Default::default() };
    let seen = example::Seen::default();
    let collector = Arc::new(example::quotes_collector(seen.clone()));
    let sink = CollectSink::new();
    let items = sink.items();
    let crawl =
        kumo_spider::crawl(collector, cfg, example::processors(), vec![Box::new(sink) as Box<dyn Sink>]);
    let summary = tokio::time::timeout(Duration::from_secs(120), crawl)
        .await
        .expect("the crawl ends within 120 s")
        .unwrap();
    let items = items.lock().unwrap().clone();
    assert_eq!(summary.errors.len(), 0, "{summary}");

    common::assert_ground_truth(&items);
    assert_eq!(items.len(), 100 + 50 + 137, "nothing but quotes, authors and tags: {summary}");
    let configured = configured_items(&server).await;
    assert_eq!(lines(&items), lines(&configured), "the same items as examples/quotes.toml");

    // Typed context: each next page arrived with its number, set by the page before it.
    let seen = seen.lock().unwrap().clone();
    for n in 2..=10 {
        assert_eq!(seen.get(&format!("/page/{n}/")), Some(&n), "{seen:?}");
    }
}
