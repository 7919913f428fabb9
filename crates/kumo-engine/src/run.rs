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
//!
//! The loop is [`run`]: a turn of the [`Scheduler`] (signals read, leases out, maybe a commit
//! or the end), then one [`Event`] waited for and handled (`scheduler/`). This file also holds
//! what outlives a run: the engine's [`Parts`] and the seeding.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kumo_core::{Fingerprint, Request, RequestKind, SkipReason};
use kumo_frontier::{Frontier, Scope};
use kumo_pipeline::{ItemJournal, Pipeline};
use tokio::sync::{mpsc, watch};

use crate::analyzer_registrar::AnalyzerRegistrar;
use crate::live::{CrawlTotals, Live, LiveHost, RecentFailures};
use crate::pauses::HostPauses;
use crate::registrar::Registrar;
use crate::results::ItemBatch;
use crate::robots::RobotsCache;
use crate::scheduler::{Event, Scheduler, Turn};
use crate::stages::admit;
use crate::steer::Order;
use crate::throttle::Throttle;
use crate::traps::TrapWatch;
use crate::{CrawlConfig, ErrorStream, Progress, StatusCell, StopMode, Summary};

/// The parts of an initialized engine; a run borrows them and gives them back.
pub(crate) struct Parts {
    pub cfg: Arc<CrawlConfig>,
    pub scope: Arc<Scope>,
    pub frontier: Arc<dyn Frontier>,
    pub registrar: Arc<Registrar>,
    /// `None` when robots.txt is ignored.
    pub robots: Option<Arc<RobotsCache>>,
    /// The registered analyzers the parser tasks hand pages to.
    pub analyzers: Arc<AnalyzerRegistrar>,
    /// Taken by a run and put back at its end. A mutex only so `Parts` (and so the engine,
    /// which keeps it between runs) is `Sync`: a pipeline's sinks are only `Send`.
    pub pipeline: std::sync::Mutex<Option<Pipeline>>,
    /// The durable item journal the pipeline checkpoints against, if the frontier keeps one.
    pub journal: Option<Arc<dyn ItemJournal>>,
    pub errors: Arc<ErrorStream>,
    pub progress: Arc<Progress>,
    pub status: Arc<StatusCell>,
    /// The adaptive throttle's state, when it is on. Only the scheduler touches it.
    pub throttle: Option<Throttle>,
    /// Fetched pages by URL shape, for the spider-trap warning. Only the scheduler touches it.
    pub traps: TrapWatch,
    /// Which retryable answers pause their host (`pauses.rs`). Only the scheduler touches it.
    pub pauses: HostPauses,
    /// The last failures committed, for those watching. Only the scheduler writes it.
    pub recent_failures: RecentFailures,
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
    pub fn take_pipeline(&mut self) -> Pipeline {
        let slot = self.pipeline.get_mut().unwrap_or_else(|e| e.into_inner());
        slot.take().expect("pipeline present between runs")
    }

    pub fn put_pipeline(&mut self, pipeline: Pipeline) {
        *self.pipeline.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(pipeline);
    }

    /// Runs `f` on the throttle, if it is on.
    pub fn with_throttle<T>(&mut self, f: impl FnOnce(&mut Throttle) -> T) -> Option<T> {
        self.throttle.as_mut().map(f)
    }

    /// Sends the throttle's changed delays to the frontier, one adjustment per host.
    pub async fn send_throttle(&mut self) -> Result<(), kumo_frontier::FrontierError> {
        for (host, adj) in self.with_throttle(Throttle::take).unwrap_or_default() {
            self.frontier.adjust_host(&host, adj).await?;
        }
        Ok(())
    }

    /// Tells the throttle the crawl has work for these requests' hosts, so a new host starts
    /// at the start delay before its first request goes out.
    pub fn meet_hosts<'a>(&mut self, requests: impl IntoIterator<Item = &'a (Fingerprint, Request)>) {
        let Some(t) = self.throttle.as_mut() else { return };
        let politeness = &self.cfg.politeness;
        for (_, r) in requests {
            let host = r.host_key();
            t.meet(&host, || politeness.policy_for(&host).delay);
        }
    }

    /// What those watching see now: `summary`, the hosts as last listed, the last failures,
    /// a shared crawl's totals as last added up.
    pub fn live(&self, summary: Summary, hosts: Vec<LiveHost>, crawl: Option<CrawlTotals>) -> Live {
        Live { summary, hosts, recent_failures: self.recent_failures.list(), crawl }
    }
}

/// Scope-checks and fingerprints the seeds, and queues them.
pub(crate) async fn seed(
    parts: &mut Parts,
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

/// Runs the crawl until it drains, hits a limit, or is stopped. Returns the summary.
pub(crate) async fn run(
    parts: &mut Parts,
    stop_rx: watch::Receiver<Option<StopMode>>,
    watchers: Watchers,
    tally_skips: BTreeMap<SkipReason, u64>,
) -> Summary {
    let mut s = Scheduler::new(parts, stop_rx, watchers, tally_skips).await;
    loop {
        match s.turn().await {
            Turn::Wait => {}
            Turn::Again => continue,
            Turn::End => break,
        }
        match s.next_event().await {
            Event::Results(batch) => s.handle_results(batch).await,
            // Not while the loop runs (the scheduler keeps a sender for the downloaders it
            // starts), but a loop without results to wait for has nothing left to do.
            Event::ResultsClosed => break,
            Event::GroupDue => s.handle_group_due().await,
            Event::Committed(done) => s.handle_committed(done),
            Event::Deadline => s.handle_deadline(),
            Event::Stop { sender_gone } => s.handle_stop(sender_gone),
            Event::Pause { sender_gone } => s.handle_pause(sender_gone),
            Event::Steer(order) => s.handle_steer(order).await,
            Event::Resolved(host, addr) => s.handle_resolved(host, addr).await,
            // Wake-ups only: the next turn leases, publishes or stops, as it would after any
            // event (what it reads may have changed whichever event woke it).
            Event::LeaseWake | Event::LiveTick | Event::OutputBroken => {}
        }
        s.count_politeness_wait();
    }
    s.end().await
}
