//! The stage tasks of a run as the scheduler holds them: the downloaders, started as leases go
//! out, the parsers, and the channels between them and the scheduler.

use std::sync::Arc;

use kumo_frontier::Lease;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::buffers::{Gauge, Gauged};
use crate::run::Parts;
use crate::stages::{self, DownloadStage, Fetched, PageResult, ParseStage};

/// Results taken at once, behind the one waited for: one commit's worth at full speed.
const BATCH: usize = 256;

/// The run's stage tasks and the scheduler's ends of their channels.
pub(super) struct Workers {
    /// Unbounded only in type: the scheduler never has more than `concurrency` leases out.
    /// A bounded channel would allocate all `concurrency` slots up front (`-c 1000000` took
    /// gigabytes for a 20-page crawl); this one grows with use.
    leases: Gauged<async_channel::Sender<Lease>>,
    spawner: Spawner,
    /// Download tasks started: as leases go out, up to the most in flight at once, not
    /// `concurrency` of them at the start, so memory follows use, not the limit.
    downloaders: usize,
    tasks: JoinSet<()>,
    results: mpsc::Receiver<PageResult>,
}

/// What each new download task gets. It holds the channels' ends too: the stages see their
/// inputs close only once it is gone.
struct Spawner {
    stage: Arc<DownloadStage>,
    leases: async_channel::Receiver<Lease>,
    fetched: Gauged<async_channel::Sender<Fetched>>,
    results: Gauged<mpsc::Sender<PageResult>>,
}

impl Workers {
    /// Opens the channels and starts the parser tasks; download tasks start as leases go out.
    pub fn start(parts: &Parts) -> Self {
        let cfg = parts.cfg.clone();
        let (concurrency, parsers) = (cfg.concurrency, cfg.parser_count());
        let (lease_tx, lease_rx) = async_channel::unbounded::<Lease>();
        let leases = Gauged::new_async("leases", lease_tx, concurrency);
        let (fetched_tx, fetched_rx) = async_channel::bounded::<Fetched>(parsers * 4);
        let fetched = Gauged::new_async("fetched", fetched_tx, parsers * 4);
        let (result_tx, results) = mpsc::channel::<PageResult>(concurrency * 2);
        let result_tx = Gauged::new("results", result_tx);
        let stage = Arc::new(DownloadStage {
            cfg: cfg.clone(),
            scope: parts.scope.clone(),
            registrar: parts.registrar.clone(),
            robots: parts.robots.clone(),
            departures: Default::default(),
        });
        let parse = Arc::new(ParseStage {
            cfg: cfg.clone(),
            scope: parts.scope.clone(),
            analyzers: parts.analyzers.clone(),
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
        let mut tasks = JoinSet::new();
        for _ in 0..parsers {
            tasks.spawn(stages::parse_task(parse.clone(), fetched_rx.clone(), result_tx.clone()));
        }
        let spawner = Spawner { stage, leases: lease_rx, fetched, results: result_tx };
        Workers { leases, spawner, downloaders: 0, tasks, results }
    }

    /// The gauges of the leases, fetched and results buffers, in that order.
    pub fn gauges(&self) -> [Arc<Gauge>; 3] {
        [self.leases.gauge(), self.spawner.fetched.gauge(), self.spawner.results.gauge()]
    }

    /// Hands a lease to the downloaders, first starting one more when fewer than `in_flight`
    /// run. False when the downloaders take no more.
    pub async fn send(&mut self, lease: Lease, in_flight: usize) -> bool {
        if self.downloaders < in_flight {
            let s = &self.spawner;
            let task = stages::download_task(
                s.stage.clone(),
                s.leases.clone(),
                s.fetched.clone(),
                s.results.clone(),
            );
            self.tasks.spawn(task);
            self.downloaders += 1;
        }
        self.leases.send(lease).await.is_ok()
    }

    /// The next results: the first to come and up to [`BATCH`] queued behind it; `None` once
    /// every sender is gone. Cancel-safe: nothing is awaited after a result is taken.
    pub async fn next_results(&mut self) -> Option<Vec<PageResult>> {
        let first = self.results.recv().await?;
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match self.results.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        Some(batch)
    }

    /// Closes the stages' inputs and waits for their tasks to end; `abandon` (a stop-now)
    /// aborts them, leaving their leases to a persistent frontier to hand out again.
    pub async fn shut(self, abandon: bool) {
        let Workers { leases, spawner, mut tasks, results, .. } = self;
        drop((spawner, leases));
        if abandon {
            tasks.abort_all();
        }
        drop(results);
        while tasks.join_next().await.is_some() {}
    }
}
