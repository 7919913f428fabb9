//! What a running crawl shows those who watch it (`Engine::live`): the summary so far, its
//! busiest and paused hosts, and its last failures. The scheduler publishes it; readers
//! never wait on the crawl.

use std::collections::VecDeque;
use std::time::Duration;

use kumo_frontier::{FailureRecord, HostView};
use serde::Serialize;

use crate::Summary;

/// Hosts shown: the most queued, paused ones first.
pub const LIVE_HOSTS: usize = 20;
/// Failures kept, newest first.
pub const LIVE_FAILURES: usize = 20;

/// One publication.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// The run's summary so far (its `status` `started`), or its last one once it ended.
    pub summary: Summary,
    /// The hosts worth showing: paused ones first, then the most queued, at most
    /// [`LIVE_HOSTS`].
    pub hosts: Vec<LiveHost>,
    /// The last requests recorded as failed, newest first, at most [`LIVE_FAILURES`]; those
    /// queued again since are left out.
    pub recent_failures: Vec<FailureRecord>,
    /// With workers sharing the crawl (`--redis`): the whole crawl's counts, beside this
    /// worker's own in `summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crawl: Option<CrawlTotals>,
}

/// A shared crawl's counts: every worker's last saved counters added up (those that left
/// included; each worker's lag by at most its last commit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CrawlTotals {
    /// Workers that have saved counters, those that left included.
    pub workers: usize,
    /// Responses received (any status).
    pub pages: u64,
    /// Body bytes received, after decoding.
    pub bytes: u64,
    /// Items of committed pages.
    pub items: u64,
    /// Fetches tried again.
    pub retries: u64,
    /// Requests given up for good.
    pub failed: u64,
    /// Errors counted, every stage and kind together.
    pub errors: u64,
}

/// The totals of a shared crawl from its workers' saved counters; `None` when the frontier
/// is one process's own.
pub(crate) async fn crawl_totals(frontier: &dyn kumo_frontier::Frontier) -> Option<CrawlTotals> {
    let saved = frontier.workers_counters().await.ok()?;
    if saved.is_empty() {
        return None;
    }
    let mut t = CrawlTotals { workers: saved.len(), ..CrawlTotals::default() };
    for (_, bytes) in saved {
        let w = crate::results::Tally::restore(&bytes);
        t.pages += w.pages;
        t.bytes += w.bytes;
        t.items += w.items;
        t.retries += w.retries;
        t.failed += w.failed;
        t.errors += w.errors.values().sum::<u64>();
    }
    Some(t)
}

/// A host as the status shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LiveHost {
    /// The host as the frontier keys it: `host[:port]`.
    pub host: String,
    /// Requests queued, those backing off included.
    pub queued: usize,
    /// Retried requests waiting out their back-off.
    pub backing_off: usize,
    /// The host's delay: the largest of its rule's, its Crawl-delay and its learned delay.
    pub delay: Duration,
    /// How much longer its server asked it to wait, if it is paused.
    pub paused_for: Option<Duration>,
}

/// The hosts worth showing of `all`: paused ones, then the most queued, at most
/// [`LIVE_HOSTS`].
pub(crate) fn busiest(mut all: Vec<HostView>) -> Vec<LiveHost> {
    let key = |h: &HostView| (h.paused_for.is_none(), std::cmp::Reverse(h.queued));
    if all.len() > LIVE_HOSTS {
        all.select_nth_unstable_by_key(LIVE_HOSTS, key);
        all.truncate(LIVE_HOSTS);
    }
    all.sort_by_key(key);
    all.into_iter()
        .map(|h| LiveHost {
            host: h.key.to_string(),
            queued: h.queued,
            backing_off: h.backing_off,
            delay: h.delay,
            paused_for: h.paused_for,
        })
        .collect()
}

/// The last failures, kept by the commit that records them.
#[derive(Debug, Default)]
pub(crate) struct RecentFailures(VecDeque<FailureRecord>);

impl RecentFailures {
    pub fn note(&mut self, f: &FailureRecord) {
        if self.0.len() == LIVE_FAILURES {
            self.0.pop_back();
        }
        self.0.push_front(f.clone());
    }

    /// Forgets the failures of `kinds` (all if empty): they were queued again.
    pub fn forget(&mut self, kinds: &[kumo_core::ErrorKind]) {
        self.0.retain(|f| !kinds.is_empty() && !kinds.contains(&f.kind));
    }

    pub fn list(&self) -> Vec<FailureRecord> {
        self.0.iter().cloned().collect()
    }
}
