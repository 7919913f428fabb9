//! The engine's public face: init → start → (stop) → wait, guarded by the status machine.

use std::collections::BTreeMap;
use std::sync::Arc;

use kumo_core::{AnswerStorage, AnswerStorageError, CookieStorage, CookieStorageError};
use kumo_downloader::{BuildError, CookieJar, DnsConfig, DnsResolver, Downloader, DownloaderConfig};
use kumo_frontier::robots::RobotsStore;
use kumo_frontier::{Frontier, FrontierError, Scope, ScopeError};
use kumo_pipeline::{ItemJournal, Pipeline, Sink};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::Steer;
use crate::analyze::{Analyzer, PageAnalyzer};
use crate::analyzer_registrar::AnalyzerRegistrar;
use crate::registrar::{Registrar, ScoreFn};
use crate::robots::RobotsCache;
use crate::run::{Parts, run, seed};
use crate::throttle::Throttle;
use crate::traps::TrapWatch;
use crate::writer::open_pipeline;
use crate::{
    ConfigError, CrawlConfig, CrawlError, ErrorStream, Progress, Status, StatusCell, Summary, TransitionError,
};

/// How to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Stop leasing, finish what is in flight, commit it.
    Graceful,
    /// Abandon what is in flight (a persistent frontier hands it out again on resume).
    Now,
}

/// Why the engine refused a call.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine's status does not allow the call (see
    /// [`check_transition`](crate::check_transition)).
    #[error(transparent)]
    Transition(#[from] TransitionError),
    // The cause is in the message and is not also the error's source: callers that print an
    // error with its sources (`{:#}` with anyhow) would otherwise say it twice.
    /// [`CrawlConfig::check`] refused the settings.
    #[error("bad crawl settings: {0}")]
    Config(ConfigError),
    /// The scope settings do not build (a bad pattern, say).
    #[error("bad scope settings: {0}")]
    Scope(ScopeError),
    /// A downloader (or the crawl's DNS resolver) could not be built.
    #[error(transparent)]
    Downloader(#[from] BuildError),
    /// The frontier failed while a run was being started (queueing the seeds, reading what
    /// it kept).
    #[error("frontier: {0}")]
    Frontier(FrontierError),
    /// No run to wait for ([`Engine::wait`] before a start, or twice), or no crawl built to
    /// start.
    #[error("the engine is not running")]
    NotRunning,
    /// The outputs could not be opened, or resumed from the item journal, at the first start.
    #[error("cannot open the outputs: {0}")]
    Pipeline(String),
    /// The cookie storage could not be read into the crawl's jar.
    #[error(transparent)]
    Cookies(#[from] CookieStorageError),
    /// The DNS answer storage could not be read.
    #[error(transparent)]
    Answers(#[from] AnswerStorageError),
    /// The WARC files could not be opened, or cut back to the last commit.
    #[error("cannot open the WARC output: {0}")]
    Archive(String),
    /// [`Engine::init_with_analyzers`] was given no analyzer.
    #[error("a crawl needs at least one analyzer; none was given")]
    NoAnalyzer,
}

impl From<ConfigError> for EngineError {
    fn from(e: ConfigError) -> Self {
        EngineError::Config(e)
    }
}

impl From<ScopeError> for EngineError {
    fn from(e: ScopeError) -> Self {
        EngineError::Scope(e)
    }
}

impl From<FrontierError> for EngineError {
    fn from(e: FrontierError) -> Self {
        EngineError::Frontier(e)
    }
}

/// Stops a running engine from anywhere (a signal handler, a status endpoint).
#[derive(Debug, Clone)]
pub struct Stopper {
    status: Arc<StatusCell>,
    tx: Arc<watch::Sender<Option<StopMode>>>,
}

impl Stopper {
    /// Asks the run to stop. A graceful stop moves the engine to `stopping` (refused unless
    /// started); a stop-now may follow a graceful one to cut it short.
    pub fn stop(&self, mode: StopMode) -> Result<(), EngineError> {
        match mode {
            StopMode::Graceful => {
                self.status.begin(Status::Stopping)?;
            }
            StopMode::Now => {
                if !matches!(self.status.get(), Status::Started | Status::Stopping) {
                    self.status.begin(Status::Stopping)?;
                }
            }
        }
        self.tx.send_replace(Some(mode));
        Ok(())
    }

    /// The engine's status now.
    pub fn status(&self) -> Status {
        self.status.get()
    }

    /// Passes on every stop request sent on `requests` (a signal handler's: graceful, then
    /// maybe now) until its sender goes away. Requests after the run ended are ignored.
    pub async fn follow(self, mut requests: watch::Receiver<Option<StopMode>>) {
        loop {
            let mode = *requests.borrow_and_update();
            if let Some(mode) = mode {
                // Refused only when the engine has already stopped: nothing left to do.
                let _ = self.stop(mode);
            }
            if requests.changed().await.is_err() {
                return;
            }
        }
    }
}

/// Pauses and resumes a running engine from anywhere: paused, it hands out no new request;
/// what is in flight finishes and is committed. A pause outlives a stop and a new start.
#[derive(Debug, Clone)]
pub struct Pauser {
    tx: Arc<watch::Sender<bool>>,
}

impl Pauser {
    /// Stops handing out requests; pausing a paused engine does nothing.
    pub fn pause(&self) {
        self.tx.send_replace(true);
    }

    /// Hands out requests again.
    pub fn resume(&self) {
        self.tx.send_replace(false);
    }

    /// Whether a pause was asked for and not yet undone.
    pub fn is_paused(&self) -> bool {
        *self.tx.borrow()
    }
}

/// The crawl engine (the seeds' scheduler).
pub struct Engine {
    status: Arc<StatusCell>,
    progress: Arc<Progress>,
    parts: Option<Parts>,
    error_rx: Option<mpsc::Receiver<CrawlError>>,
    stop_tx: Arc<watch::Sender<Option<StopMode>>>,
    pause_tx: Arc<watch::Sender<bool>>,
    /// The summary so far, published while the run goes on, and the last one after it.
    live_tx: Arc<watch::Sender<Option<Arc<crate::Live>>>>,
    /// The inbox of the run under way, for [`Steer`].
    inbox: crate::steer::Inbox,
    running: Option<JoinHandle<(Parts, Summary)>>,
    registrar: Option<Arc<Registrar>>,
    journal: Option<Arc<dyn ItemJournal>>,
    cookies: Option<Arc<dyn CookieStorage>>,
    robots_store: Option<Arc<dyn RobotsStore>>,
    /// Where the crawl's resolver keeps its DNS answers for the next run.
    answers: Option<Arc<dyn AnswerStorage>>,
    /// The analyzers' score calculator; `None` for the default.
    analyzer_score: Option<ScoreFn>,
    /// The sinks are opened (fresh or resumed) once per initialization, on the first start.
    pipeline_opened: bool,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine {
    /// An engine in `uninitialized` status: give it a crawl with [`Engine::init`].
    pub fn new() -> Self {
        let (stop_tx, _) = watch::channel(None);
        Engine {
            status: Arc::new(StatusCell::default()),
            progress: Arc::new(Progress::default()),
            parts: None,
            error_rx: None,
            stop_tx: Arc::new(stop_tx),
            pause_tx: Arc::new(watch::channel(false).0),
            live_tx: Arc::new(watch::channel(None).0),
            inbox: crate::steer::Inbox::default(),
            running: None,
            registrar: None,
            journal: None,
            cookies: None,
            robots_store: None,
            answers: None,
            analyzer_score: None,
            pipeline_opened: false,
        }
    }

    /// Makes the pipeline resume from and checkpoint to `journal` (the durable store's item
    /// journal, normally the same object as the frontier), so outputs survive a crash with
    /// every item exactly once. Takes effect at the next `init`.
    pub fn with_journal(mut self, journal: Arc<dyn ItemJournal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Keeps the crawl's cookies in `storage` (the durable store, so they survive a
    /// restart): the one jar all the crawl's downloaders share is loaded from it at `init`
    /// and writes through to it. Without, the jar is in memory. Takes effect at the next
    /// `init`; ignored when the settings turn cookies off or bring their own jar.
    pub fn with_cookie_storage(mut self, storage: Arc<dyn CookieStorage>) -> Self {
        self.cookies = Some(storage);
        self
    }

    /// Keeps the DNS answers of the crawl's own resolver (when it has one: DNS servers or
    /// overrides given, or per-IP politeness) in `storage`, and starts from those an earlier
    /// run kept there that still stand.
    pub fn with_answer_storage(mut self, storage: Arc<dyn AnswerStorage>) -> Self {
        self.answers = Some(storage);
        self
    }

    /// Shares robots.txt answers with the other workers of a crawl through `store` (a crawl
    /// in Redis), so each origin's robots.txt is fetched once for the whole crawl. Takes
    /// effect at the next `init`.
    pub fn with_robots_store(mut self, store: Arc<dyn RobotsStore>) -> Self {
        self.robots_store = Some(store);
        self
    }

    /// Scores the registered analyzers with `score` (lower wins) instead of
    /// [`crate::default_score`], when each page picks one. Takes effect at the next `init`.
    pub fn with_analyzer_score(mut self, score: ScoreFn) -> Self {
        self.analyzer_score = Some(score);
        self
    }

    /// The engine's status now.
    pub fn status(&self) -> Status {
        self.status.get()
    }

    /// Checks the settings and builds the modules. On failure the status goes back to what
    /// it was.
    pub fn init(
        &mut self,
        cfg: CrawlConfig,
        frontier: Arc<dyn Frontier>,
        sinks: Vec<Box<dyn Sink>>,
    ) -> Result<(), EngineError> {
        self.init_with(cfg, frontier, sinks, Arc::new(PageAnalyzer))
    }

    /// [`Engine::init`] with a custom analyzer.
    pub fn init_with(
        &mut self,
        cfg: CrawlConfig,
        frontier: Arc<dyn Frontier>,
        sinks: Vec<Box<dyn Sink>>,
        analyzer: Arc<dyn Analyzer>,
    ) -> Result<(), EngineError> {
        self.init_with_analyzers(cfg, frontier, sinks, vec![analyzer])
    }

    /// [`Engine::init`] with several analyzers, registered as `A1`, `A2`, … in this order:
    /// each page goes to the one with the best score (see [`Engine::with_analyzer_score`]).
    /// An empty list is refused ([`EngineError::NoAnalyzer`]).
    pub fn init_with_analyzers(
        &mut self,
        cfg: CrawlConfig,
        frontier: Arc<dyn Frontier>,
        sinks: Vec<Box<dyn Sink>>,
        analyzers: Vec<Arc<dyn Analyzer>>,
    ) -> Result<(), EngineError> {
        let from = self.status.begin(Status::Initializing)?;
        match self.build(cfg, frontier, sinks, analyzers) {
            Ok(()) => {
                self.status.set(Status::Initialized);
                Ok(())
            }
            Err(e) => {
                self.status.set(from);
                Err(e)
            }
        }
    }

    fn build(
        &mut self,
        cfg: CrawlConfig,
        frontier: Arc<dyn Frontier>,
        sinks: Vec<Box<dyn Sink>>,
        analyzers: Vec<Arc<dyn Analyzer>>,
    ) -> Result<(), EngineError> {
        let mut analyzers = AnalyzerRegistrar::new(analyzers).ok_or(EngineError::NoAnalyzer)?;
        if let Some(score) = &self.analyzer_score {
            analyzers = analyzers.with_score(score.clone());
        }
        cfg.check()?;
        let mut cfg = cfg;
        // An archive needs the exchanges as they went over the wire.
        cfg.downloader.record |= cfg.warc.is_some();
        // One jar for every downloader of the crawl, over the crawl's cookie storage.
        if cfg.downloader.cookies && cfg.downloader.cookie_jar.is_none() {
            let jar = match &self.cookies {
                Some(storage) => CookieJar::open(storage.clone())?,
                None => CookieJar::in_memory(),
            };
            cfg.downloader.cookie_jar = Some(Arc::new(jar));
        }
        // Per-IP politeness looks every host up before its first request, through the resolver
        // the downloaders connect with: the system's configuration unless one was given.
        if cfg.politeness.per_ip.is_some() && cfg.downloader.dns.is_none() {
            cfg.downloader.dns = Some(Arc::new(DnsResolver::new(DnsConfig::default())?));
        }
        if let (Some(resolver), Some(storage)) = (&cfg.downloader.dns, &self.answers) {
            let taken = resolver.keep_answers_in(storage.clone())?;
            if taken > 0 {
                tracing::info!(names = taken, "DNS answers of an earlier run stand");
            }
        }
        let starts: Vec<_> = cfg.starts().cloned().collect();
        let scope = Scope::new(&cfg.scope, &starts)?;
        // One downloader per proxy (D1, D2, …), or one direct downloader; then one per proxy
        // the limit rules name that is not a crawl-wide one already.
        let proxied = |serial: usize, p: &String| {
            let dc = DownloaderConfig { proxy: Some(p.clone()), ..cfg.downloader.clone() };
            Downloader::new(serial as u64, dc)
        };
        let downloaders = if cfg.proxies.is_empty() {
            vec![Downloader::new(1, cfg.downloader.clone())?]
        } else {
            cfg.proxies.iter().enumerate().map(|(i, p)| proxied(i + 1, p)).collect::<Result<Vec<_>, _>>()?
        };
        let rule_proxies: Vec<Vec<String>> = cfg
            .politeness
            .rules
            .iter()
            .filter(|r| !r.proxies().is_empty())
            .map(|r| r.proxies().to_vec())
            .collect();
        let mut own: Vec<&String> = Vec::new();
        for p in rule_proxies.iter().flatten() {
            if !cfg.proxies.contains(p) && !own.contains(&p) {
                own.push(p);
            }
        }
        let rule_downloaders = own
            .into_iter()
            .enumerate()
            .map(|(i, p)| proxied(downloaders.len() + i + 1, p))
            .collect::<Result<Vec<_>, _>>()?;
        let registrar =
            Arc::new(Registrar::new(downloaders).with_rule_downloaders(rule_downloaders, rule_proxies));
        let robots = cfg.robots.obey.then(|| {
            // A robots.txt answering 5xx pauses its origin like a server's own pause, so the
            // same cap holds.
            let mut robots_cfg = cfg.robots.clone();
            robots_cfg.unavailable_backoff = robots_cfg.unavailable_backoff.min(cfg.max_host_pause);
            let d = &cfg.downloader;
            robots_cfg.claim_for.get_or_insert(d.timeout.max(d.connect_timeout + robots_cfg.max_crawl_delay));
            let cache = RobotsCache::new(robots_cfg, cfg.downloader.user_agent.robots_name());
            Arc::new(cache.with_store(self.robots_store.clone()))
        });
        let (errors, error_rx) = ErrorStream::new(cfg.error_buffer);
        self.progress = Arc::new(Progress::default());
        let cfg_throttle = cfg.auto_throttle;
        let trap_warn_pages = cfg.trap_warn_pages;
        self.parts = Some(Parts {
            cfg: Arc::new(cfg),
            scope: Arc::new(scope),
            frontier,
            registrar: registrar.clone(),
            robots,
            analyzers: Arc::new(analyzers),
            pipeline: std::sync::Mutex::new(Some(Pipeline::new(1, sinks, false))),
            journal: self.journal.clone(),
            errors: Arc::new(errors),
            progress: self.progress.clone(),
            status: self.status.clone(),
            throttle: cfg_throttle.map(Throttle::new),
            traps: TrapWatch::new(trap_warn_pages),
            pauses: Default::default(),
            recent_failures: Default::default(),
            warc: None,
            warc_failure: Arc::default(),
            commit_failure: Arc::default(),
            backlog: Vec::new(),
        });
        self.error_rx = Some(error_rx);
        self.registrar = Some(registrar);
        self.pipeline_opened = false;
        Ok(())
    }

    /// The error stream. It can be taken once per initialization; nobody reading it never
    /// slows the crawl.
    pub fn errors(&mut self) -> Option<mpsc::Receiver<CrawlError>> {
        self.error_rx.take()
    }

    /// The downloaders of the initialized crawl, to register or unregister some while it runs.
    pub fn registrar(&self) -> Option<Arc<Registrar>> {
        self.registrar.clone()
    }

    /// The live counters of the crawl. Each `init` makes new ones: take them after it.
    pub fn progress(&self) -> Arc<Progress> {
        self.progress.clone()
    }

    /// A handle that stops this engine's runs, this one and those after it.
    pub fn stopper(&self) -> Stopper {
        Stopper { status: self.status.clone(), tx: self.stop_tx.clone() }
    }

    /// A handle that pauses and resumes this engine, whatever run is under way.
    pub fn pauser(&self) -> Pauser {
        Pauser { tx: self.pause_tx.clone() }
    }

    /// Steers the run under way through its scheduler (re-queue failures, look at a host's
    /// queue); between runs its requests fail with [`crate::SteerError::NotRunning`].
    pub fn steer(&self) -> Steer {
        Steer::new(self.inbox.clone())
    }

    /// The summary so far, the busiest hosts and the last failures: published twice a second
    /// while the run goes on (while someone watches), and the final ones when it ends. `None`
    /// before the first.
    pub fn live(&self) -> watch::Receiver<Option<Arc<crate::Live>>> {
        self.live_tx.subscribe()
    }

    /// Queues the seeds and starts the stages. A stopped engine resumes from its frontier.
    pub async fn start(&mut self) -> Result<(), EngineError> {
        let from = self.status.begin(Status::Starting)?;
        let Some(mut parts) = self.parts.take() else {
            self.status.set(from);
            return Err(EngineError::NotRunning);
        };
        if !self.pipeline_opened {
            if let Err(e) = open_pipeline(&mut parts).await {
                self.parts = Some(parts);
                self.status.set(from);
                return Err(EngineError::Pipeline(e));
            }
            self.pipeline_opened = true;
        }
        // Each run starts without the last one's failed commit (its store decides whether it
        // takes writes again).
        parts.commit_failure = Arc::default();
        if let Err(e) = open_archive(&mut parts).await {
            self.parts = Some(parts);
            self.status.set(from);
            return Err(e);
        }
        let mut skips = BTreeMap::new();
        if let Err(e) = seed(&mut parts, &mut skips).await {
            self.parts = Some(parts);
            self.status.set(from);
            return Err(e.into());
        }
        self.stop_tx.send_replace(None);
        let stop_rx = self.stop_tx.subscribe();
        let (steer_tx, steer) = tokio::sync::mpsc::channel(8);
        *self.inbox.lock().unwrap_or_else(|e| e.into_inner()) = Some(steer_tx);
        let watch =
            crate::run::Watchers { pause: self.pause_tx.subscribe(), live: self.live_tx.clone(), steer };
        let status = self.status.clone();
        // Started before the run exists: a run that ends at once must not have its
        // `stopped` overwritten.
        self.status.set(Status::Started);
        self.running = Some(tokio::spawn(async move {
            let mut parts = parts;
            let live = watch.live.clone();
            let summary = run(&mut parts, stop_rx, watch, skips).await;
            status.set(Status::Stopped);
            let hosts = crate::live::busiest(parts.frontier.hosts().await.unwrap_or_default());
            let crawl = crate::live::crawl_totals(parts.frontier.as_ref()).await;
            live.send_replace(Some(Arc::new(parts.live(summary.clone(), hosts, crawl))));
            (parts, summary)
        }));
        Ok(())
    }

    /// Stops the run (see [`Stopper::stop`]).
    pub fn stop(&self, mode: StopMode) -> Result<(), EngineError> {
        self.stopper().stop(mode)
    }

    /// Waits for the run to end and returns its summary. The engine is then `stopped`.
    pub async fn wait(&mut self) -> Result<Summary, EngineError> {
        let handle = self.running.take().ok_or(EngineError::NotRunning)?;
        let (parts, summary) = match handle.await {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        self.parts = Some(parts);
        Ok(summary)
    }

    /// Starts an initialized engine, passes on the stop requests sent on `stop` (a signal
    /// handler's) while it runs, and waits for its summary: the one place a crawl's run is
    /// driven from start to end, for the command, spider files, the benches and the library.
    pub async fn run(
        &mut self,
        stop: Option<watch::Receiver<Option<StopMode>>>,
    ) -> Result<Summary, EngineError> {
        self.start().await?;
        let relay = stop.map(|stop| tokio::spawn(self.stopper().follow(stop)));
        let summary = self.wait().await;
        if let Some(r) = relay {
            r.abort();
        }
        summary
    }
}

/// Opens the WARC files of a crawl that archives, where its last commit left them (cut back
/// to there: what was appended after it belongs to pages that are fetched again).
async fn open_archive(parts: &mut Parts) -> Result<(), EngineError> {
    let Some(cfg) = parts.cfg.warc.clone() else { return Ok(()) };
    parts.warc_failure = Arc::default();
    if parts.warc.is_some() {
        return Ok(());
    }
    let saved = parts.frontier.saved_counters().await.map_err(EngineError::Frontier)?;
    let position = saved.and_then(|bytes| crate::results::Tally::restore(&bytes).warc);
    let opened = tokio::task::spawn_blocking(move || kumo_warc::WarcWriter::open(cfg, position.as_ref()))
        .await
        .map_err(|e| EngineError::Archive(e.to_string()))?
        .map_err(|e| EngineError::Archive(e.to_string()))?;
    parts.warc = Some(Arc::new(std::sync::Mutex::new(opened)));
    Ok(())
}
