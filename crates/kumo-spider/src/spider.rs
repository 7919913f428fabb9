//! The `Spider` trait: a spider written in Rust, Scrapy style — start URLs, and a `parse` that
//! turns a response into new requests and items — run on the engine through
//! [`SpiderAnalyzer`].

use std::sync::Arc;

use kumo_core::{Item, Request, Response, Url};
use kumo_engine::{Analysis, Analyzer, CrawlConfig, Engine, EngineError, Summary};
use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig};
use kumo_pipeline::{ProcessingSink, ProcessorChain, Sink};

/// A spider. `parse` is called from several parser tasks at once; state it keeps needs
/// interior mutability.
pub trait Spider: Send + Sync {
    /// Where the crawl starts.
    fn start_urls(&self) -> Vec<Url>;

    /// New requests (build them with `response.request.follow(url)` so depth and the referrer
    /// are kept, and set typed data with `request.data.set(&value)`) and items.
    fn parse(&self, response: &Response) -> (Vec<Request>, Vec<Item>);
}

/// Runs a [`Spider`] as the engine's analyzer.
pub struct SpiderAnalyzer<S: ?Sized>(pub Arc<S>);

impl<S: Spider + ?Sized> Analyzer for SpiderAnalyzer<S> {
    fn analyze(&self, response: &Response) -> Analysis {
        let (requests, items) = self.0.parse(response);
        Analysis { requests, items, ..Analysis::default() }
    }
}

/// Crawls with any analyzer on a fresh engine: `cfg`'s seeds, items through `processors`
/// into `sinks`.
pub async fn crawl(
    analyzer: Arc<dyn Analyzer>,
    cfg: CrawlConfig,
    processors: ProcessorChain,
    sinks: Vec<Box<dyn Sink>>,
) -> Result<Summary, EngineError> {
    let frontier = Arc::new(MemoryFrontier::new(MemoryFrontierConfig {
        politeness: cfg.politeness.clone(),
        ..Default::default()
    }));
    let fail_fast = processors.fail_fast();
    let sink = ProcessingSink::new(processors, sinks, fail_fast);
    let mut engine = Engine::new();
    engine.init_with(cfg, frontier, vec![Box::new(sink)], analyzer)?;
    engine.run(None).await
}

/// Crawls with `spider`: its start URLs replace `cfg.seeds`.
pub async fn crawl_spider<S: Spider + 'static>(
    spider: Arc<S>,
    mut cfg: CrawlConfig,
    processors: ProcessorChain,
    sinks: Vec<Box<dyn Sink>>,
) -> Result<Summary, EngineError> {
    cfg.seeds = spider.start_urls();
    crawl(Arc::new(SpiderAnalyzer(spider)), cfg, processors, sinks).await
}
