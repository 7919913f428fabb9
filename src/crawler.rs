//! The crawl builder: start URLs, settings by name, where the state lives, where items go and
//! what reads the pages, put together in one place.
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

use std::path::PathBuf;
use std::sync::Arc;

use kumo_core::{Request, Url};
use kumo_engine::{Analyzer, CrawlConfig, Engine, EngineError, Listener, Summary};
use kumo_pipeline::{CsvSink, Existing, FileFormat, JsonArraySink, JsonLinesSink, Sink, SinkError};
use kumo_settings::{Change, Layer, Record, SettingError, Settings, Source};
use kumo_spider::Collector;

use crate::store::{Identity, OpenError, Opened, Store};

/// A crawl being put together.
pub struct Crawler {
    seeds: Vec<String>,
    layer: Layer,
    store: Store,
    files: Vec<PathBuf>,
    existing: Existing,
    sinks: Vec<Box<dyn Sink>>,
    spider: Option<Arc<dyn Analyzer>>,
    listeners: Vec<Arc<dyn Listener>>,
}

/// A crawl that could not be put together or run.
#[derive(Debug, thiserror::Error)]
pub enum CrawlerError {
    #[error("start URL {url:?}: {why}")]
    Seed { url: String, why: String },
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Config(#[from] kumo_engine::ConfigError),
    #[error(transparent)]
    Output(#[from] SinkError),
    #[error("{0}: give the file a .jsonl, .json or .csv name")]
    OutputFormat(PathBuf),
    #[error(transparent)]
    Store(#[from] OpenError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl Crawler {
    /// A crawl from these start URLs, with the default settings, in memory, its page records
    /// (or, with a spider, its items) on standard output as JSON Lines.
    pub fn new<S: Into<String>>(seeds: impl IntoIterator<Item = S>) -> Self {
        Crawler {
            seeds: seeds.into_iter().map(Into::into).collect(),
            layer: Layer::new(Source::Library),
            store: Store::memory(),
            files: Vec::new(),
            existing: Existing::Refuse,
            sinks: Vec::new(),
            spider: None,
            listeners: Vec::new(),
        }
    }

    /// Sets a setting by the name a spider file gives it (`"delay"`, `"250ms"`): every
    /// setting of `kumo crawl`, with the same checks.
    pub fn set(mut self, name: &str, value: &str) -> Result<Self, SettingError> {
        self.layer.set(name, value)?;
        Ok(self)
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

    /// Opens the state and the outputs and readies the engine, not yet started: watch or
    /// steer it through [`Crawl::engine`], then [`Crawl::start`] and [`Crawl::wait`].
    pub async fn build(self) -> Result<Crawl, CrawlerError> {
        let settings = Settings::resolve([&self.layer])?;
        let mut cfg = settings.crawl_config()?;
        cfg.seeds = seeds(&self.seeds)?;
        // Checked before anything is opened: a refused crawl leaves no output behind.
        cfg.check()?;
        for l in self.listeners {
            cfg.listeners.push(l);
        }
        let starts: Vec<Url> = cfg.seeds.iter().chain(&cfg.sitemaps).cloned().collect();
        let mut sinks = open_files(&self.files, self.existing)?;
        sinks.extend(self.sinks);
        if sinks.is_empty() {
            sinks.push(Box::new(JsonLinesSink::stdout()));
        }
        let id = Identity {
            outputs: sinks.iter().map(|s| s.name()).collect(),
            origin: crate::store::url_origin(&starts),
            config_id: "urls".into(),
            settings: Record::of(&settings, &starts),
            politeness: cfg.politeness.clone(),
        };
        let opened = self.store.open(&id).await?;
        let mut engine = opened.state.engine();
        let frontier = opened.state.frontier.clone();
        init(&mut engine, cfg, frontier, sinks, self.spider)?;
        Ok(Crawl { engine, opened })
    }

    /// Runs the crawl to its end (or its limits) and returns its summary.
    pub async fn run(self) -> Result<Summary, CrawlerError> {
        self.build().await?.run(None).await
    }
}

fn init(
    engine: &mut Engine,
    cfg: CrawlConfig,
    frontier: Arc<dyn kumo_frontier::Frontier>,
    sinks: Vec<Box<dyn Sink>>,
    spider: Option<Arc<dyn Analyzer>>,
) -> Result<(), EngineError> {
    match spider {
        Some(spider) => engine.init_with(cfg, frontier, sinks, spider),
        None => engine.init(cfg, frontier, sinks),
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

    /// Settings this run changed from those the crawl's last run kept.
    pub fn changed(&self) -> &[Change] {
        &self.opened.changed
    }

    /// Whether the crawl resumed a stored one.
    pub fn resumed(&self) -> bool {
        self.opened.embedded.as_ref().is_some_and(|s| s.resumed())
    }

    pub async fn start(&mut self) -> Result<(), CrawlerError> {
        Ok(self.engine.start().await?)
    }

    /// Runs the crawl to its end (see [`Engine::run`]), passing on the stop requests sent on
    /// `stop`, then leaves its state as [`Crawl::wait`] does.
    pub async fn run(
        mut self,
        stop: Option<tokio::sync::watch::Receiver<Option<kumo_engine::StopMode>>>,
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

#[cfg(all(test, feature = "testsite"))]
mod tests {
    use std::sync::Mutex;

    use kumo_core::Item;
    use kumo_pipeline::CollectSink;
    use kumo_testsite::{ServerBuilder, SiteConfig};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_collector_hears_of_each_request_before_it_is_fetched() {
        let site = SiteConfig { pages: 20, page_bytes: 2_000, ..Default::default() };
        let unique = site.ground_truth().unique_urls;
        let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let titles = CollectSink::new();
        let collector = Collector::new()
            .on_request({
                let asked = asked.clone();
                move |r| asked.lock().unwrap().push(r.url.to_string())
            })
            .on_html("title", |el, ctx| ctx.emit(Item::new().with("title", el.text())))
            .on_html("a[href]", |el, ctx| {
                if let Some(href) = el.attr("href") {
                    ctx.visit(href);
                }
            });
        let summary = Crawler::new([server.url("/index.html")])
            .collector(collector)
            .sink(titles.clone())
            .run()
            .await
            .unwrap();
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), unique, "each page once, robots.txt not among them: {asked:?}");
        let fetched: Vec<String> =
            server.hits().into_iter().filter(|h| h.target != "/robots.txt").map(|h| h.target).collect();
        assert!(asked.iter().all(|u| fetched.iter().any(|t| u.ends_with(t.as_str()))));
        assert_eq!((summary.items, titles.snapshot().len()), (unique as u64, unique));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stored_crawl_resumes_with_the_settings_it_is_given() {
        let site = SiteConfig { pages: 30, page_bytes: 2_000, ..Default::default() };
        let unique = site.ground_truth().unique_urls;
        let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let crawler = |max_pages: &str| {
            Crawler::new([server.url("/index.html")])
                .set("max_pages", max_pages)
                .unwrap()
                .store(Store::dir(dir.path().join("state")))
                .output(dir.path().join("pages.jsonl"))
        };
        let first = crawler("5").build().await.unwrap();
        assert!(!first.resumed() && first.changed().is_empty());
        drop(first); // never started: its state and output are let go
        let summary = crawler("5").run().await.unwrap();
        assert_eq!(summary.pages, 5);
        let mut again = crawler("0").build().await.unwrap();
        assert!(again.resumed());
        assert_eq!(again.changed().iter().map(ToString::to_string).collect::<Vec<_>>(), ["max_pages: 5 → 0"]);
        again.start().await.unwrap();
        let summary = again.wait().await.unwrap();
        assert_eq!(summary.pages as usize, unique, "the rest of the site, counted from the first run");
        let text = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
        assert_eq!(text.lines().count(), unique, "every page once");
    }
}
