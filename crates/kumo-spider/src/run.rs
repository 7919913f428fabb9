//! What a configured site runs on: its outputs, its state, and a run in memory (the `kumo`
//! command runs sites through `kumo::Crawler`).

use std::sync::Arc;

use kumo_core::{AnswerStorage, CookieStorage};
use kumo_engine::{Engine, EngineError, StopMode, Summary};
use kumo_frontier::robots::RobotsStore;
use kumo_frontier::{Frontier, MemoryFrontier, MemoryFrontierConfig};
#[cfg(feature = "postgres")]
use kumo_pipeline::PostgresSink;
use kumo_pipeline::{CsvSink, Existing, ItemJournal, JsonArraySink, JsonLinesSink, Sink, SinkError};
use tokio::sync::watch;

use crate::SiteSpec;

/// Opens the sinks a site's `output` names (standard output when it names none). A new crawl
/// refuses a file that holds data unless the output says `overwrite = true`.
pub async fn open_sinks(site: &SiteSpec) -> Result<Vec<Box<dyn Sink>>, SinkError> {
    let o = &site.output;
    let existing = if o.overwrite { Existing::Replace } else { Existing::Refuse };
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if let Some(p) = &o.jsonl {
        sinks.push(Box::new(JsonLinesSink::create_with(p, existing)?));
    }
    if let Some(p) = &o.csv {
        sinks.push(Box::new(CsvSink::create_with(p, csv_columns(site), existing)?));
    }
    if let Some(p) = &o.json {
        sinks.push(Box::new(JsonArraySink::create_with(p, existing)?));
    }
    #[cfg(feature = "postgres")]
    if let Some(pg) = &o.postgres {
        sinks.push(Box::new(PostgresSink::connect(&pg.url, pg.sink.clone()).await?));
    }
    if o.stdout || sinks.is_empty() {
        sinks.push(Box::new(JsonLinesSink::stdout()));
    }
    Ok(sinks)
}

/// CSV columns: `_model`, then every model's fields in order of first appearance; with no
/// model, the first item's fields.
fn csv_columns(site: &SiteSpec) -> Option<Vec<String>> {
    let models = &site.spider.models;
    if models.is_empty() {
        return None;
    }
    let mut cols = vec!["_model".to_string()];
    for f in models.iter().flat_map(|m| &m.fields) {
        if !cols.contains(f) {
            cols.push(f.clone());
        }
    }
    Some(cols)
}

/// Where a site's crawl state lives: its frontier, and the item journal when the frontier is
/// durable (the embedded store is both), so its outputs resume with every item exactly once;
/// its cookies too (`None`: in memory); and, for a crawl shared by workers, where they share
/// robots.txt answers.
#[derive(Clone)]
pub struct SiteState {
    /// The crawl's frontier: the requests to make and the URLs seen.
    pub frontier: Arc<dyn Frontier>,
    /// Where items are journaled, so outputs resume with each item once (`None`: nowhere).
    pub journal: Option<Arc<dyn ItemJournal>>,
    /// Where the crawl's cookies are kept (`None`: in memory).
    pub cookies: Option<Arc<dyn CookieStorage>>,
    /// Where robots.txt answers are shared with the crawl's other workers (`None`: not shared).
    pub robots: Option<Arc<dyn RobotsStore>>,
    /// Where the crawl's DNS answers are kept for its next run (`None`: nowhere).
    pub dns: Option<Arc<dyn AnswerStorage>>,
}

impl SiteState {
    /// Everything in memory: gone when the run ends.
    pub fn memory(site: &SiteSpec) -> Self {
        let frontier = MemoryFrontier::new(MemoryFrontierConfig {
            politeness: site.crawl.politeness.clone(),
            ..Default::default()
        });
        SiteState { frontier: Arc::new(frontier), journal: None, cookies: None, robots: None, dns: None }
    }

    /// An engine that keeps its items, cookies and robots.txt answers where this state says.
    pub fn engine(&self) -> Engine {
        let mut engine = Engine::new();
        if let Some(journal) = &self.journal {
            engine = engine.with_journal(journal.clone());
        }
        if let Some(cookies) = &self.cookies {
            engine = engine.with_cookie_storage(cookies.clone());
        }
        if let Some(robots) = &self.robots {
            engine = engine.with_robots_store(robots.clone());
        }
        if let Some(dns) = &self.dns {
            engine = engine.with_answer_storage(dns.clone());
        }
        engine
    }
}

/// Tells a running crawl to stop: send `Some(mode)` (a graceful stop, then maybe a stop-now).
pub type StopSignal = watch::Receiver<Option<StopMode>>;

/// Runs one site to its end in memory, its items going through its processors into `sinks`.
pub async fn run_site(site: &SiteSpec, sinks: Vec<Box<dyn Sink>>) -> Result<Summary, EngineError> {
    crate::crawl(site.spider.clone(), site.crawl.clone(), site.processor_chain(), sinks).await
}
