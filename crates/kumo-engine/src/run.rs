//! One run of the crawl: the scheduler loop and the stage tasks around it.
//!
//! ```text
//!  scheduler ──lease──▶ [bounded] ──▶ downloader tasks ──▶ [bounded] ──▶ parser tasks
//!      ▲                                                                     │
//!      └──────────────── [bounded] page results (acks + discoveries) ◀───────┘
//!      │
//!      └── items, after the frontier committed the page ──▶ [bounded] ──▶ pipeline task ──▶ sinks
//! ```
//! The scheduler alone talks to the frontier, so completions batch into group commits. It
//! leases only while fewer than `concurrency` requests are out, so the lease channel never
//! fills and no stage spawns unbounded work. The crawl ends exactly when the frontier is empty
//! and nothing is in flight.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use kumo_core::{
    ErrorKind, Fingerprint, Item, ModuleCounters, ModuleId, ModuleKind, ModuleSummary, Request, Response,
    SkipReason, Stage,
};
use kumo_downloader::{Downloader, FetchError};
use kumo_frontier::{Completion, FailureRecord, Frontier, FrontierStats, Lease, LeaseId, Readiness, Scope};
use kumo_pipeline::Pipeline;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::analyze::Analyzer;
use crate::summary::{Modules, StopCause};
use crate::{CrawlConfig, CrawlError, ErrorStream, Progress, Status, StatusCell, StopMode, Summary};

/// The parts of an initialized engine; a run borrows them and gives them back.
pub(crate) struct Parts {
    pub cfg: Arc<CrawlConfig>,
    pub scope: Arc<Scope>,
    pub frontier: Arc<dyn Frontier>,
    pub downloader: Arc<Downloader>,
    pub analyzer: Arc<dyn Analyzer>,
    pub analyzer_modules: Vec<Arc<AnalyzerModule>>,
    /// Taken by a run and put back at its end. A mutex only so `Parts` is `Sync`.
    pub pipeline: std::sync::Mutex<Option<Pipeline>>,
    pub errors: Arc<ErrorStream>,
    pub progress: Arc<Progress>,
    pub status: Arc<StatusCell>,
}

/// One parser task's identity and counters.
pub(crate) struct AnalyzerModule {
    pub id: ModuleId,
    pub counters: ModuleCounters,
}

impl AnalyzerModule {
    pub fn new(serial: u64) -> Self {
        AnalyzerModule {
            id: ModuleId::new(ModuleKind::Analyzer, serial),
            counters: ModuleCounters::default(),
        }
    }
}

struct Fetched {
    lease: LeaseId,
    result: Result<Response, FetchError>,
}

/// What a parser task reports for one lease.
struct PageResult {
    lease: LeaseId,
    outcome: Outcome,
}

enum Outcome {
    Page {
        status: u16,
        bytes: u64,
        discovered: Vec<(Fingerprint, Request)>,
        items: Vec<Item>,
        skips: Vec<SkipReason>,
    },
    Failed(FetchError),
}

/// Counts the scheduler keeps while it runs.
#[derive(Default)]
struct Tally {
    pages: u64,
    bytes: u64,
    items: u64,
    retries: u64,
    failed: u64,
    by_status: BTreeMap<u16, u64>,
    skipped: BTreeMap<SkipReason, u64>,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn error(&mut self, stage: Stage, kind: ErrorKind) {
        *self.errors.entry(format!("{stage}:{kind}")).or_default() += 1;
    }

    fn skip(&mut self, reason: SkipReason, n: u64) {
        if n > 0 {
            *self.skipped.entry(reason).or_default() += n;
        }
    }
}

/// The checks every discovered request goes through before the frontier sees it.
fn admit(
    scope: &Scope,
    cfg: &CrawlConfig,
    req: Request,
    out: &mut Vec<(Fingerprint, Request)>,
    skips: &mut Vec<SkipReason>,
) {
    match scope.check(&req) {
        Ok(()) => out.push((req.fingerprint(&cfg.canonical, cfg.dedup), req)),
        Err(reason) => skips.push(reason),
    }
}

/// Scope-checks and fingerprints the seeds, and queues them.
pub(crate) async fn seed(
    parts: &Parts,
    tally_skips: &mut BTreeMap<SkipReason, u64>,
) -> Result<(), kumo_frontier::FrontierError> {
    let mut batch = Vec::new();
    let mut skips = Vec::new();
    for url in &parts.cfg.seeds {
        admit(&parts.scope, &parts.cfg, Request::get(url.clone()), &mut batch, &mut skips);
    }
    for s in skips {
        *tally_skips.entry(s).or_default() += 1;
    }
    let report = parts.frontier.push(batch).await?;
    parts.progress.queued.fetch_add(report.added as u64, Ordering::Relaxed);
    Ok(())
}

/// Runs the crawl until it drains, hits a limit, or is stopped. Returns the summary.
pub(crate) async fn run(
    parts: &mut Parts,
    mut stop_rx: watch::Receiver<Option<StopMode>>,
    mut tally_skips: BTreeMap<SkipReason, u64>,
) -> Summary {
    let started = Instant::now();
    let cfg = parts.cfg.clone();
    let concurrency = cfg.concurrency;
    let parsers = parts.analyzer_modules.len();

    let (lease_tx, lease_rx) = async_channel::bounded::<Lease>(concurrency);
    let (fetched_tx, fetched_rx) = async_channel::bounded::<Fetched>(parsers * 4);
    let (result_tx, mut result_rx) = mpsc::channel::<PageResult>(concurrency * 2);
    let (item_tx, mut item_rx) = mpsc::channel::<Vec<Item>>(256);

    let mut workers = JoinSet::new();
    for _ in 0..concurrency {
        let (rx, tx, dl) = (lease_rx.clone(), fetched_tx.clone(), parts.downloader.clone());
        workers.spawn(async move {
            while let Ok(lease) = rx.recv().await {
                let result = dl.fetch(lease.request).await;
                if tx.send(Fetched { lease: lease.id, result }).await.is_err() {
                    break;
                }
            }
        });
    }
    drop((lease_rx, fetched_tx));
    let shared = Arc::new(ParserShared {
        cfg: cfg.clone(),
        scope: parts.scope.clone(),
        analyzer: parts.analyzer.clone(),
        errors: parts.errors.clone(),
    });
    for module in &parts.analyzer_modules {
        let (rx, tx, module, shared) =
            (fetched_rx.clone(), result_tx.clone(), module.clone(), shared.clone());
        workers.spawn(async move {
            while let Ok(f) = rx.recv().await {
                let outcome = match f.result {
                    Ok(resp) => shared.analyze(&module, resp),
                    Err(e) => Outcome::Failed(e),
                };
                if tx.send(PageResult { lease: f.lease, outcome }).await.is_err() {
                    break;
                }
            }
        });
    }
    drop((fetched_rx, result_tx));

    let mut pipeline = parts
        .pipeline
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .expect("pipeline present between runs");
    let pipe_errors = parts.errors.clone();
    let pipe_task = tokio::spawn(async move {
        let mut failed = BTreeMap::<String, u64>::new();
        let mut report = |pipeline: &Pipeline, e: kumo_pipeline::SinkError| {
            *failed.entry(format!("{}:{}", Stage::Pipeline, ErrorKind::Io)).or_default() += 1;
            pipe_errors.send(CrawlError {
                stage: Stage::Pipeline,
                kind: ErrorKind::Io,
                module: Some(pipeline.id().clone()),
                url: None,
                message: e.to_string(),
            });
        };
        while let Some(batch) = item_rx.recv().await {
            for e in pipeline.send(&batch).await {
                report(&pipeline, e);
            }
        }
        for e in pipeline.flush().await {
            report(&pipeline, e);
        }
        (pipeline, failed)
    });

    let mut tally = Tally::default();
    tally.skipped.append(&mut tally_skips);
    let mut in_flight = 0usize;
    let mut leased_total = 0u64;
    let mut cause: Option<StopCause> = None;
    let mut stopping = false;
    let deadline = cfg.max_duration.map(|d| tokio::time::Instant::now() + d);
    let progress = parts.progress.clone();
    let frontier = parts.frontier.clone();

    loop {
        match *stop_rx.borrow_and_update() {
            Some(StopMode::Now) => {
                cause = Some(StopCause::StoppedNow);
                break;
            }
            Some(StopMode::Graceful) if !stopping => {
                stopping = true;
                cause.get_or_insert(StopCause::Stopped);
            }
            _ => {}
        }
        let page_cap_hit = cfg.max_pages != 0 && leased_total >= cfg.max_pages;
        if page_cap_hit && !stopping {
            stopping = true;
            cause.get_or_insert(StopCause::MaxPages);
        }
        if !stopping && in_flight < concurrency {
            let mut want = concurrency - in_flight;
            if cfg.max_pages != 0 {
                want = want.min((cfg.max_pages - leased_total) as usize);
            }
            match frontier.lease(want).await {
                Ok(leases) => {
                    for l in leases {
                        in_flight += 1;
                        leased_total += 1;
                        // Cannot block: the channel holds `concurrency` and fewer are out.
                        if lease_tx.send(l).await.is_err() {
                            break;
                        }
                    }
                }
                Err(e) => {
                    storage_error(parts, &mut tally, e);
                    cause = Some(StopCause::StorageError);
                    stopping = true;
                }
            }
            progress.in_flight.store(in_flight as u64, Ordering::Relaxed);
        }
        let readiness = if stopping {
            Readiness::Empty
        } else {
            match frontier.readiness().await {
                Ok(r) => r,
                Err(e) => {
                    storage_error(parts, &mut tally, e);
                    cause = Some(StopCause::StorageError);
                    stopping = true;
                    Readiness::Empty
                }
            }
        };
        if in_flight == 0 && (stopping || readiness == Readiness::Empty) {
            cause.get_or_insert(StopCause::Drained);
            break;
        }
        let wake = match readiness {
            Readiness::At(t) if in_flight < concurrency => Some(tokio::time::Instant::from_std(t)),
            // Leasable now but nothing was handed out: a short pause avoids spinning.
            Readiness::Now if in_flight < concurrency => {
                Some(tokio::time::Instant::now() + Duration::from_millis(1))
            }
            _ => None,
        };
        tokio::select! {
            first = result_rx.recv() => {
                let Some(first) = first else { break };
                let mut batch = vec![first];
                while batch.len() < 256 {
                    match result_rx.try_recv() {
                        Ok(r) => batch.push(r),
                        Err(_) => break,
                    }
                }
                in_flight -= batch.len();
                progress.in_flight.store(in_flight as u64, Ordering::Relaxed);
                handle_results(parts, &cfg, batch, &mut tally, &item_tx).await;
            }
            _ = tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {}
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() && !stopping => {
                stopping = true;
                cause.get_or_insert(StopCause::MaxDuration);
            }
            changed = stop_rx.changed() => {
                if changed.is_err() { stopping = true; cause.get_or_insert(StopCause::Stopped); }
            }
        }
    }

    parts.status.set(Status::Stopping);
    drop(lease_tx);
    if cause == Some(StopCause::StoppedNow) {
        // In-flight leases are abandoned here; a persistent frontier hands them out again.
        workers.abort_all();
    }
    drop(result_rx);
    while workers.join_next().await.is_some() {}
    drop(item_tx);
    let (pipeline, pipe_failed) = match pipe_task.await {
        Ok(v) => v,
        Err(e) => panic!("pipeline task panicked: {e}"),
    };
    for (k, v) in pipe_failed {
        *tally.errors.entry(k).or_default() += v;
    }
    let pipeline_summary = ModuleSummary {
        id: pipeline.id().clone(),
        counts: pipeline.counters().snapshot(),
        extra: serde_json::json!({ "sinks": pipeline.sink_names() }),
    };
    *parts.pipeline.lock().unwrap_or_else(|e| e.into_inner()) = Some(pipeline);

    let frontier_stats = frontier.stats().await.unwrap_or_else(|_| FrontierStats::default());
    let elapsed = started.elapsed().as_secs_f64();
    let downloader = &parts.downloader;
    Summary {
        status: Status::Stopped,
        stopped_by: cause.unwrap_or(StopCause::Drained),
        seeds: cfg.seeds.iter().map(|u| u.to_string()).collect(),
        elapsed_secs: elapsed,
        pages: tally.pages,
        pages_per_sec: if elapsed > 0.0 { tally.pages as f64 / elapsed } else { 0.0 },
        bytes: tally.bytes,
        items: tally.items,
        by_status: tally.by_status,
        skipped: tally.skipped,
        errors: tally.errors,
        errors_dropped: parts.errors.dropped(),
        retries: tally.retries,
        failed: tally.failed,
        frontier: frontier_stats,
        modules: Modules {
            downloaders: vec![ModuleSummary {
                id: downloader.id().clone(),
                counts: downloader.counters().snapshot(),
                extra: serde_json::Value::Null,
            }],
            analyzers: parts
                .analyzer_modules
                .iter()
                .map(|m| ModuleSummary {
                    id: m.id.clone(),
                    counts: m.counters.snapshot(),
                    extra: serde_json::Value::Null,
                })
                .collect(),
            pipelines: vec![pipeline_summary],
        },
    }
}

struct ParserShared {
    cfg: Arc<CrawlConfig>,
    scope: Arc<Scope>,
    analyzer: Arc<dyn Analyzer>,
    errors: Arc<ErrorStream>,
}

impl ParserShared {
    fn analyze(&self, module: &AnalyzerModule, resp: Response) -> Outcome {
        module.counters.called();
        module.counters.accepted();
        let mut discovered = Vec::new();
        let mut skips = Vec::new();
        let analysis = self.analyzer.analyze(&resp);
        for req in analysis.requests {
            admit(&self.scope, &self.cfg, req, &mut discovered, &mut skips);
        }
        // A redirect is a new request (same depth) that goes through scope and
        // de-duplication like any link, so every hop is checked.
        match resp.redirect_location() {
            Some(Ok(target)) => {
                admit(&self.scope, &self.cfg, resp.request.redirect_to(target), &mut discovered, &mut skips)
            }
            Some(Err(e)) => self.errors.send(CrawlError {
                stage: Stage::Parser,
                kind: ErrorKind::BadRedirect,
                module: Some(module.id.clone()),
                url: Some(resp.url.to_string()),
                message: format!("bad Location header: {e}"),
            }),
            None => {}
        }
        module.counters.finished(true);
        Outcome::Page {
            status: resp.status.as_u16(),
            bytes: resp.body.len() as u64,
            discovered,
            items: analysis.items,
            skips,
        }
    }
}

fn storage_error(parts: &Parts, tally: &mut Tally, e: kumo_frontier::FrontierError) {
    tally.error(Stage::Scheduler, ErrorKind::Storage);
    parts.progress.errors.fetch_add(1, Ordering::Relaxed);
    parts.errors.send(CrawlError {
        stage: Stage::Scheduler,
        kind: ErrorKind::Storage,
        module: None,
        url: None,
        message: e.to_string(),
    });
}

/// Applies a batch of page results: one frontier commit, then the items to the pipeline.
async fn handle_results(
    parts: &Parts,
    cfg: &CrawlConfig,
    batch: Vec<PageResult>,
    tally: &mut Tally,
    item_tx: &mpsc::Sender<Vec<Item>>,
) {
    let mut completions = Vec::with_capacity(batch.len());
    let mut items = Vec::new();
    for r in batch {
        match r.outcome {
            Outcome::Page { status, bytes, discovered, items: mut found, skips } => {
                tally.pages += 1;
                tally.bytes += bytes;
                *tally.by_status.entry(status).or_default() += 1;
                for s in skips {
                    tally.skip(s, 1);
                }
                tally.items += found.len() as u64;
                items.append(&mut found);
                completions.push(Completion::Done { lease: r.lease, discovered });
            }
            Outcome::Failed(e) => {
                tally.error(Stage::Downloader, e.kind);
                parts.progress.errors.fetch_add(1, Ordering::Relaxed);
                let retries = e.request.retries;
                parts.errors.send(CrawlError {
                    stage: Stage::Downloader,
                    kind: e.kind,
                    module: Some(parts.downloader.id().clone()),
                    url: Some(e.request.url.to_string()),
                    message: e.message.clone(),
                });
                if e.kind.is_retryable() && retries < cfg.max_retries {
                    tally.retries += 1;
                    let after = cfg.retry_backoff.saturating_mul(1 << retries.min(16));
                    completions.push(Completion::Retry { lease: r.lease, after });
                } else {
                    tally.failed += 1;
                    let failure = FailureRecord {
                        url: e.request.url.to_string(),
                        kind: e.kind,
                        message: e.message,
                        attempts: retries + 1,
                        last_status: None,
                        at: SystemTime::now(),
                    };
                    completions.push(Completion::Failed { lease: r.lease, failure });
                }
            }
        }
    }
    let progress = &parts.progress;
    match parts.frontier.complete(completions).await {
        Ok(report) => {
            tally.skip(SkipReason::Seen, report.seen as u64);
        }
        Err(e) => storage_error(parts, tally, e),
    }
    if let Ok(stats) = parts.frontier.stats().await {
        progress.queued.store(stats.queued as u64, Ordering::Relaxed);
    }
    progress.pages.store(tally.pages, Ordering::Relaxed);
    progress.items.store(tally.items, Ordering::Relaxed);
    if !items.is_empty() {
        // Back-pressure: a slow sink slows the scheduler, which slows leasing.
        let _ = item_tx.send(items).await;
    }
}
