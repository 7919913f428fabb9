//! Crawls kumo's own synthetic test site with the engine API and prints the summary.
//!
//! `cargo run --example crawl_local`

use std::sync::Arc;

use kumo::engine::{CrawlConfig, Engine};
use kumo::frontier::{MemoryFrontier, MemoryFrontierConfig};
use kumo::pipeline::CollectSink;
use kumo::testsite::{ServerBuilder, SiteConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let site =
        ServerBuilder::new().synthetic(SiteConfig { pages: 500, ..Default::default() }).start().await?;

    let cfg = CrawlConfig { seeds: vec![site.url("/index.html").parse()?], ..Default::default() };
    let records = CollectSink::new();
    let mut engine = Engine::new();
    engine.init(
        cfg,
        Arc::new(MemoryFrontier::new(MemoryFrontierConfig::default())),
        vec![Box::new(records.clone())],
    )?;
    engine.start().await?;
    let summary = engine.wait().await?;

    print!("{summary}");
    println!("first record: {}", serde_json::to_string(&records.snapshot()[0])?);
    Ok(())
}
