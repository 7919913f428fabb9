//! Running configured sites: each on its own engine (own frontier, politeness and
//! concurrency — its own share of workers), all at once, each to completion.

use std::sync::Arc;

use kumo_engine::{Engine, EngineError, Summary};
use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig};
use kumo_pipeline::{CsvSink, JsonLinesSink, PostgresSink, ProcessingSink, Sink, SinkError};

use crate::SiteSpec;

/// How one site's run ended.
#[derive(Debug)]
pub struct SiteRun {
    pub name: String,
    pub result: Result<Summary, EngineError>,
}

/// Opens the sinks a site's `output` names (standard output when it names none).
pub async fn open_sinks(site: &SiteSpec) -> Result<Vec<Box<dyn Sink>>, SinkError> {
    let o = &site.output;
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if let Some(p) = &o.jsonl {
        sinks.push(Box::new(JsonLinesSink::create(p)?));
    }
    if let Some(p) = &o.csv {
        sinks.push(Box::new(CsvSink::create(p, csv_columns(site))?));
    }
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

/// Runs one site to its end, its items going through its processors into `sinks`.
pub async fn run_site(site: &SiteSpec, sinks: Vec<Box<dyn Sink>>) -> Result<Summary, EngineError> {
    let frontier = Arc::new(MemoryFrontier::new(MemoryFrontierConfig {
        politeness: site.crawl.politeness.clone(),
        ..Default::default()
    }));
    let sink = ProcessingSink::new(site.processor_chain(), sinks, site.fail_fast);
    let mut engine = Engine::new();
    engine.init_with(site.crawl.clone(), frontier, vec![Box::new(sink)], site.spider.clone())?;
    engine.start().await?;
    engine.wait().await
}

/// Runs every site at once, each with its sinks; results in the order given.
pub async fn run_sites(sites: Vec<(SiteSpec, Vec<Box<dyn Sink>>)>) -> Vec<SiteRun> {
    let handles: Vec<_> = sites
        .into_iter()
        .map(|(site, sinks)| {
            tokio::spawn(async move {
                let result = run_site(&site, sinks).await;
                SiteRun { name: site.name, result }
            })
        })
        .collect();
    let mut runs = Vec::with_capacity(handles.len());
    for h in handles {
        match h.await {
            Ok(run) => runs.push(run),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    runs
}
