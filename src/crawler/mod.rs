//! The crawl builder: start URLs, settings by name, where the state lives, where items go and
//! what reads the pages, put together in one place. The `kumo` command goes through it too:
//! `kumo crawl`, each site of a spider file, each run of `kumo run` and the bench commands.
//!
//! ```no_run
//! # async fn crawl() -> Result<(), kumo::CrawlerError> {
//! let summary = kumo::Crawler::new(["http://127.0.0.1:8000/"])
//!     .set("delay", "250ms")?
//!     .store(kumo::Store::dir("state"))
//!     .output("pages.jsonl")
//!     .run()
//!     .await?;
//! println!("{summary}");
//! # Ok(()) }
//! ```
//!
//! With [`Store::dir`], the crawl can be stopped or killed at any moment: the same program run
//! again resumes it, and every page is written once.
//!
//! Three steps, each of which a program may take itself: [`Crawler::prepare`] resolves and
//! checks the settings into a [`Plan`] (whose configuration may still be adjusted), the plan
//! opens the state ([`Plan::open`], or [`Plan::on`] a state opened elsewhere) into a [`Crawl`],
//! and the crawl runs.

mod plan;
#[cfg(all(test, feature = "testsite"))]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use kumo_core::{Request, Url};
use kumo_engine::{Analyzer, CrawlConfig, EngineError, Listener, Summary};
use kumo_pipeline::{
    CsvSink, Existing, FileFormat, JsonArraySink, JsonLinesSink, ProcessingSink, Sink, SinkError,
};
use kumo_settings::{Layer, Record, SettingError, Settings, Source};
use kumo_spider::{Collector, SiteSpec};

pub use plan::{Crawl, Plan};

use crate::store::{OpenError, Store};

/// A crawl being put together.
pub struct Crawler {
    seeds: Vec<String>,
    /// Settings by name, lowest first: the library's own, then any given with [`Crawler::layer`].
    layers: Vec<Layer>,
    /// A configuration resolved elsewhere (a spider file's site, a bench), with its record.
    resolved: Option<(CrawlConfig, Record)>,
    store: Store,
    files: Vec<PathBuf>,
    existing: Existing,
    sinks: Vec<Box<dyn Sink>>,
    spider: Option<Arc<dyn Analyzer>>,
    listeners: Vec<Arc<dyn Listener>>,
    origin: Option<String>,
    config_id: Option<String>,
    /// The outputs' names when the sinks are wrapped (a site's processors before its sinks).
    outputs: Option<Vec<String>>,
}

/// A crawl that could not be put together or run.
#[derive(Debug, thiserror::Error)]
pub enum CrawlerError {
    /// A start URL that does not parse.
    #[error("start URL {url:?}: {why}")]
    Seed {
        /// The start URL as given.
        url: String,
        /// Why it does not parse.
        why: String,
    },
    /// A setting by name that is unknown, or whose value is refused.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// Settings by name (the first one's name) on a crawl whose configuration was resolved
    /// elsewhere ([`Crawler::configured`], [`Crawler::site`]).
    #[error("settings by name ({0}) cannot be set on a crawl whose configuration is already resolved")]
    Resolved(String),
    /// [`CrawlConfig::check`] refused the configuration.
    #[error(transparent)]
    Config(#[from] kumo_engine::ConfigError),
    /// An output file could not be opened, or is locked by another writer.
    #[error(transparent)]
    Output(#[from] SinkError),
    /// An output file whose name gives no format (`.jsonl`, `.json`, `.csv`).
    #[error("{0}: give the file a .jsonl, .json or .csv name")]
    OutputFormat(PathBuf),
    /// The state could not be opened for this crawl.
    #[error(transparent)]
    Store(#[from] OpenError),
    /// The engine refused to initialize, start or run the crawl.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl Crawler {
    /// A crawl from these start URLs, with the default settings, in memory, its page records
    /// (or, with a spider, its items) on standard output as JSON Lines.
    pub fn new<S: Into<String>>(seeds: impl IntoIterator<Item = S>) -> Self {
        Crawler {
            seeds: seeds.into_iter().map(Into::into).collect(),
            layers: vec![Layer::new(Source::Library)],
            resolved: None,
            store: Store::memory(),
            files: Vec::new(),
            existing: Existing::Refuse,
            sinks: Vec::new(),
            spider: None,
            listeners: Vec::new(),
            origin: None,
            config_id: None,
            outputs: None,
        }
    }

    /// A crawl on a configuration built in code, start URLs included (the bench commands).
    /// Its state keeps the default settings' record: settings by name cannot be added.
    pub fn configured(config: CrawlConfig) -> Self {
        let record = Record::of(&Settings::resolve([]).expect("the defaults resolve"), &config.seeds);
        let mut c = Crawler::new(Vec::<String>::new());
        c.resolved = Some((config, record));
        c
    }

    /// A spider file's site: its settings (resolved when the file was read), its spider, and
    /// its processors in front of `sinks`.
    pub fn site(site: &SiteSpec, sinks: Vec<Box<dyn Sink>>) -> Self {
        let mut c = Crawler::new(Vec::<String>::new());
        c.resolved = Some((site.crawl.clone(), site.record.clone()));
        c.spider = Some(site.spider.clone());
        c.outputs = Some(sinks.iter().map(|s| s.name()).collect());
        c.sinks = vec![Box::new(ProcessingSink::new(site.processor_chain(), sinks, site.fail_fast))];
        c
    }

    /// Sets a setting by the name a spider file gives it (`"delay"`, `"250ms"`): every
    /// setting of `kumo crawl`, with the same checks.
    pub fn set(mut self, name: &str, value: &str) -> Result<Self, SettingError> {
        self.layers[0].set(name, value)?;
        Ok(self)
    }

    /// Stacks settings over those set so far (the command line's over a program's).
    pub fn layer(mut self, layer: Layer) -> Self {
        self.layers.push(layer);
        self
    }

    /// Where the crawl's state lives (default: memory).
    pub fn store(mut self, store: Store) -> Self {
        self.store = store;
        self
    }

    /// Writes the records to a file, in the format its extension names (`.jsonl`, `.json`,
    /// `.csv`). A new crawl refuses a file that holds data unless [`Crawler::overwrite`].
    pub fn output(mut self, path: impl Into<PathBuf>) -> Self {
        self.files.push(path.into());
        self
    }

    /// Lets a new crawl replace output files that hold data.
    pub fn overwrite(mut self) -> Self {
        self.existing = Existing::Replace;
        self
    }

    /// Gives the records to `sink` too.
    pub fn sink(mut self, sink: impl Sink + 'static) -> Self {
        self.sinks.push(Box::new(sink));
        self
    }

    /// Reads each page with `spider` (its items and links) instead of writing page records.
    pub fn spider(mut self, spider: impl Analyzer + 'static) -> Self {
        self.spider = Some(Arc::new(spider));
        self
    }

    /// Reads each page with a spider shared with others (one loaded from a spider file).
    pub fn shared_spider(mut self, spider: Arc<dyn Analyzer>) -> Self {
        self.spider = Some(spider);
        self
    }

    /// Reads each page with a Colly-style [`Collector`], its `on_request` callbacks included.
    pub fn collector(mut self, collector: Collector) -> Self {
        self.listeners.extend(collector.request_listener());
        self.spider(collector)
    }

    /// Calls `f` before each page is fetched (retries included), as a collector's
    /// `on_request` does.
    pub fn on_request(mut self, f: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        self.listeners.extend(Collector::new().on_request(f).request_listener());
        self
    }

    /// What the crawl starts from, in words, which a state resumes only for the same crawl
    /// (default: its start URLs).
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// What else workers sharing the crawl in Redis must agree on (a spider file's hash).
    pub fn config_id(mut self, id: impl Into<String>) -> Self {
        self.config_id = Some(id.into());
        self
    }

    /// Resolves and checks the settings and opens the output files: nothing is opened for a
    /// refused crawl.
    pub fn prepare(self) -> Result<Plan, CrawlerError> {
        let (mut config, record) = match self.resolved {
            Some(resolved) => {
                if let Some((name, _)) = self.layers.iter().flat_map(Layer::iter).next() {
                    return Err(CrawlerError::Resolved(name.to_string()));
                }
                resolved
            }
            None => {
                let settings = Settings::resolve(&self.layers)?;
                let mut config = settings.crawl_config()?;
                config.seeds = seeds(&self.seeds)?;
                let starts: Vec<&str> = config.starts().map(Url::as_str).collect();
                let record = Record::of(&settings, &starts);
                (config, record)
            }
        };
        config.check()?;
        for l in self.listeners {
            config.listeners.push(l);
        }
        let starts: Vec<Url> = config.starts().cloned().collect();
        let mut plan = Plan::new(config, record, self.store, self.spider);
        plan.origin = self.origin.unwrap_or_else(|| crate::store::url_origin(&starts));
        plan.config_id = self.config_id.unwrap_or_else(|| "urls".into());
        for sink in open_files(&self.files, self.existing)?.into_iter().chain(self.sinks) {
            plan.sink(sink);
        }
        if let Some(outputs) = self.outputs {
            plan.outputs = outputs;
        }
        Ok(plan)
    }

    /// Opens the state and the outputs and readies the engine, not yet started: watch or
    /// steer it through [`Crawl::engine`], then [`Crawl::start`] and [`Crawl::wait`].
    pub async fn build(self) -> Result<Crawl, CrawlerError> {
        self.prepare()?.open().await
    }

    /// Runs the crawl to its end (or its limits) and returns its summary.
    pub async fn run(self) -> Result<Summary, CrawlerError> {
        self.build().await?.run(None).await
    }
}

/// Start URLs, parsed (`CrawlConfig::check` then refuses one that is not http or https, or
/// has no host).
fn seeds(raw: &[String]) -> Result<Vec<Url>, CrawlerError> {
    raw.iter()
        .map(|s| Url::parse(s.trim()).map_err(|e| CrawlerError::Seed { url: s.clone(), why: e.to_string() }))
        .collect()
}

/// The output files, each in the format its name gives.
fn open_files(files: &[PathBuf], existing: Existing) -> Result<Vec<Box<dyn Sink>>, CrawlerError> {
    files
        .iter()
        .map(|path| {
            let format =
                FileFormat::named_by(path).ok_or_else(|| CrawlerError::OutputFormat(path.clone()))?;
            let sink: Box<dyn Sink> = match format {
                FileFormat::JsonLines => Box::new(JsonLinesSink::create_with(path, existing)?),
                FileFormat::JsonArray => Box::new(JsonArraySink::create_with(path, existing)?),
                FileFormat::Csv => Box::new(CsvSink::create_with(path, None, existing)?),
            };
            Ok(sink)
        })
        .collect()
}
