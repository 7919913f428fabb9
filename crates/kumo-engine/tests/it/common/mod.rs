//! Shared set-up for the engine's end-to-end tests: run a crawl against a test server and
//! collect its page records.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kumo_core::{Item, Url};
use kumo_engine::{CrawlConfig, Engine, Summary};
use kumo_frontier::{HostPolicy, MemoryFrontier, MemoryFrontierConfig, Politeness};
use kumo_pipeline::CollectSink;

/// A config for `seed` with test-friendly timeouts and no retries' back-off wait.
pub fn config(seed: &str) -> CrawlConfig {
    let mut cfg = CrawlConfig {
        seeds: vec![Url::parse(seed).expect("seed URL")],
        concurrency: 16,
        parsers: 2,
        politeness: Politeness {
            default: HostPolicy { parallelism: 16, ..Default::default() },
            ..Default::default()
        },
        retry_backoff: Duration::from_millis(10),
        ..Default::default()
    };
    cfg.downloader.timeout = Duration::from_secs(10);
    cfg
}

pub fn frontier(cfg: &CrawlConfig) -> Arc<MemoryFrontier> {
    Arc::new(MemoryFrontier::new(MemoryFrontierConfig {
        politeness: cfg.politeness.clone(),
        ..Default::default()
    }))
}

/// Runs a crawl to its end (bounded by a 60 s guard) and returns the summary and records.
pub async fn crawl(cfg: CrawlConfig) -> (Summary, Vec<Item>) {
    let (summary, items, _) = crawl_keeping_frontier(cfg).await;
    (summary, items)
}

/// As `crawl`, and the frontier, to look at what it kept (failures, hosts).
pub async fn crawl_keeping_frontier(cfg: CrawlConfig) -> (Summary, Vec<Item>, Arc<MemoryFrontier>) {
    let sink = CollectSink::new();
    let mut engine = Engine::new();
    let f = frontier(&cfg);
    engine.init(cfg, f.clone(), vec![Box::new(sink.clone())]).expect("init");
    engine.start().await.expect("start");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait())
        .await
        .expect("crawl finished within 60 s")
        .expect("wait");
    (summary, sink.snapshot(), f)
}

pub fn field<'a>(item: &'a Item, name: &str) -> &'a str {
    item.get(name).and_then(|v| v.as_str()).unwrap_or("")
}

pub fn status(item: &Item) -> u64 {
    item.get("status").and_then(|v| v.as_u64()).unwrap_or(0)
}

/// The distinct `url`s of the records.
pub fn urls(items: &[Item]) -> BTreeSet<String> {
    items.iter().map(|i| field(i, "url").to_string()).collect()
}

/// Requests the server saw, robots.txt fetches left out.
pub fn page_hits(server: &kumo_testsite::TestServer) -> usize {
    server.hits().iter().filter(|h| h.target != "/robots.txt").count()
}
