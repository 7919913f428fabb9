//! The scheduler's commits, one in flight at a time while the scheduler goes on: it keeps
//! leasing and gathering results while the frontier writes the last group. With a shared
//! frontier a commit is a round trip, and waiting for it left the downloaders idle.
//!
//! Commits still apply in order: a new one starts only after the one before has finished, so
//! the counters saved with each count everything before it, and items reach the pipeline in
//! the order the frontier journaled them.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

use kumo_core::SkipReason;
use kumo_frontier::{Commit, Completion, Frontier, FrontierError, PushReport};
use kumo_warc::{Records, WarcWriter};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::CrawlConfig;
use crate::Progress;
use crate::buffers::Gauged;
use crate::results::{ItemBatch, Tally, prepare, storage_error};
use crate::run::Parts;
use crate::stages::PageResult;

/// What a finished commit tells the scheduler.
pub(crate) struct Committed {
    /// Links the frontier had seen already.
    seen: u64,
    /// Links over their host's or domain's page budget.
    budget: u64,
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
        parts: &mut Parts,
        mut results: Vec<PageResult>,
        tally: &mut Tally,
        item_tx: &Gauged<mpsc::Sender<ItemBatch>>,
    ) {
        let archive: Vec<Records> = results.iter_mut().flat_map(|r| std::mem::take(&mut r.archive)).collect();
        let prepared = prepare(parts, results, tally).await;
        for c in &prepared.completions {
            if let Completion::Failed { failure, .. } = c {
                parts.recent_failures.note(failure);
            }
        }
        self.finish(parts, tally).await;
        let commit = Commit {
            pushes: prepared.pushes,
            completions: prepared.completions,
            items: prepared.items,
            item_sources: prepared.item_sources,
            counters: None,
        };
        let task = CommitTask {
            frontier: parts.frontier.clone(),
            cfg: parts.cfg.clone(),
            progress: parts.progress.clone(),
            item_tx: item_tx.clone(),
            warc: parts.warc.clone(),
            warc_failure: parts.warc_failure.clone(),
            commit_failure: parts.commit_failure.clone(),
        };
        // Saved with the commit: everything counted so far, with what it finds seen.
        self.running = Some(tokio::spawn(task.run(commit, tally.clone(), archive)));
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
    tally.skip(SkipReason::Budget, done.budget);
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
    item_tx: Gauged<mpsc::Sender<ItemBatch>>,
    warc: Option<Arc<Mutex<WarcWriter>>>,
    warc_failure: Arc<OnceLock<String>>,
    commit_failure: Arc<OnceLock<String>>,
}

impl CommitTask {
    /// Appends the pages' WARC records, then commits them with `tally`, which says where the
    /// archive ends now. Records that cannot be written leave their pages uncommitted (they
    /// are fetched again when the crawl resumes) and stop the crawl.
    async fn run(self, mut commit: Commit, mut tally: Tally, archive: Vec<Records>) -> Committed {
        if let Some(w) = &self.warc {
            let appended = if archive.is_empty() {
                // Nothing to write: where the archive ends needs no blocking thread.
                Ok(Ok(w.lock().unwrap_or_else(|e| e.into_inner()).position()))
            } else {
                let w = w.clone();
                tokio::task::spawn_blocking(move || {
                    w.lock().unwrap_or_else(|e| e.into_inner()).append(&archive).map(Some)
                })
                .await
            };
            match appended {
                Ok(Ok(position)) => tally.warc = position,
                Ok(Err(e)) => return self.unarchived(e.to_string()),
                Err(e) => return self.unarchived(format!("the WARC writer panicked: {e}")),
            }
        }
        commit.counters = Some(Box::new(move |pushed| {
            let mut tally = tally.clone();
            tally.skip(SkipReason::Seen, pushed.seen as u64);
            tally.skip(SkipReason::Budget, pushed.budget as u64);
            serde_json::to_vec(&tally).unwrap_or_default()
        }));
        let started = std::time::Instant::now();
        let result = self.frontier.commit(commit).await;
        let took = started.elapsed();
        let (pushed, stats, batch, error) = match result {
            Ok(report) => {
                let batch = (!report.items.is_empty() || report.journaled_to.is_some())
                    .then_some(ItemBatch { items: report.items, journaled_to: report.journaled_to });
                (report.pushed, report.stats, batch, None)
            }
            Err(e) => {
                // The first failure stops the crawl and is the one named.
                let _ = self.commit_failure.set(e.to_string());
                (PushReport::default(), None, None, Some(e))
            }
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
        Committed { seen: pushed.seen as u64, budget: pushed.budget as u64, error, took }
    }

    /// The archive failed: nothing is committed, and the crawl stops (the first failure is
    /// the one named).
    fn unarchived(&self, message: String) -> Committed {
        tracing::error!(error = %message, "cannot write the WARC archive; stopping");
        let _ = self.warc_failure.set(message);
        Committed { seen: 0, budget: 0, error: None, took: std::time::Duration::ZERO }
    }
}
