//! The quotes spider written with Colly-style callbacks: the same data as
//! `examples/quotes.toml` — 100 quotes, 50 authors, 137 tags, each item tagged with `_model` —
//! from Rust.
//!
//! ```sh
//! kumo testsite --dir testdata/quotes-site --port 8000 &
//! cargo run --example quotes_callbacks -- http://127.0.0.1:8000/
//! ```
//!
//! Listing and tag pages are read with CSS callbacks (`on_html`), author pages and author links
//! with XPath ones (`on_xpath`). Quotes also appear on tag pages; a `DedupByKey` per model
//! keeps one of each quote, author and tag. The listing page number travels to each next page
//! as typed request data.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kumo_core::Item;
use kumo_pipeline::ProcessorChain;
use kumo_pipeline::processors::{DedupByKey, OnlyModel};
use kumo_spider::Collector;
use serde::{Deserialize, Serialize};

/// What a listing page tells the next one.
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
        // Quotes, on listing and tag pages. Text and author are required, as in the TOML model.
        .on_html("div.quote", |el, ctx| {
            let (Some(text), Some(author)) = (el.select_text("span.text"), el.select_text("small.author"))
            else {
                return;
            };
            ctx.emit(
                Item::new()
                    .with("_model", "quote")
                    .with("text", text)
                    .with("author", author)
                    .with("tags", el.select_texts("a.tag")),
            );
        })
        // A tag page names its tag in its heading, linked to itself.
        .on_html("h3 > a[href^='/tag/']", |el, ctx| {
            let name = el.text();
            if !name.is_empty() {
                ctx.emit(Item::new().with("_model", "tag").with("name", name));
            }
        })
        .on_xpath("//div[@class='author-details']", |author, ctx| {
            let Some(name) = author.select_text(".//h3[@class='author-title']") else { return };
            let place = author.select_text(".//span[@class='author-born-location']");
            ctx.emit(
                Item::new()
                    .with("_model", "author")
                    .with("name", name)
                    .with("birth_date", author.select_text(".//span[@class='author-born-date']"))
                    .with("birth_place", place.map(|p| p.strip_prefix("in ").unwrap_or(&p).to_string()))
                    .with("description", author.select_text(".//div[@class='author-description']")),
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
        .on_xpath("//a[starts-with(@href, '/author/')]", |a, ctx| {
            if let Some(href) = a.attr("href") {
                ctx.visit(&href);
            }
        })
}

/// One of each quote (by text), author and tag (by name), as the TOML file's processors.
pub fn processors() -> ProcessorChain {
    ProcessorChain::new(true)
        .with(OnlyModel::new("quote", Box::new(DedupByKey::new(["text"]))))
        .with(OnlyModel::new("author", Box::new(DedupByKey::new(["name"]))))
        .with(OnlyModel::new("tag", Box::new(DedupByKey::new(["name"]))))
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
