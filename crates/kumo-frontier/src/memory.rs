//! The in-memory frontier: the shared [`HostTable`] under one lock, with a seen set and a
//! failure list. Nothing spills and nothing survives the process.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use kumo_core::request::host_key;
use kumo_core::{ErrorKind, Fingerprint, Request, StoredRequest, Url};

use crate::schedule::{Entry, HostTable, Leased};
use crate::{
    Commit, CommitReport, Completion, FailureRecord, Frontier, FrontierError, FrontierStats, HostAdjustment,
    HostFigures, HostQueue, HostView, Lease, LeaseId, LiftedPause, MemorySeenSet, Politeness, PushReport,
    Readiness, RequeueReport, SeenSet,
};

/// Settings of the in-memory frontier.
#[derive(Debug, Clone)]
pub struct MemoryFrontierConfig {
    /// The per-host rules leases are handed out by.
    pub politeness: Politeness,
    /// A lease not completed within this time is taken back and re-queued.
    pub lease_ttl: Duration,
}

impl Default for MemoryFrontierConfig {
    fn default() -> Self {
        MemoryFrontierConfig { politeness: Politeness::default(), lease_ttl: Duration::from_secs(600) }
    }
}

/// The in-memory [`Frontier`], with a [`SeenSet`] of choice: by default the one exact on 64
/// bits, [`ExactMemorySeenSet`](crate::ExactMemorySeenSet) for all 128.
pub struct MemoryFrontier<S: SeenSet = MemorySeenSet> {
    seen: Arc<S>,
    state: Mutex<State>,
}

struct State {
    table: HostTable,
    next_seq: u64,
    /// Each failure with its request, so it can be queued again.
    failures: Vec<(FailureRecord, StoredRequest)>,
}

impl State {
    fn enqueue(&mut self, req: &Request, now: Instant) {
        self.enqueue_stored(&req.host_key(), StoredRequest::from(req), now);
    }

    fn enqueue_stored(&mut self, host: &str, request: StoredRequest, now: Instant) {
        let (i, _) = self.table.host_for(host, now);
        self.next_seq += 1;
        self.table.enqueue(i, Entry::new(self.next_seq, request), now);
    }

    fn lease(&mut self, max: usize, now: Instant) -> Vec<Lease> {
        let never = &mut |_, _, _, _| Ok(Vec::new());
        let Leased { leases, invalid } = self.table.lease(max, now, never).unwrap_or_default();
        for (_, entry, message) in invalid {
            let record = FailureRecord {
                url: entry.request.url.to_string(),
                kind: ErrorKind::InvalidUrl,
                message,
                attempts: entry.request.retries,
                last_status: None,
                at: std::time::SystemTime::now(),
            };
            self.failures.push((record, entry.request));
        }
        leases
    }
}

impl MemoryFrontier<MemorySeenSet> {
    /// An empty frontier with a [`MemorySeenSet`].
    pub fn new(cfg: MemoryFrontierConfig) -> Self {
        Self::with_seen(cfg, Arc::new(MemorySeenSet::new()))
    }
}

impl<S: SeenSet> MemoryFrontier<S> {
    /// An empty frontier that de-duplicates through `seen` (which may already hold fingerprints).
    pub fn with_seen(cfg: MemoryFrontierConfig, seen: Arc<S>) -> Self {
        MemoryFrontier {
            seen,
            state: Mutex::new(State {
                table: HostTable::new(cfg.politeness, cfg.lease_ttl, usize::MAX),
                next_seq: 0,
                failures: Vec::new(),
            }),
        }
    }

    /// Its seen set.
    pub fn seen(&self) -> &Arc<S> {
        &self.seen
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation keeps the state consistent before it can panic, so a poisoned lock
        // still holds a usable frontier.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn filter_new(
        &self,
        requests: Vec<(Fingerprint, Request)>,
    ) -> Result<(Vec<Request>, PushReport), FrontierError> {
        if requests.is_empty() {
            return Ok((Vec::new(), PushReport::default()));
        }
        let mut report = PushReport::default();
        let (requests, counted) = self.within_budget(requests, &mut report).await?;
        let fps: Vec<Fingerprint> = requests.iter().map(|(f, _)| *f).collect();
        let fresh = self.seen.insert_many(&fps).await?;
        let mut out = Vec::with_capacity(requests.len());
        let now = Instant::now();
        for (((_, req), new), counted) in requests.into_iter().zip(fresh).zip(counted) {
            if new {
                report.added += 1;
                out.push(req);
            } else {
                report.seen += 1;
                // Counted against its budget, but a repeat within the batch.
                if counted {
                    self.lock().table.unadmit(&req.host_key(), now);
                }
            }
        }
        Ok((out, report))
    }

    /// Drops the links whose host or domain has used its page budget (not marking them
    /// seen), and says which of the rest were counted against a budget.
    async fn within_budget(
        &self,
        requests: Vec<(Fingerprint, Request)>,
        report: &mut PushReport,
    ) -> Result<(Vec<(Fingerprint, Request)>, Vec<bool>), FrontierError> {
        if !self.lock().table.has_budget() {
            let n = requests.len();
            return Ok((requests, vec![false; n]));
        }
        let fps: Vec<Fingerprint> = requests.iter().map(|(f, _)| *f).collect();
        let known = match self.seen.known_now(&fps) {
            Some(known) => known,
            None => {
                let mut known = Vec::with_capacity(fps.len());
                for fp in &fps {
                    known.push(self.seen.contains(*fp).await?);
                }
                known
            }
        };
        let now = Instant::now();
        let mut st = self.lock();
        let mut kept = Vec::with_capacity(requests.len());
        let mut counted = Vec::with_capacity(requests.len());
        // A link twice in the batch counts once: its repeat is seen.
        let mut in_batch = std::collections::HashSet::new();
        for (r, known) in requests.into_iter().zip(known) {
            if known || !in_batch.insert(r.0) {
                kept.push(r);
                counted.push(false);
            } else if st.table.admit(&r.1.host_key(), now) {
                kept.push(r);
                counted.push(true);
            } else {
                report.budget += 1;
            }
        }
        Ok((kept, counted))
    }
}

#[async_trait]
impl<S: SeenSet + 'static> Frontier for MemoryFrontier<S> {
    fn known(&self, fps: &[Fingerprint]) -> Vec<bool> {
        self.seen.known_now(fps).unwrap_or_else(|| vec![false; fps.len()])
    }

    async fn push(&self, requests: Vec<(Fingerprint, Request)>) -> Result<PushReport, FrontierError> {
        let (fresh, report) = self.filter_new(requests).await?;
        let now = Instant::now();
        let mut st = self.lock();
        for r in &fresh {
            st.enqueue(r, now);
        }
        Ok(report)
    }

    async fn lease(&self, max: usize) -> Result<Vec<Lease>, FrontierError> {
        Ok(self.lock().lease(max, Instant::now()))
    }

    async fn release(&self, leases: &[LeaseId]) -> Result<(), FrontierError> {
        self.lock().table.release_all(leases, Instant::now());
        Ok(())
    }

    async fn complete(&self, batch: Vec<Completion>) -> Result<PushReport, FrontierError> {
        let (report, stale) = self.complete_counting(batch).await?;
        match stale {
            Some((_, first)) => Err(first),
            None => Ok(report),
        }
    }

    /// One pass over the batch, not one call per completion: this is the in-memory crawl's
    /// hot path.
    async fn commit(&self, c: Commit) -> Result<CommitReport, FrontierError> {
        let mut pushed = self.push(c.pushes).await?;
        let (report, stale) = self.complete_counting(c.completions).await?;
        pushed.merge(report);
        let stale = stale.map_or(0, |(n, _)| n);
        Ok(CommitReport { pushed, stale, journaled_to: None, items: c.items, stats: None })
    }

    async fn readiness(&self) -> Result<Readiness, FrontierError> {
        Ok(self.lock().table.readiness(Instant::now()))
    }

    async fn unresolved(&self, max: usize) -> Result<Vec<String>, FrontierError> {
        Ok(self.lock().table.take_unresolved(max).iter().map(ToString::to_string).collect())
    }

    async fn resolved(&self, host_key: &str, addr: Option<std::net::IpAddr>) -> Result<(), FrontierError> {
        self.lock().table.resolved(host_key, addr, Instant::now());
        Ok(())
    }

    async fn adjust_host(&self, host_key: &str, adj: HostAdjustment) -> Result<(), FrontierError> {
        self.lock().table.adjust(host_key, adj, Instant::now());
        Ok(())
    }

    async fn cap_pauses(
        &self,
        hosts: Option<&[&str]>,
        max: Duration,
    ) -> Result<Vec<LiftedPause>, FrontierError> {
        Ok(self.lock().table.cap_pauses(hosts, max, Instant::now()))
    }

    async fn hosts(&self) -> Result<Vec<HostView>, FrontierError> {
        Ok(self.lock().table.host_views(Instant::now()))
    }

    async fn learned_delays(&self) -> Result<Vec<(String, Duration)>, FrontierError> {
        Ok(self.lock().table.learned_delays().into_iter().map(|(k, d)| (k.to_string(), d)).collect())
    }

    async fn stats(&self) -> Result<FrontierStats, FrontierError> {
        let st = self.lock();
        Ok(FrontierStats {
            queued: st.table.queued(),
            leased: st.table.leased(),
            hosts: st.table.hosts(),
            failed: st.failures.len(),
            hosts_over_budget: st.table.budgets_used().0,
            domains_over_budget: st.table.budgets_used().1,
        })
    }

    async fn host_figures(&self) -> Result<Option<HostFigures>, FrontierError> {
        Ok(Some(self.lock().table.host_figures()))
    }

    async fn failures(&self) -> Result<Vec<FailureRecord>, FrontierError> {
        Ok(self.lock().failures.iter().map(|(f, _)| f.clone()).collect())
    }

    async fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, FrontierError> {
        let now = Instant::now();
        let mut st = self.lock();
        let st = &mut *st;
        let mut report = RequeueReport::default();
        let mut kept = Vec::new();
        for (record, mut request) in std::mem::take(&mut st.failures) {
            let chosen = kinds.is_empty() || kinds.contains(&record.kind);
            let host = Url::parse(&request.url).ok().map(|u| host_key(&u));
            match host {
                Some(host) if chosen => {
                    request.retries = 0;
                    request.not_before_ms = None;
                    st.enqueue_stored(&host, request, now);
                    report.requeued += 1;
                }
                _ => {
                    report.invalid += usize::from(chosen);
                    kept.push((record, request));
                }
            }
        }
        st.failures = kept;
        report.remaining = st.failures.len();
        Ok(report)
    }

    async fn host_queue(&self, host_key: &str, max: usize) -> Result<Option<HostQueue>, FrontierError> {
        self.lock().table.peek(host_key, max, &mut |_, _, _, _| Ok(Vec::new()))
    }
}

impl<S: SeenSet> MemoryFrontier<S> {
    /// The hosts known, with their queued counts (for progress displays and tests).
    pub fn host_queues(&self) -> Vec<(Arc<str>, usize)> {
        self.lock().table.host_queues()
    }
}

impl<S: SeenSet> MemoryFrontier<S> {
    /// Completes every lease of the batch; the leases no longer out are counted, with the
    /// first one's error.
    async fn complete_counting(
        &self,
        batch: Vec<Completion>,
    ) -> Result<(PushReport, Option<(usize, FrontierError)>), FrontierError> {
        let mut report = PushReport::default();
        let mut stale: Option<(usize, FrontierError)> = None;
        let mut note = |e: FrontierError| match &mut stale {
            Some((n, _)) => *n += 1,
            None => stale = Some((1, e)),
        };
        for c in batch {
            match c {
                Completion::Done { lease, discovered, .. } => {
                    // Seen-check first: if the lease is unknown the discoveries are still kept
                    // (they are new work either way), so nothing is lost.
                    let (fresh, r) = self.filter_new(discovered).await?;
                    report.merge(r);
                    let now = Instant::now();
                    let mut st = self.lock();
                    let taken = st.table.take_lease(lease);
                    for req in &fresh {
                        st.enqueue(req, now);
                    }
                    match taken {
                        Ok(out) => {
                            st.table.note_outcome(out.host, true);
                            st.table.schedule(out.host, now);
                        }
                        Err(e) => note(e),
                    }
                }
                Completion::Retry { lease, after } => {
                    let now = Instant::now();
                    let mut st = self.lock();
                    match st.table.take_lease(lease) {
                        Ok(mut out) => {
                            out.entry.request.retries += 1;
                            st.table.retry_later(out.host, out.entry, after, now);
                        }
                        Err(e) => note(e),
                    }
                }
                Completion::Defer { lease, after } => {
                    let now = Instant::now();
                    let mut st = self.lock();
                    match st.table.take_lease(lease) {
                        Ok(out) => st.table.requeue_front(out.host, out.entry, after, now),
                        Err(e) => note(e),
                    }
                }
                Completion::Failed { lease, failure } => {
                    let now = Instant::now();
                    let mut st = self.lock();
                    match st.table.take_lease(lease) {
                        Ok(out) => {
                            st.failures.push((failure, out.entry.request));
                            st.table.note_outcome(out.host, false);
                            st.table.schedule(out.host, now);
                        }
                        Err(e) => note(e),
                    }
                }
            }
        }
        Ok((report, stale))
    }
}
