//! `examples/quotes_callbacks.rs` (Colly-style callbacks) finds the same 100 quotes as the
//! configured spider, and the typed request data reaches the child pages.

#[allow(dead_code)]
#[path = "../../../examples/quotes_callbacks.rs"]
mod example;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use kumo_pipeline::{CollectSink, Sink};
use kumo_testsite::ServerBuilder;
use serde_json::Value;

fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_produce_the_same_100_quotes() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let cfg =
        kumo_engine::CrawlConfig { seeds: vec![server.url("/").parse().unwrap()], ..Default::default() };
    let seen = example::Seen::default();
    let collector = Arc::new(example::quotes_collector(seen.clone()));
    let sink = CollectSink::new();
    let items = sink.items();
    let summary =
        kumo_spider::crawl(collector, cfg, example::processors(), vec![Box::new(sink) as Box<dyn Sink>])
            .await
            .unwrap();
    let items = items.lock().unwrap().clone();
    assert_eq!(items.len(), 100, "{summary}");
    let texts: BTreeSet<&str> = items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect();
    assert_eq!(texts.len(), 100);
    let tags: BTreeSet<&str> = items
        .iter()
        .flat_map(|i| i.get("tags").and_then(Value::as_array).unwrap().iter().filter_map(Value::as_str))
        .collect();
    assert_eq!(tags.len(), 137);
    // Typed context: each next page arrived with its number, set by the page before it.
    let seen = seen.lock().unwrap().clone();
    for n in 2..=10 {
        assert_eq!(seen.get(&format!("/page/{n}/")), Some(&n), "{seen:?}");
    }
}
