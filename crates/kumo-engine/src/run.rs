//! One run of the crawl: the scheduler loop and the stage tasks around it.
//!
//! ```text
//!  scheduler ──lease──▶ [bounded] ──▶ downloader tasks ──▶ [bounded] ──▶ parser tasks
//!      ▲                              (robots.txt check)  │                   │
//!      └──────────────── [bounded] page results ◀─────────┴───────────────────┘
//!                        (acks, discoveries, retries, skips, host adjustments)
//!      │
//!      └── items, after the frontier committed the page ──▶ [bounded] ──▶ pipeline task ──▶ sinks
//! ```
//! The scheduler alone talks to the frontier, so completions batch into group commits; one
//! commit at a time runs beside it (`commit.rs`) while it goes on leasing. It leases only while
//! fewer than `concurrency` requests are out, so the lease channel never fills and no stage
//! spawns unbounded work. The crawl ends exactly when the frontier is empty and nothing is in
//! flight, neither a page nor a commit.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kumo_core::{
    ErrorKind, Fingerprint, ModuleCounters, ModuleId, ModuleKind, ModuleSummary, Request, RequestKind,
    SkipReason, Stage,
};
use kumo_frontier::{Frontier, FrontierStats, Lease, Readiness, Scope};
use kumo_pipeline::{ItemJournal, Pipeline};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::analyze::Analyzer;
use crate::buffers::Gauged;
use crate::commit::{self, Committer};
use crate::group::Group;
use crate::limits::Limits;
use crate::live::{CrawlTotals, Live, LiveHost};
use crate::registrar::Registrar;
use crate::results::{ItemBatch, Tally, storage_error};
use crate::robots::RobotsCache;
use crate::stages::{self, DownloadStage, Fetched, PageResult, ParseStage, admit};
use crate::steer::Order;
use crate::summary::{Modules, StopCause};
use crate::throttle::Throttle;
use crate::traps::TrapWatch;
use crate::writer::{self, OutputFailure};
use crate::{CrawlConfig, ErrorStream, Progress, Status, StatusCell, StopMode, Summary};

/// The parts of an initialized engine; a run borrows them and gives them back.
pub(crate) struct Parts {
    pub cfg: Arc<CrawlConfig>,
    pub scope: Arc<Scope>,
    pub frontier: Arc<dyn Frontier>,
    pub registrar: Arc<Registrar>,
    /// `None` when robots.txt is ignored.
    pub robots: Option<Arc<RobotsCache>>,
    pub analyzer: Arc<dyn Analyzer>,
    pub analyzer_modules: Vec<Arc<AnalyzerModule>>,
    /// Taken by a run and put back at its end. A mutex only so `Parts` is `Sync`.
    pub pipeline: std::sync::Mutex<Option<Pipeline>>,
    /// The durable item journal the pipeline checkpoints against, if the frontier keeps one.
    pub journal: Option<Arc<dyn ItemJournal>>,
    pub errors: Arc<ErrorStream>,
    pub progress: Arc<Progress>,
    pub status: Arc<StatusCell>,
    /// The adaptive throttle's state, when it is on. Only the scheduler touches it; a mutex
    /// only so `Parts` is `Sync`.
    pub throttle: Option<std::sync::Mutex<Throttle>>,
    /// Fetched pages by URL shape, for the spider-trap warning. Only the scheduler touches
    /// it; a mutex only so `Parts` is `Sync`.
    pub traps: std::sync::Mutex<TrapWatch>,
    /// Which retryable answers pause their host (`pauses.rs`). Only the scheduler touches it.
    pub pauses: std::sync::Mutex<crate::pauses::HostPauses>,
    /// The last failures committed, for those watching. Only the scheduler writes it.
    pub recent_failures: std::sync::Mutex<crate::live::RecentFailures>,
    /// The WARC files (`CrawlConfig::warc`), opened when the run starts; the commit task
    /// appends to them.
    pub warc: Option<Arc<std::sync::Mutex<kumo_warc::WarcWriter>>>,
    /// Why the archive could not be written, once it could not: the crawl then stops.
    pub warc_failure: Arc<std::sync::OnceLock<String>>,
    /// Why a commit failed, once one did: the crawl then stops, since what the state holds no
    /// longer matches what the scheduler thinks it holds.
    pub commit_failure: Arc<std::sync::OnceLock<String>>,
    /// Items committed and not written yet (the journal's after the last checkpoint, then
    /// those a run held back past `max_items`): the next run writes them first.
    pub backlog: Vec<ItemBatch>,
}

impl Parts {
    /// The pipeline, which a run (or the resume step) holds while it works.
    pub fn take_pipeline(&self) -> Pipeline {
        self.pipeline.lock().unwrap_or_else(|e| e.into_inner()).take().expect("pipeline present between runs")
    }

    pub fn put_pipeline(&self, pipeline: Pipeline) {
        *self.pipeline.lock().unwrap_or_else(|e| e.into_inner()) = Some(pipeline);
    }

    /// Runs `f` on the throttle, if it is on.
    pub fn with_throttle<T>(&self, f: impl FnOnce(&mut Throttle) -> T) -> Option<T> {
        let t = self.throttle.as_ref()?;
        Some(f(&mut t.lock().unwrap_or_else(|e| e.into_inner())))
    }

    /// Sends the throttle's changed delays to the frontier, one adjustment per host.
    pub async fn send_throttle(&self) -> Result<(), kumo_frontier::FrontierError> {
        for (host, adj) in self.with_throttle(Throttle::take).unwrap_or_default() {
            self.frontier.adjust_host(&host, adj).await?;
        }
        Ok(())
    }

    /// Tells the throttle the crawl has work for these requests' hosts, so a new host starts
    /// at the start delay before its first request goes out.
    pub fn meet_hosts<'a>(&self, requests: impl IntoIterator<Item = &'a (Fingerprint, Request)>) {
        let politeness = &self.cfg.politeness;
        self.with_throttle(|t| {
            for (_, r) in requests {
                let host = r.host_key();
                t.meet(&host, || politeness.policy_for(&host).delay);
            }
        });
    }
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
    for url in &parts.cfg.sitemaps {
        let mut r = Request::get(url.clone());
        r.kind = RequestKind::Sitemap { nesting: 0 };
        admit(&parts.scope, &parts.cfg, r, &mut batch, &mut skips);
    }
    for s in skips {
        *tally_skips.entry(s).or_default() += 1;
    }
    // Pauses kept from an earlier run wait no longer than this run allows.
    for cut in parts.frontier.cap_pauses(None, parts.cfg.max_host_pause).await? {
        tracing::warn!(
            host = %cut.host,
            "its server asked for a pause of {}s more; cut to {}s (the host pause cap)",
            cut.was.as_secs(),
            cut.now.as_secs()
        );
    }
    if parts.with_throttle(|t| t.needs_resume()) == Some(true) {
        // A resumed crawl's throttle goes on from the delays the frontier kept.
        let kept = parts.frontier.learned_delays().await?;
        parts.with_throttle(|t| t.resume(kept));
    }
    parts.meet_hosts(&batch);
    parts.send_throttle().await?;
    let report = parts.frontier.push(batch).await?;
    parts.progress.queued.fetch_add(report.added as u64, Ordering::Relaxed);
    Ok(())
}

/// What those outside the run see and steer besides stopping it: a pause, and the summary
/// so far.
pub(crate) struct Watchers {
    pub pause: watch::Receiver<bool>,
    pub live: Arc<watch::Sender<Option<Arc<Live>>>>,
    pub steer: mpsc::Receiver<Order>,
}

/// How often the summary so far is published while someone watches.
const LIVE_EVERY: Duration = Duration::from_millis(500);
/// How often the hosts are listed for it (a listing walks every host), and a shared crawl's
/// totals added up.
const LIVE_HOSTS_EVERY: Duration = Duration::from_secs(2);

impl Parts {
    /// What those watching see now: `summary`, the hosts as last listed, the last failures,
    /// a shared crawl's totals as last added up.
    pub fn live(&self, summary: Summary, hosts: Vec<LiveHost>, crawl: Option<CrawlTotals>) -> Live {
        let recent_failures = self.recent_failures.lock().unwrap_or_else(|e| e.into_inner()).list();
        Live { summary, hosts, recent_failures, crawl }
    }
}

/// Runs the crawl until it drains, hits a limit, or is stopped. Returns the summary.
pub(crate) async fn run(
    parts: &mut Parts,
    mut stop_rx: watch::Receiver<Option<StopMode>>,
    watchers: Watchers,
    mut tally_skips: BTreeMap<SkipReason, u64>,
) -> Summary {
    let Watchers { pause: mut pause_rx, live, steer: mut steer_rx } = watchers;
    // A pause sender gone (its engine dropped) leaves the run unpaused, not spinning.
    let mut pause_open = true;
    let mut next_live = tokio::time::Instant::now();
    let mut next_hosts = tokio::time::Instant::now();
    let mut hosts = Vec::new();
    let mut crawl = None;
    let started = Instant::now();
    let cfg = parts.cfg.clone();
    let concurrency = cfg.concurrency;
    let parsers = parts.analyzer_modules.len();

    // Unbounded only in type: the loop below never has more than `concurrency` leases out.
    // A bounded channel would allocate all `concurrency` slots up front (`-c 1000000` took
    // gigabytes for a 20-page crawl); this one grows with use.
    let (lease_tx, lease_rx) = async_channel::unbounded::<Lease>();
    let lease_tx = Gauged::new_async("leases", lease_tx, concurrency);
    let (fetched_tx, fetched_rx) = async_channel::bounded::<Fetched>(parsers * 4);
    let fetched_tx = Gauged::new_async("fetched", fetched_tx, parsers * 4);
    let (result_tx, mut result_rx) = mpsc::channel::<PageResult>(concurrency * 2);
    let result_tx = Gauged::new("results", result_tx);
    let (item_tx, item_rx) = mpsc::channel::<ItemBatch>(256);
    let item_tx = Gauged::new("items", item_tx);
    // The buffers between the stages, for the summary (`buffers.rs`).
    let gauges =
        [lease_tx.gauge(), fetched_tx.gauge(), result_tx.gauge(), item_tx.gauge(), parts.errors.gauge()];

    let mut workers = JoinSet::new();
    let download = Arc::new(DownloadStage {
        cfg: cfg.clone(),
        scope: parts.scope.clone(),
        registrar: parts.registrar.clone(),
        robots: parts.robots.clone(),
    });
    // Download tasks are started as leases go out, up to the most in flight at once, not
    // `concurrency` of them at the start: memory follows use, not the limit.
    let mut downloaders = 0usize;
    let spawn_downloader = {
        let (leases, fetched, results) = (lease_rx, fetched_tx, result_tx.clone());
        move |workers: &mut JoinSet<()>| {
            let t = stages::download_task(download.clone(), leases.clone(), fetched.clone(), results.clone());
            workers.spawn(t);
        }
    };
    let parse = Arc::new(ParseStage {
        cfg: cfg.clone(),
        scope: parts.scope.clone(),
        analyzer: parts.analyzer.clone(),
        frontier: parts.frontier.clone(),
        errors: parts.errors.clone(),
        round_ms: u64::try_from(
            cfg.checked_at
                .unwrap_or_else(std::time::SystemTime::now)
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis(),
        )
        .unwrap_or(u64::MAX),
    });
    for module in &parts.analyzer_modules {
        workers.spawn(stages::parse_task(
            parse.clone(),
            module.clone(),
            fetched_rx.clone(),
            result_tx.clone(),
        ));
    }
    drop((fetched_rx, result_tx));

    // A resumed crawl counts on from its last commit.
    let mut tally = match parts.frontier.saved_counters().await {
        Ok(Some(bytes)) => Tally::restore(&bytes),
        _ => Tally::default(),
    };
    for (reason, n) in std::mem::take(&mut tally_skips) {
        tally.skip(reason, n);
    }
    let backlog = std::mem::take(&mut parts.backlog);
    let limits = Limits::new(&cfg, &tally, writer::count(&backlog));

    // The pipeline task sets `broken` when an output fails: the crawl then stops.
    let (broken_tx, mut broken_rx) = watch::channel(false);
    let pipe_task = writer::Writer {
        pipeline: parts.take_pipeline(),
        journal: parts.journal.clone(),
        stream: parts.errors.clone(),
        broken: broken_tx,
        room: limits.item_room(),
        backlog,
    }
    .spawn(item_rx);

    let pages_at_start = tally.pages;
    let mut in_flight = 0usize;
    // `max_pages` counts pages (results analyzed into page records), not leases: a lease can
    // end as robots.txt work (a deferral, a skip), a retry or a failure, and those must not
    // use up the budget. Pages done plus leases in flight never exceed it.
    let mut pages_done = limits.pages_before();
    let mut cause: Option<StopCause> = None;
    // The message of the error that stopped the crawl, if one did.
    let mut stop_error: Option<String> = None;
    let mut stopping = false;
    // A duration past any clock means no deadline.
    let deadline = cfg.max_duration.and_then(|d| tokio::time::Instant::now().checked_add(d));
    let progress = parts.progress.clone();
    let frontier = parts.frontier.clone();
    let mut group = Group::new(frontier.group_linger());
    let mut committer = Committer::default();

    loop {
        let paused = *pause_rx.borrow_and_update();
        let watched = live.receiver_count() > 0;
        if watched && tokio::time::Instant::now() >= next_live {
            if tokio::time::Instant::now() >= next_hosts {
                hosts = crate::live::busiest(frontier.hosts().await.unwrap_or_default());
                crawl = crate::live::crawl_totals(frontier.as_ref()).await;
                next_hosts = tokio::time::Instant::now() + LIVE_HOSTS_EVERY;
            }
            let frontier_stats = frontier.stats().await.unwrap_or_default();
            let mut s =
                summary_of(parts, &tally, started, pages_at_start, frontier_stats, Status::Started, None);
            s.buffers = gauges.iter().map(|g| g.stats()).collect();
            live.send_replace(Some(Arc::new(parts.live(s, hosts.clone(), crawl.clone()))));
            next_live = tokio::time::Instant::now() + LIVE_EVERY;
        }
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
        // An output that fails stops the crawl, whatever else was stopping it.
        if *broken_rx.borrow_and_update() && cause != Some(StopCause::OutputError) {
            stopping = true;
            cause = Some(StopCause::OutputError);
        }
        if let Some(why) = parts.commit_failure.get()
            && cause != Some(StopCause::StorageError)
        {
            stopping = true;
            cause = Some(StopCause::StorageError);
            stop_error = Some(why.clone());
        }
        if let Some(why) = parts.warc_failure.get()
            && cause != Some(StopCause::OutputError)
        {
            stopping = true;
            cause = Some(StopCause::OutputError);
            stop_error = Some(why.clone());
        }
        let page_cap_hit = cfg.max_pages != 0 && pages_done >= cfg.max_pages;
        if page_cap_hit && !stopping {
            stopping = true;
            cause.get_or_insert(StopCause::MaxPages);
        }
        if !stopping && limits.items_reached(&tally) {
            stopping = true;
            cause.get_or_insert(StopCause::MaxItems);
        }
        if !stopping && cfg.max_errors != 0 && tally.errors.values().sum::<u64>() >= cfg.max_errors {
            stopping = true;
            cause.get_or_insert(StopCause::MaxErrors);
        }
        // How many more leases may go out now: the free slots, within what is left of the page
        // budget once the leases in flight are counted as pages.
        let room = |in_flight: usize, pages_done: u64| {
            let slots = concurrency - in_flight;
            if cfg.max_pages == 0 {
                return slots;
            }
            let left = cfg.max_pages.saturating_sub(pages_done + in_flight as u64);
            slots.min(usize::try_from(left).unwrap_or(usize::MAX))
        };
        let want = room(in_flight, pages_done);
        if !stopping && !paused && want > 0 {
            match frontier.lease(want).await {
                Ok(leases) => {
                    for l in leases {
                        in_flight += 1;
                        if downloaders < in_flight {
                            spawn_downloader(&mut workers);
                            downloaders += 1;
                        }
                        if lease_tx.send(l).await.is_err() {
                            break;
                        }
                    }
                }
                Err(e) => {
                    stop_error.get_or_insert_with(|| e.to_string());
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
                    stop_error.get_or_insert_with(|| e.to_string());
                    storage_error(parts, &mut tally, e);
                    cause = Some(StopCause::StorageError);
                    stopping = true;
                    Readiness::Empty
                }
            }
        };
        // Waiting results are committed at once when the crawl needs what they found (nothing
        // else is queued) or is about to end.
        if !group.is_empty() && (stopping || in_flight == 0 || readiness == Readiness::Empty) {
            committer.start(parts, group.take(), &mut tally, &item_tx).await;
            continue;
        }
        // A commit in flight may queue more: the crawl is drained only when it is done.
        if in_flight == 0 && committer.is_idle() && (stopping || readiness == Readiness::Empty) {
            cause.get_or_insert(StopCause::Drained);
            break;
        }
        // With no lease allowed (slots or budget full, or paused), only a result (or the end of
        // the pause) can change that.
        let can_lease = room(in_flight, pages_done) > 0 && !paused;
        let wake = match readiness {
            Readiness::At(t) if can_lease => {
                // A shared frontier may get work from elsewhere before `t`: look again sooner.
                let t = match frontier.poll_interval() {
                    Some(poll) => t.min(std::time::Instant::now() + poll),
                    None => t,
                };
                Some(tokio::time::Instant::from_std(t))
            }
            // Leasable now but nothing was handed out: a short pause avoids spinning.
            Readiness::Now if can_lease => Some(tokio::time::Instant::now() + Duration::from_millis(1)),
            _ => None,
        };
        // Slots are free and work is queued, but no host may go before `t`: politeness.
        let polite_since = matches!(readiness, Readiness::At(_) if can_lease).then(tokio::time::Instant::now);
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
                pages_done += batch.iter().filter(|r| r.outcome.is_page()).count() as u64;
                progress.in_flight.store(in_flight as u64, Ordering::Relaxed);
                match group.add(batch) {
                    Some(ids) if !group.is_full() => {
                        if let Err(e) = frontier.release(&ids).await {
                            storage_error(parts, &mut tally, e);
                        }
                    }
                    _ => committer.start(parts, group.take(), &mut tally, &item_tx).await,
                }
            }
            _ = tokio::time::sleep_until(group.deadline().unwrap_or_else(tokio::time::Instant::now)), if !group.is_empty() => {
                committer.start(parts, group.take(), &mut tally, &item_tx).await;
            }
            done = committer.wait(), if !committer.is_idle() => commit::apply(parts, &mut tally, done),
            _ = tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {}
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() && !stopping => {
                stopping = true;
                cause.get_or_insert(StopCause::MaxDuration);
            }
            changed = stop_rx.changed() => {
                if changed.is_err() { stopping = true; cause.get_or_insert(StopCause::Stopped); }
            }
            changed = pause_rx.changed(), if pause_open => pause_open = changed.is_ok(),
            Some(order) = steer_rx.recv() => match order {
                Order::RequeueFailures { kinds, reply } => {
                    // After the commit in flight, whose failures the frontier then holds.
                    committer.finish(parts, &mut tally).await;
                    let report = frontier.requeue_failures(&kinds).await;
                    if let Ok(r) = &report {
                        tally.failed = tally.failed.saturating_sub(r.requeued as u64);
                        parts.recent_failures.lock().unwrap_or_else(|e| e.into_inner()).forget(&kinds);
                    }
                    let _ = reply.send(report);
                }
                Order::HostQueue { host, max, reply } => {
                    let _ = reply.send(frontier.host_queue(&host, max).await);
                }
            },
            _ = tokio::time::sleep_until(next_live), if watched => {}
            // Seen at the top of the loop; the pipeline task outlives the loop, so its sender
            // does not go away before.
            _ = broken_rx.changed(), if !stopping => {}
        }
        if let Some(since) = polite_since {
            tally.politeness_wait += since.elapsed();
        }
    }

    if !group.is_empty() {
        // Pages fetched before a stop-now: done work, so it is committed like any other.
        committer.start(parts, group.take(), &mut tally, &item_tx).await;
    }
    committer.finish(parts, &mut tally).await;
    parts.status.set(Status::Stopping);
    // The spawner holds the channels' ends too: without it and the lease sender, the stages
    // see their inputs close and end.
    drop((spawn_downloader, lease_tx));
    if cause == Some(StopCause::StoppedNow) {
        // In-flight leases are abandoned here; a persistent frontier hands them out again.
        workers.abort_all();
    }
    drop(result_rx);
    while workers.join_next().await.is_some() {}
    drop(item_tx);
    let written = match pipe_task.await {
        Ok(v) => v,
        Err(e) => panic!("pipeline task panicked: {e}"),
    };
    for (k, v) in written.errors {
        *tally.errors.entry(k).or_default() += v;
    }
    let held = writer::count(&written.held);
    parts.backlog = written.held;
    match &written.failure {
        Some(f @ OutputFailure::Sink(_)) => {
            cause = Some(StopCause::OutputError);
            stop_error = Some(f.message().to_string());
        }
        Some(f @ OutputFailure::Journal(_)) => {
            cause = Some(StopCause::StorageError);
            // The frontier's failed write comes first when there was one: the journal's is
            // then only its echo (the store takes no writes after one failed).
            stop_error.get_or_insert_with(|| f.message().to_string());
        }
        None => {}
    }
    let pipeline = written.pipeline;
    let pipeline_summary = ModuleSummary {
        id: pipeline.id().clone(),
        counts: pipeline.counters().snapshot(),
        extra: match pipeline.processor_stats() {
            p if p.is_empty() => serde_json::json!({ "sinks": pipeline.sink_names() }),
            p => serde_json::json!({ "sinks": pipeline.sink_names(), "processors": p }),
        },
    };
    parts.put_pipeline(pipeline);

    let warc_bytes = match close_archive(parts).await {
        Ok(n) => n,
        Err(e) => {
            cause = Some(StopCause::OutputError);
            stop_error.get_or_insert(e);
            0
        }
    };
    if let Some(r) = &cfg.render {
        // The browser goes with the run; the next run starts one again.
        r.renderer.close().await;
    }
    let frontier_stats = frontier.stats().await.unwrap_or_else(|_| FrontierStats::default());
    // The cookie jar saves inside the downloaders, away from the error stream: what failed is
    // counted here, for this run.
    let cookie_save_errors = cfg.downloader.cookie_jar.as_ref().map_or(0, |jar| jar.save_errors());
    if cookie_save_errors > 0 {
        tally.errors_of(Stage::Downloader, ErrorKind::Storage, cookie_save_errors);
    }
    let mut summary =
        summary_of(parts, &tally, started, pages_at_start, frontier_stats, Status::Stopped, cause);
    summary.stop_error = stop_error;
    summary.items_unwritten = written.unwritten;
    summary.items = summary.items.saturating_sub(held);
    summary.items_held = held;
    summary.warc_bytes = warc_bytes;
    summary.peak_memory_bytes = crate::summary::peak_memory().unwrap_or(0);
    summary.modules.pipelines = vec![pipeline_summary];
    summary.buffers = gauges.iter().map(|g| g.stats()).collect();
    cfg.listeners.finish(&summary);
    summary
}

/// Closes the WARC files at the end of a run (the last one renamed and indexed); a resumed
/// crawl opens them again. Returns the bytes written to them in this run.
async fn close_archive(parts: &mut Parts) -> Result<u64, String> {
    let Some(w) = parts.warc.take() else { return Ok(0) };
    // The commit tasks are done: theirs were the only other handles.
    let w = Arc::try_unwrap(w).map_err(|_| "the WARC writer is still in use".to_string())?;
    let w = w.into_inner().unwrap_or_else(|e| e.into_inner());
    let written = w.bytes_written();
    tokio::task::spawn_blocking(move || w.close())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(written)
}

/// The summary of the run so far (`status` `started`, while it goes on) or at its end; what
/// only the end knows (the pipeline's module, what failed to be written) is left empty.
fn summary_of(
    parts: &Parts,
    tally: &Tally,
    started: Instant,
    pages_at_start: u64,
    frontier: FrontierStats,
    status: Status,
    cause: Option<StopCause>,
) -> Summary {
    let elapsed = started.elapsed().as_secs_f64();
    let cfg = &parts.cfg;
    Summary {
        status,
        stopped_by: cause.unwrap_or(StopCause::Drained),
        seeds: cfg.seeds.iter().map(|u| u.to_string()).collect(),
        elapsed_secs: elapsed,
        pages: tally.pages,
        pages_this_run: tally.pages - pages_at_start,
        pages_per_sec: if elapsed > 0.0 { (tally.pages - pages_at_start) as f64 / elapsed } else { 0.0 },
        bytes: tally.bytes,
        items: tally.items,
        by_status: tally.by_status.clone(),
        skipped: tally.skipped.clone(),
        errors: tally.errors.clone(),
        script_errors: tally.script_errors.clone(),
        errors_dropped: parts.errors.dropped(),
        retries: tally.retries,
        failed: tally.failed,
        done: tally.done,
        stop_error: None,
        items_unwritten: 0,
        items_held: 0,
        frontier,
        robots: parts.robots.as_ref().map(|r| r.stats()).unwrap_or_default(),
        trap_warnings: parts.traps.lock().unwrap_or_else(|e| e.into_inner()).warnings(),
        changes: tally.changes,
        fetch_latency: tally.fetch_latency.clone(),
        commit_latency: tally.commit_latency.clone(),
        politeness_wait_secs: tally.politeness_wait.as_secs_f64(),
        warc_bytes: 0,
        peak_memory_bytes: 0,
        buffers: Vec::new(),
        modules: Modules {
            downloaders: parts.registrar.summaries(),
            analyzers: parts
                .analyzer_modules
                .iter()
                .map(|m| ModuleSummary {
                    id: m.id.clone(),
                    counts: m.counters.snapshot(),
                    extra: serde_json::Value::Null,
                })
                .collect(),
            pipelines: Vec::new(),
        },
    }
}
