//! The run's figures: the summary so far, published for those watching (`Engine::live`), and
//! the summary both it and the end of the run are made from.

use std::sync::Arc;
use std::time::Duration;

use kumo_frontier::FrontierStats;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Scheduler;
use crate::live::{CrawlTotals, Live, LiveHost};
use crate::results::Tally;
use crate::run::Parts;
use crate::summary::{Modules, StopCause};
use crate::{BufferStats, Status, Summary};

/// How often the summary so far is published while someone watches.
const LIVE_EVERY: Duration = Duration::from_millis(500);
/// How often the hosts are listed for it (a listing walks every host), and a shared crawl's
/// totals added up.
const LIVE_HOSTS_EVERY: Duration = Duration::from_secs(2);

/// Where the live figures go, and what was last listed for them.
pub(super) struct LiveFeed {
    tx: Arc<watch::Sender<Option<Arc<Live>>>>,
    /// When the summary so far is next published; at once when the run starts.
    next: Instant,
    /// When the hosts are next listed and the crawl's totals added up.
    next_hosts: Instant,
    hosts: Vec<LiveHost>,
    crawl: Option<CrawlTotals>,
    host_figures: Option<kumo_frontier::HostFigures>,
}

impl LiveFeed {
    pub fn new(tx: Arc<watch::Sender<Option<Arc<Live>>>>) -> Self {
        let now = Instant::now();
        LiveFeed { tx, next: now, next_hosts: now, hosts: Vec::new(), crawl: None, host_figures: None }
    }

    /// Whether anyone watches: nobody watching costs the crawl nothing.
    pub fn watched(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    pub fn next(&self) -> Instant {
        self.next
    }

    pub fn due(&self) -> bool {
        Instant::now() >= self.next
    }
}

impl Scheduler<'_> {
    /// Publishes the summary so far, with the hosts and the crawl's totals as last listed
    /// (listed again when that is due).
    pub(super) async fn publish_live(&mut self) {
        if Instant::now() >= self.live.next_hosts {
            self.live.hosts = crate::live::busiest(self.frontier.hosts().await.unwrap_or_default());
            self.live.crawl = crate::live::crawl_totals(self.frontier.as_ref()).await;
            // Walks every host: asked as often as the busiest hosts are listed.
            self.live.host_figures = self.frontier.host_figures().await.unwrap_or_default();
            self.live.next_hosts = Instant::now() + LIVE_HOSTS_EVERY;
        }
        let frontier_stats = self.frontier.stats().await.unwrap_or_default();
        let mut s = summary_of(
            self.parts,
            &self.tally,
            self.started,
            self.pages_at_start,
            frontier_stats,
            Status::Started,
            None,
        );
        s.buffers = self.buffer_stats();
        s.hosts = self.live.host_figures;
        let live = self.parts.live(s, self.live.hosts.clone(), self.live.crawl.clone());
        self.live.tx.send_replace(Some(Arc::new(live)));
        self.live.next = Instant::now() + LIVE_EVERY;
    }

    /// The buffers between the stages as they stand.
    pub(super) fn buffer_stats(&self) -> Vec<BufferStats> {
        self.gauges.iter().map(|g| g.stats()).collect()
    }
}

/// The summary of the run so far (`status` `started`, while it goes on) or at its end; what
/// only the end knows (the pipeline's module, what failed to be written) is left empty.
pub(super) fn summary_of(
    parts: &Parts,
    tally: &Tally,
    started: std::time::Instant,
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
        hosts: None,
        robots: parts.robots.as_ref().map(|r| r.stats()).unwrap_or_default(),
        trap_warnings: parts.traps.warnings(),
        changes: tally.changes,
        fetch_latency: tally.fetch_latency.clone(),
        commit_latency: tally.commit_latency.clone(),
        politeness_wait_secs: tally.politeness_wait.as_secs_f64(),
        warc_bytes: 0,
        peak_memory_bytes: 0,
        buffers: Vec::new(),
        dns: parts.cfg.downloader.dns.as_ref().map(|r| r.snapshot()),
        modules: Modules {
            downloaders: parts.registrar.summaries(),
            analyzers: parts.analyzers.summaries(),
            pipelines: Vec::new(),
        },
    }
}
