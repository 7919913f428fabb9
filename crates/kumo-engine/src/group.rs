//! Group commit: page results wait a moment in the scheduler so that one frontier commit
//! covers many pages. With a durable frontier every commit is a write to disk, and its fixed
//! cost dominates when a commit holds one or two pages.
//!
//! A result may wait only when committing it later changes nothing but the moment its work
//! becomes visible: a fetched page or a robots.txt skip. Its lease's host slot is released at
//! once ([`Frontier::release`](kumo_frontier::Frontier::release)), so waiting never holds a
//! host idle. Anything that changes a host's politeness (a retry, a pause, a deferral, a
//! latency sample for the adaptive throttle) is committed at once, with the group before it.

use std::time::Duration;

use kumo_frontier::LeaseId;
use tokio::time::Instant;

use crate::stages::{Outcome, PageResult};

/// Results that wait for their commit.
pub(crate) struct Group {
    results: Vec<PageResult>,
    /// The longest a result waits: short beside a page's fetch, long enough to gather dozens
    /// of pages at full speed (the frontier's `group_linger`).
    linger: Duration,
    /// When the oldest waiting result arrived.
    since: Option<Instant>,
}

impl Group {
    /// Commit once this many results wait, whatever their age.
    pub const MAX: usize = 64;

    pub fn new(linger: Duration) -> Self {
        Group { results: Vec::new(), linger, since: None }
    }

    /// Whether committing `r` a little later changes nothing but when its work shows.
    pub fn can_wait(r: &PageResult) -> bool {
        r.adjust.is_none()
            && r.sample.is_none()
            && matches!(r.outcome, Outcome::Page { .. } | Outcome::Skipped(_))
    }

    /// Adds results; returns the leases whose host slots may be released now (none when a
    /// result must be committed at once: the whole group goes then).
    pub fn add(&mut self, batch: Vec<PageResult>) -> Option<Vec<LeaseId>> {
        let all_wait = batch.iter().all(Self::can_wait);
        let ids = all_wait.then(|| batch.iter().map(|r| r.lease).collect());
        self.since.get_or_insert_with(Instant::now);
        self.results.extend(batch);
        ids
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.results.len() >= Self::MAX
    }

    /// When the group must be committed at the latest.
    pub fn deadline(&self) -> Option<Instant> {
        self.since.map(|t| t + self.linger)
    }

    pub fn take(&mut self) -> Vec<PageResult> {
        self.since = None;
        std::mem::take(&mut self.results)
    }
}
