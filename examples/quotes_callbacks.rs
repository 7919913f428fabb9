//! The quotes spider written with Colly-style callbacks: the same 100 quotes as
//! `examples/quotes.toml`, from Rust.
//!
//! ```sh
//! kumo testsite --dir ../shared/testdata/quotes-site --port 8000 &
//! cargo run --example quotes_callbacks -- http://127.0.0.1:8000/
//! ```
//!
//! Quotes also appear on tag pages; the pipeline's `DedupByKey` keeps one of each. The page
//! number travels to each next page as typed request data and is written into the items.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kumo_core::Item;
use kumo_pipeline::ProcessorChain;
use kumo_pipeline::processors::DedupByKey;
use kumo_spider::Collector;
use serde::{Deserialize, Serialize};

/// What a listing page tells the pages it links to.
#[derive(Debug, Serialize, Deserialize)]
pub struct Listing {
    pub page: u32,
}

/// The listing page number each fetched page was told by its parent, by URL path.
pub type Seen = Arc<Mutex<BTreeMap<String, u32>>>;

/// The collector; `seen` records the typed data each page arrived with.
pub fn quotes_collector(seen: Seen) -> Collector {
    Collector::new()
        .on_response(move |resp, ctx| {
            if let Some(l) = ctx.data::<Listing>() {
                seen.lock().unwrap_or_else(|e| e.into_inner()).insert(resp.url.path().to_string(), l.page);
            }
        })
        .on_html("div.quote", |el, ctx| {
            let page = ctx.data::<Listing>().map_or(1, |l| l.page);
            ctx.emit(
                Item::new()
                    .with("text", el.select_text("span.text"))
                    .with("author", el.select_text("small.author"))
                    .with("tags", el.select_texts("a.tag"))
                    .with("listing_page", page),
            );
        })
        .on_html("li.next > a[href]", |el, ctx| {
            let page = ctx.data::<Listing>().map_or(1, |l| l.page);
            if let Some(href) = el.attr("href") {
                ctx.visit_with(href, &Listing { page: page + 1 });
            }
        })
        .on_html("a.tag[href]", |el, ctx| {
            if let Some(href) = el.attr("href") {
                ctx.visit(href);
            }
        })
}

/// Quotes are de-duplicated by their text.
pub fn processors() -> ProcessorChain {
    ProcessorChain::new(true).with(DedupByKey::new(["text"]))
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let start = std::env::args().nth(1).unwrap_or_else(|| "http://127.0.0.1:8000/".into());
    let cfg = kumo_engine::CrawlConfig { seeds: vec![start.parse()?], ..Default::default() };
    let seen = Seen::default();
    let collector = Arc::new(quotes_collector(seen.clone()));
    let sinks: Vec<Box<dyn kumo_pipeline::Sink>> = vec![Box::new(kumo_pipeline::JsonLinesSink::stdout())];
    let summary = kumo_spider::crawl(collector, cfg, processors(), sinks).await?;
    eprintln!("{summary}");
    eprintln!("listing pages reached through next links: {}", seen.lock().map_or(0, |s| s.len()));
    Ok(())
}
