//! The [`Frontier`] implementation: every commit is one atomic write batch holding the acks,
//! the new requests and their fingerprints, retries, failures, the items and the counters.
//! Leasing writes nothing: a lease is the request's queue entry, removed only when its
//! completion commits.

use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use fjall::OwnedWriteBatch;
use kumo_core::{ErrorKind, Fingerprint, Priority, Request, StoredRequest};
use kumo_frontier::schedule::{Entry, Leased};
use kumo_frontier::{
    Commit, CommitReport, Completion, FailureRecord, Frontier, FrontierError, FrontierStats, HostAdjustment,
    HostFigures, HostQueue, HostView, Lease, LeaseId, LiftedPause, PushReport, Readiness, RequeueReport,
    StoredFailure, later,
};

use crate::error::{db, encode};
use crate::hosts::{Clock, HostRecord};
use crate::keys;
use crate::store::{COUNTERS, EmbeddedStore, ITEMS_END, Inner, Spaces};

/// A queued request as stored: its JSON, with the back-off it waits out if it has one.
fn queued_value(request: &mut StoredRequest, not_before_ms: Option<u64>) -> Result<Vec<u8>, FrontierError> {
    // Set only for the write: in memory the table keeps the back-off as an instant.
    request.not_before_ms = not_before_ms;
    let value = serde_json::to_vec(request).map_err(encode);
    request.not_before_ms = None;
    value
}

/// A stored queue entry: the request, and the instant its back-off ends if it has one.
pub(crate) fn read_queued(
    value: &[u8],
    clock: Clock,
) -> Result<(StoredRequest, Option<Instant>), serde_json::Error> {
    let mut request: StoredRequest = serde_json::from_slice(value)?;
    let not_before = request.not_before_ms.take().map(|ms| clock.to_instant(ms));
    Ok((request, not_before))
}

fn host_id(i: usize) -> u32 {
    // Host indexes are created one by one; four billion hosts is beyond any crawl.
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl EmbeddedStore {
    pub(crate) fn batch(&self) -> OwnedWriteBatch {
        self.db.batch().durability(Some(self.persist))
    }

    /// Seen-checks `requests`, queues the new ones in memory and in `b`.
    fn push_new(
        sp: &Spaces,
        inner: &mut Inner,
        b: &mut OwnedWriteBatch,
        requests: Vec<(Fingerprint, Request)>,
        now: Instant,
    ) -> Result<PushReport, FrontierError> {
        let mut report = PushReport::default();
        for (fp, req) in requests {
            // Over budget: not queued, nor marked seen (a raised budget takes it later).
            if !inner.seen.contains(fp) && !inner.table.admit(&req.host_key(), now) {
                report.budget += 1;
                continue;
            }
            if !inner.seen.insert(fp) {
                report.seen += 1;
                continue;
            }
            report.added += 1;
            b.insert(&sp.seen, &fp.to_bytes()[..], &[][..]);
            Self::enqueue_unchecked(sp, inner, b, &req.host_key(), StoredRequest::from(&req), now)?;
        }
        Ok(report)
    }

    /// Queues `request` under `host_key` in memory and in `b`, adding the host if it is new.
    /// No seen check: the caller has made it, or knows the fingerprint is seen (a re-queued
    /// failure).
    pub(crate) fn enqueue_unchecked(
        sp: &Spaces,
        inner: &mut Inner,
        b: &mut OwnedWriteBatch,
        host_key: &str,
        request: StoredRequest,
        now: Instant,
    ) -> Result<(), FrontierError> {
        let (i, created) = inner.table.host_for(host_key, now);
        if created {
            let rec = serde_json::to_vec(&HostRecord::new(host_key)).map_err(encode)?;
            sp.hosts.insert(b, &keys::host(host_id(i))[..], rec);
        }
        inner.queue_seq += 1;
        let seq = inner.queue_seq;
        let value = serde_json::to_vec(&request).map_err(encode)?;
        sp.queue.insert(b, &keys::queue(host_id(i), request.priority, seq)[..], value);
        inner.table.enqueue(i, Entry::new(seq, request), now);
        Ok(())
    }

    fn record_failure(
        sp: &Spaces,
        inner: &mut Inner,
        b: &mut OwnedWriteBatch,
        record: FailureRecord,
        request: StoredRequest,
    ) -> Result<(), FrontierError> {
        inner.failure_seq += 1;
        inner.failures += 1;
        let value = serde_json::to_vec(&StoredFailure { record, request }).map_err(encode)?;
        sp.failures.insert(b, &keys::seq(inner.failure_seq)[..], value);
        Ok(())
    }

    /// Writes the pacing of hosts leased since the last commit (only hosts with a delay or
    /// rate limits have any), so a restart keeps their spacing.
    fn save_pacing(sp: &Spaces, inner: &mut Inner, b: &mut OwnedWriteBatch) -> Result<(), FrontierError> {
        let paced = inner.table.take_paced_leases();
        if paced.is_empty() {
            return Ok(());
        }
        let clock = Clock::now();
        for i in paced {
            let rec = HostRecord::from_pacing(inner.table.host_key(i), inner.table.pacing(i), clock);
            sp.hosts.insert(b, &keys::host(host_id(i))[..], serde_json::to_vec(&rec).map_err(encode)?);
        }
        Ok(())
    }

    pub(crate) fn apply(&self, c: Commit) -> Result<CommitReport, FrontierError> {
        // Before anything changes in memory: a halted store's indexes must stay as they were.
        self.halt.check()?;
        let sp = &self.sp;
        let clock = Clock::now();
        let now = clock.instant();
        let mut b = self.batch();
        let mut inner = self.lock();
        let inner = &mut *inner;
        let pushed = Self::push_new(sp, inner, &mut b, c.pushes, now)?;
        let mut report = CommitReport { pushed, ..Default::default() };
        for completion in c.completions {
            match completion {
                Completion::Done { lease, discovered, page } => {
                    // Discoveries first: they are new work even if the lease went stale.
                    let r = Self::push_new(sp, inner, &mut b, discovered, now)?;
                    report.pushed.merge(r);
                    if let Some(page) = page {
                        let value = serde_json::to_vec(&page).map_err(encode)?;
                        sp.pages.insert(&mut b, page.request.url.as_bytes(), value);
                    }
                    match inner.table.take_lease(lease) {
                        Ok(out) => {
                            let k = keys::queue(host_id(out.host), out.entry.request.priority, out.entry.seq);
                            sp.queue.remove(&mut b, &k[..]);
                            inner.table.note_outcome(out.host, true);
                            inner.table.schedule(out.host, now);
                        }
                        Err(_) => report.stale += 1,
                    }
                }
                Completion::Retry { lease, after } => {
                    let Ok(mut out) = inner.table.take_lease(lease) else {
                        report.stale += 1;
                        continue;
                    };
                    out.entry.request.retries += 1;
                    // The back-off is written with the request, so a restart keeps it.
                    let not_before = (!after.is_zero()).then(|| clock.to_unix_ms(later(now, after)));
                    let k = keys::queue(host_id(out.host), out.entry.request.priority, out.entry.seq);
                    sp.queue.insert(&mut b, &k[..], queued_value(&mut out.entry.request, not_before)?);
                    inner.table.retry_later(out.host, out.entry, after, now);
                }
                Completion::Defer { lease, after } => {
                    let Ok(out) = inner.table.take_lease(lease) else {
                        report.stale += 1;
                        continue;
                    };
                    inner.table.requeue_front(out.host, out.entry, after, now);
                }
                Completion::Failed { lease, failure } => {
                    let Ok(out) = inner.table.take_lease(lease) else {
                        report.stale += 1;
                        continue;
                    };
                    let k = keys::queue(host_id(out.host), out.entry.request.priority, out.entry.seq);
                    sp.queue.remove(&mut b, &k[..]);
                    Self::record_failure(sp, inner, &mut b, failure, out.entry.request)?;
                    inner.table.note_outcome(out.host, false);
                    inner.table.schedule(out.host, now);
                }
            }
        }
        Self::save_pacing(sp, inner, &mut b)?;
        // The items go to the item log first; the batch records its new end, so they count
        // exactly when the pages that produced them do.
        let log_end = match c.items.is_empty() {
            true => None,
            false => {
                let end = inner.items.append(&c.items).map_err(|e| self.halt.fail(e))?;
                sp.meta.insert(&mut b, ITEMS_END, end.encode());
                report.journaled_to = Some(end.last_seq);
                Some(end)
            }
        };
        report.items = c.items;
        if let Some(counters) = c.counters {
            sp.meta.insert(&mut b, COUNTERS, counters(&report.pushed));
        }
        self.halt.commit(b, &self.dir)?;
        if let Some(end) = log_end {
            inner.items.committed(end);
        }
        Ok(report)
    }
}

impl EmbeddedStore {
    /// Up to `max` entries of a level that spilled, after sequence number `after`, in order.
    fn spilled(
        sp: &Spaces,
        clock: Clock,
        host: usize,
        prio: Priority,
        after: u64,
        max: usize,
    ) -> Result<Vec<Entry>, FrontierError> {
        let from = keys::queue(host_id(host), prio, after.saturating_add(1));
        let to = keys::queue(host_id(host), prio, u64::MAX);
        // `max` follows `-c`; what is spilled may be far less.
        let mut out = Vec::with_capacity(max.min(256));
        for kv in sp.queue.range(&from, &to).take(max) {
            let (k, v) = kv.map_err(db)?;
            let (_, _, seq) =
                keys::parse_queue(&k).ok_or_else(|| FrontierError::Storage("bad queue key".into()))?;
            let (request, not_before) = read_queued(&v, clock)
                .map_err(|e| FrontierError::Storage(format!("queued request {seq}: {e}")))?;
            out.push(Entry { seq, request, not_before });
        }
        Ok(out)
    }
}

#[async_trait]
impl Frontier for EmbeddedStore {
    fn known(&self, fps: &[Fingerprint]) -> Vec<bool> {
        // Only when the lock is free: a commit holds it through its disk write, and a hint
        // is not worth a parser's wait.
        match self.inner.try_lock() {
            Ok(inner) => fps.iter().map(|&fp| inner.seen.contains(fp)).collect(),
            Err(_) => vec![false; fps.len()],
        }
    }

    async fn push(&self, requests: Vec<(Fingerprint, Request)>) -> Result<PushReport, FrontierError> {
        Ok(self.apply(Commit { pushes: requests, ..Default::default() })?.pushed)
    }

    async fn lease(&self, max: usize) -> Result<Vec<Lease>, FrontierError> {
        let sp = &self.sp;
        let mut inner = self.lock();
        let clock = Clock::now();
        let mut refill = |host, prio, after, max| Self::spilled(sp, clock, host, prio, after, max);
        let Leased { leases, invalid } = inner.table.lease(max, clock.instant(), &mut refill)?;
        let mut b = self.batch();
        // A paced host's last lease is written before its request leaves, so a restart after a
        // kill keeps the spacing the server sees (paced hosts lease slowly: this is cheap).
        Self::save_pacing(sp, &mut inner, &mut b)?;
        if !invalid.is_empty() {
            // Entries that no longer parse as requests leave the queue as failures.
            for (host, entry, message) in invalid {
                let k = keys::queue(host_id(host), entry.request.priority, entry.seq);
                sp.queue.remove(&mut b, &k[..]);
                let record = FailureRecord {
                    url: entry.request.url.to_string(),
                    kind: ErrorKind::InvalidUrl,
                    message,
                    attempts: entry.request.retries,
                    last_status: None,
                    at: SystemTime::now(),
                };
                Self::record_failure(sp, &mut inner, &mut b, record, entry.request)?;
            }
        }
        if !b.is_empty() {
            self.halt.commit(b, &self.dir)?;
        }
        Ok(leases)
    }

    async fn release(&self, leases: &[LeaseId]) -> Result<(), FrontierError> {
        // In memory only: a crash hands the lease out again whether or not it was released.
        self.lock().table.release_all(leases, Instant::now());
        Ok(())
    }

    async fn complete(&self, batch: Vec<Completion>) -> Result<PushReport, FrontierError> {
        let first = batch.first().map(|c| match c {
            Completion::Done { lease, .. }
            | Completion::Retry { lease, .. }
            | Completion::Defer { lease, .. }
            | Completion::Failed { lease, .. } => lease.0,
        });
        let r = self.apply(Commit { completions: batch, ..Default::default() })?;
        match (r.stale, first) {
            (0, _) => Ok(r.pushed),
            (_, id) => Err(FrontierError::UnknownLease(id.unwrap_or(0))),
        }
    }

    async fn commit(&self, c: Commit) -> Result<CommitReport, FrontierError> {
        self.apply(c)
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
        let mut inner = self.lock();
        let i = inner.table.adjust(host_key, adj, Instant::now());
        let rec = HostRecord::from_pacing(host_key, inner.table.pacing(i), Clock::now());
        let mut b = self.batch();
        self.sp.hosts.insert(&mut b, &keys::host(host_id(i))[..], serde_json::to_vec(&rec).map_err(encode)?);
        self.halt.commit(b, &self.dir)
    }

    async fn cap_pauses(
        &self,
        hosts: Option<&[&str]>,
        max: Duration,
    ) -> Result<Vec<LiftedPause>, FrontierError> {
        self.cap_host_pauses(hosts, max)
    }

    async fn hosts(&self) -> Result<Vec<HostView>, FrontierError> {
        Ok(self.lock().table.host_views(Instant::now()))
    }

    async fn learned_delays(&self) -> Result<Vec<(String, Duration)>, FrontierError> {
        Ok(self.lock().table.learned_delays().into_iter().map(|(k, d)| (k.to_string(), d)).collect())
    }

    async fn host_queue(&self, host_key: &str, max: usize) -> Result<Option<HostQueue>, FrontierError> {
        let sp = &self.sp;
        let clock = Clock::now();
        let inner = self.lock();
        inner.table.peek(host_key, max, &mut |host, prio, after, max| {
            Self::spilled(sp, clock, host, prio, after, max)
        })
    }

    async fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, FrontierError> {
        Ok(EmbeddedStore::requeue_failures(self, kinds)?)
    }

    async fn stats(&self) -> Result<FrontierStats, FrontierError> {
        let inner = self.lock();
        Ok(FrontierStats {
            queued: inner.table.queued(),
            leased: inner.table.leased(),
            hosts: inner.table.hosts(),
            failed: inner.failures,
            hosts_over_budget: inner.table.budgets_used().0,
            domains_over_budget: inner.table.budgets_used().1,
        })
    }

    async fn host_figures(&self) -> Result<Option<HostFigures>, FrontierError> {
        Ok(Some(self.lock().table.host_figures()))
    }

    async fn failures(&self) -> Result<Vec<FailureRecord>, FrontierError> {
        Ok(self.stored_failures()?.into_iter().map(|(_, f)| f.record).collect())
    }

    async fn saved_counters(&self) -> Result<Option<Vec<u8>>, FrontierError> {
        Ok(self.sp.meta.get(COUNTERS).map_err(db)?.map(|v| v.to_vec()))
    }
}

impl EmbeddedStore {
    /// [`Frontier::cap_pauses`], for a running crawl or a stopped one's state: the hosts
    /// whose pause was cut get their records rewritten in one batch.
    pub fn cap_host_pauses(
        &self,
        hosts: Option<&[&str]>,
        max: Duration,
    ) -> Result<Vec<LiftedPause>, FrontierError> {
        let mut inner = self.lock();
        let clock = Clock::now();
        let cut = inner.table.cap_pauses(hosts, max, clock.instant());
        if cut.is_empty() {
            return Ok(cut);
        }
        let mut b = self.batch();
        for c in &cut {
            let Some(i) = inner.table.host_index(&c.host) else { continue };
            let rec = HostRecord::from_pacing(&c.host, inner.table.pacing(i), clock);
            self.sp.hosts.insert(
                &mut b,
                &keys::host(host_id(i))[..],
                serde_json::to_vec(&rec).map_err(encode)?,
            );
        }
        self.halt.commit(b, &self.dir)?;
        Ok(cut)
    }

    /// Every recorded failure with its sequence number, oldest first.
    pub fn stored_failures(&self) -> Result<Vec<(u64, StoredFailure)>, FrontierError> {
        let mut out = Vec::new();
        for kv in self.sp.failures.iter() {
            let (k, v) = kv.map_err(db)?;
            let seq = keys::parse_u64(&k).unwrap_or(0);
            let f: StoredFailure = serde_json::from_slice(&v)
                .map_err(|e| FrontierError::Storage(format!("failure {seq}: {e}")))?;
            out.push((seq, f));
        }
        Ok(out)
    }
}
