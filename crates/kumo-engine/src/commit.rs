//! The scheduler's commits, one in flight at a time while the scheduler goes on: it keeps
//! leasing and gathering results while the frontier writes the last group. With a shared
//! frontier a commit is a round trip, and waiting for it left the downloaders idle.
//!
//! Commits still apply in order: a new one starts only after the one before has finished, so
//! the counters saved with each count everything before it, and items reach the pipeline in
//! the order the frontier journaled them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use kumo_core::SkipReason;
use kumo_frontier::{Commit, Completion, Frontier, FrontierError};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::CrawlConfig;
use crate::Progress;
use crate::results::{ItemBatch, Tally, prepare, storage_error};
use crate::run::Parts;
use crate::stages::PageResult;

/// What a finished commit tells the scheduler.
pub(crate) struct Committed {
    /// Links the frontier had seen already.
    seen: u64,
    error: Option<FrontierError>,
    /// How long the frontier took.
    took: std::time::Duration,
}

/// The commit in flight, if any.
#[derive(Default)]
pub(crate) struct Committer {
    running: Option<JoinHandle<Committed>>,
}

impl Committer {
    pub fn is_idle(&self) -> bool {
        self.running.is_none()
    }

    /// Counts `results` and starts committing them once the commit before has finished.
    pub async fn start(
        &mut self,
        parts: &Parts,
        results: Vec<PageResult>,
        tally: &mut Tally,
        item_tx: &mpsc::Sender<ItemBatch>,
    ) {
        let prepared = prepare(parts, results, tally).await;
        {
            let mut recent = parts.recent_failures.lock().unwrap_or_else(|e| e.into_inner());
            for c in &prepared.completions {
                if let Completion::Failed { failure, .. } = c {
                    recent.note(failure);
                }
            }
        }
        self.finish(parts, tally).await;
        // Saved with the commit: everything counted so far, with what it finds seen.
        let snapshot = tally.clone();
        let counters: kumo_frontier::CountersFn = Box::new(move |pushed| {
            let mut t = snapshot;
            t.skip(SkipReason::Seen, pushed.seen as u64);
            serde_json::to_vec(&t).unwrap_or_default()
        });
        let commit = Commit {
            pushes: prepared.pushes,
            completions: prepared.completions,
            items: prepared.items,
            item_sources: prepared.item_sources,
            counters: Some(counters),
        };
        let task = CommitTask {
            frontier: parts.frontier.clone(),
            cfg: parts.cfg.clone(),
            progress: parts.progress.clone(),
            item_tx: item_tx.clone(),
        };
        self.running = Some(tokio::spawn(task.run(commit)));
    }

    /// Waits for the commit in flight and counts what it reported; at once if none is.
    pub async fn finish(&mut self, parts: &Parts, tally: &mut Tally) {
        if self.running.is_some() {
            let done = self.wait().await;
            apply(parts, tally, done);
        }
    }

    /// The commit in flight's report. Cancel-safe (a `select!` branch): dropped before the
    /// commit finishes, it leaves the commit running. Never resolves when none is in flight.
    pub async fn wait(&mut self) -> Committed {
        let Some(handle) = self.running.as_mut() else {
            return std::future::pending().await;
        };
        let done = match handle.await {
            Ok(done) => done,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("commit task cancelled: {e}"),
        };
        self.running = None;
        done
    }
}

/// Counts a finished commit's report.
pub(crate) fn apply(parts: &Parts, tally: &mut Tally, done: Committed) {
    tally.skip(SkipReason::Seen, done.seen);
    tally.commit_latency.observe(done.took);
    if let Some(e) = done.error {
        storage_error(parts, tally, e);
    }
}

/// What a commit needs away from the scheduler.
struct CommitTask {
    frontier: Arc<dyn Frontier>,
    cfg: Arc<CrawlConfig>,
    progress: Arc<Progress>,
    item_tx: mpsc::Sender<ItemBatch>,
}

impl CommitTask {
    async fn run(self, commit: Commit) -> Committed {
        let started = std::time::Instant::now();
        let result = self.frontier.commit(commit).await;
        let took = started.elapsed();
        let (seen, stats, batch, error) = match result {
            Ok(report) => {
                let batch = (!report.items.is_empty() || report.journaled_to.is_some())
                    .then_some(ItemBatch { items: report.items, journaled_to: report.journaled_to });
                (report.pushed.seen as u64, report.stats, batch, None)
            }
            Err(e) => (0, None, None, Some(e)),
        };
        let stats = match stats {
            Some(s) => Some(s),
            None => self.frontier.stats().await.ok(),
        };
        if let Some(stats) = stats {
            self.progress.queued.store(stats.queued as u64, Ordering::Relaxed);
        }
        if let Some(batch) = batch {
            self.cfg.listeners.items(&batch.items);
            // Back-pressure: a slow sink holds this commit open, and the next waits for it.
            let _ = self.item_tx.send(batch).await;
        }
        Committed { seen, error, took }
    }
}
