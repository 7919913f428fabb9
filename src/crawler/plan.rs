//! A crawl resolved and checked ([`Plan`]), then put on its opened state ([`Crawl`]).

use std::sync::Arc;

use kumo_engine::{Analyzer, CrawlConfig, Engine, StopMode, Summary};
use kumo_pipeline::{JsonLinesSink, Sink};
use kumo_settings::{Change, Record};
use tokio::sync::watch;

use super::CrawlerError;
use crate::store::{Identity, Opened, Store};

/// A crawl whose settings are resolved and checked and whose outputs are open, its state not
/// yet: the place for settings only a program sets (trust, a development cache, rendering,
/// an archive that names the worker) before [`Plan::open`] or [`Plan::on`].
pub struct Plan {
    /// What the engine will run on.
    pub config: CrawlConfig,
    /// The settings by name, which the state keeps for the next run to compare.
    pub record: Record,
    /// What the crawl starts from, in words: a state resumes only its own crawl.
    pub origin: String,
    /// What else workers sharing the crawl in Redis must agree on.
    pub config_id: String,
    /// The outputs' names, in order (a WARC directory included): a state resumes only into
    /// the outputs it wrote.
    pub outputs: Vec<String>,
    store: Store,
    sinks: Vec<Box<dyn Sink>>,
    spider: Option<Arc<dyn Analyzer>>,
}

impl Plan {
    pub(super) fn new(
        config: CrawlConfig,
        record: Record,
        store: Store,
        spider: Option<Arc<dyn Analyzer>>,
    ) -> Self {
        Plan {
            config,
            record,
            origin: String::new(),
            config_id: String::new(),
            outputs: Vec::new(),
            store,
            sinks: Vec::new(),
            spider,
        }
    }

    /// Gives the records to `sink` too (an output opened once the settings were checked).
    pub fn sink(&mut self, sink: Box<dyn Sink>) {
        self.outputs.push(sink.name());
        self.sinks.push(sink);
    }

    /// Where the state is to be opened.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What the state is checked against: the outputs (standard output when none is given),
    /// the origin, the settings.
    pub fn identity(&self) -> Identity {
        let outputs = match self.sinks.is_empty() {
            true => vec![JsonLinesSink::stdout().name()],
            false => self.outputs.clone(),
        };
        Identity {
            outputs,
            origin: self.origin.clone(),
            config_id: self.config_id.clone(),
            settings: self.record.clone(),
            politeness: self.config.politeness.clone(),
        }
    }

    /// Opens the state the plan names and readies the crawl on it.
    pub async fn open(self) -> Result<Crawl, CrawlerError> {
        let opened = self.store.open(&self.identity()).await?;
        self.on(opened)
    }

    /// Readies the crawl on a state opened elsewhere (as the `kumo` command does, to say what
    /// it found there), with the configuration as it now stands, checked again.
    pub fn on(mut self, opened: Opened) -> Result<Crawl, CrawlerError> {
        self.config.check()?;
        if self.sinks.is_empty() {
            self.sinks.push(Box::new(JsonLinesSink::stdout()));
        }
        let mut engine = opened.state.engine();
        let frontier = opened.state.frontier.clone();
        match self.spider {
            Some(spider) => engine.init_with(self.config, frontier, self.sinks, spider)?,
            None => engine.init(self.config, frontier, self.sinks)?,
        }
        Ok(Crawl { engine, opened })
    }
}

/// A crawl put together: its engine, ready to start, on its opened state.
pub struct Crawl {
    engine: Engine,
    opened: Opened,
}

impl Crawl {
    /// The engine, to watch or steer the crawl: `progress`, `live`, `stopper`, `pauser`,
    /// `errors`.
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The opened state: where it is, whether it resumed, which worker this is.
    pub fn state(&self) -> &Opened {
        &self.opened
    }

    /// Settings this run changed from those the crawl's last run kept.
    pub fn changed(&self) -> &[Change] {
        &self.opened.changed
    }

    /// Whether the crawl resumed a stored one.
    pub fn resumed(&self) -> bool {
        self.opened.embedded.as_ref().is_some_and(|s| s.resumed())
    }

    /// Starts the engine (see [`Engine::start`]); [`Crawl::wait`] then waits for its end.
    pub async fn start(&mut self) -> Result<(), CrawlerError> {
        Ok(self.engine.start().await?)
    }

    /// Runs the crawl to its end (see [`Engine::run`]), passing on the stop requests sent on
    /// `stop`, then leaves its state as [`Crawl::wait`] does.
    pub async fn run(
        mut self,
        stop: Option<watch::Receiver<Option<StopMode>>>,
    ) -> Result<Summary, CrawlerError> {
        let summary = self.engine.run(stop).await;
        self.opened.close().await;
        Ok(summary?)
    }

    /// Waits for the crawl's end, then leaves its state (a crawl in Redis: what this worker
    /// still holds goes back at once).
    pub async fn wait(mut self) -> Result<Summary, CrawlerError> {
        let summary = self.engine.wait().await;
        self.opened.close().await;
        Ok(summary?)
    }
}
