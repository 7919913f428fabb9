//! The in-memory frontier: Mercator-style per-host queues under one lock.
//!
//! Each host has a queue per priority level, an in-flight count and the instant it may next
//! be fetched. Hosts with work sit in one of two heaps: `ready` (may be fetched now, ordered by
//! the priority of their best request, then first come) or `waiting` (ordered by the instant
//! their politeness delay ends or, for rate-limited hosts, a token frees in every window). Heap
//! entries carry the host's generation number; an entry whose
//! generation is stale is skipped, which is cheaper than removing it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use kumo_core::{ErrorKind, Fingerprint, Priority, Request, StoredRequest};

use crate::politeness::RateLog;
use crate::{
    Completion, FailureRecord, Frontier, FrontierError, FrontierStats, HostAdjustment, Lease, LeaseId,
    MemorySeenSet, Politeness, PushReport, Readiness, SeenSet,
};

/// Settings of the in-memory frontier.
#[derive(Debug, Clone)]
pub struct MemoryFrontierConfig {
    pub politeness: Politeness,
    /// A lease not completed within this time is taken back and re-queued.
    pub lease_ttl: Duration,
}

impl Default for MemoryFrontierConfig {
    fn default() -> Self {
        MemoryFrontierConfig { politeness: Politeness::default(), lease_ttl: Duration::from_secs(600) }
    }
}

/// The in-memory [`Frontier`], with a [`SeenSet`] of choice (the exact in-memory one by default).
pub struct MemoryFrontier<S: SeenSet = MemorySeenSet> {
    seen: Arc<S>,
    state: Mutex<State>,
}

struct Host {
    key: Arc<str>,
    /// Highest priority first. Requests wait in their compact form.
    queues: BTreeMap<Reverse<Priority>, VecDeque<StoredRequest>>,
    queued: usize,
    in_flight: u32,
    next_at: Instant,
    policy: crate::HostPolicy,
    /// Sliding-window rate limits; `None` (no cost at all) unless the host's rule has some.
    rate: Option<Box<RateLog>>,
    generation: u64,
}

impl Host {
    fn head_priority(&self) -> Option<Priority> {
        self.queues.keys().next().map(|r| r.0)
    }

    fn pop(&mut self) -> Option<StoredRequest> {
        let mut entry = self.queues.first_entry()?;
        let req = entry.get_mut().pop_front();
        if entry.get().is_empty() {
            entry.remove();
        }
        if req.is_some() {
            self.queued -= 1;
        }
        req
    }

    fn push(&mut self, req: StoredRequest, front: bool) {
        let q = self.queues.entry(Reverse(req.priority)).or_default();
        if front {
            q.push_front(req)
        } else {
            q.push_back(req)
        }
        self.queued += 1;
    }
}

struct Out {
    host: usize,
    request: StoredRequest,
    deadline: Instant,
}

struct State {
    cfg: MemoryFrontierConfig,
    hosts: Vec<Host>,
    host_ids: HashMap<Arc<str>, usize>,
    /// (priority of best request, Reverse(sequence), host, generation)
    ready: BinaryHeap<(Priority, Reverse<u64>, usize, u64)>,
    /// Reverse((instant, host, generation))
    waiting: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    leases: HashMap<u64, Out>,
    deadlines: BinaryHeap<Reverse<(Instant, u64)>>,
    next_lease: u64,
    seq: u64,
    queued: usize,
    failures: Vec<FailureRecord>,
}

impl State {
    fn host_for(&mut self, key: &str, now: Instant) -> usize {
        if let Some(&i) = self.host_ids.get(key) {
            return i;
        }
        let key: Arc<str> = Arc::from(key);
        let rule = self.cfg.politeness.rule_for(&key);
        let policy = rule.map_or(self.cfg.politeness.default, |r| r.policy);
        let rate = rule.and_then(|r| RateLog::new(r.rate_limits())).map(Box::new);
        self.hosts.push(Host {
            key: key.clone(),
            queues: BTreeMap::new(),
            queued: 0,
            in_flight: 0,
            next_at: now,
            policy,
            rate,
            generation: 0,
        });
        let i = self.hosts.len() - 1;
        self.host_ids.insert(key, i);
        i
    }

    /// Puts host `i` in the heap it belongs in now, invalidating older entries.
    fn schedule(&mut self, i: usize, now: Instant) {
        let h = &mut self.hosts[i];
        h.generation += 1;
        if h.queued == 0 || h.in_flight >= h.policy.parallelism.max(1) {
            return;
        }
        // The host may go when its delay has passed and every rate window has a token.
        let at = match &h.rate {
            None => h.next_at,
            Some(r) => r.next_free().map_or(h.next_at, |t| t.max(h.next_at)),
        };
        if at <= now {
            let prio = h.head_priority().unwrap_or_default();
            self.seq += 1;
            self.ready.push((prio, Reverse(self.seq), i, h.generation));
        } else {
            self.waiting.push(Reverse((at, i, h.generation)));
        }
    }

    fn enqueue(&mut self, req: &Request, now: Instant) {
        let key = req.host_key();
        let i = self.host_for(&key, now);
        self.enqueue_stored(i, StoredRequest::from(req), false, now);
    }

    fn enqueue_stored(&mut self, i: usize, req: StoredRequest, front: bool, now: Instant) {
        let h = &mut self.hosts[i];
        let was_best = h.head_priority();
        h.push(req, front);
        self.queued += 1;
        // Re-schedule only when the host's heap position may change.
        if h.queued == 1 || h.head_priority() != was_best {
            self.schedule(i, now);
        }
    }

    fn promote_waiting(&mut self, now: Instant) {
        while let Some(Reverse((at, i, generation))) = self.waiting.peek().copied() {
            if at > now {
                break;
            }
            self.waiting.pop();
            if self.hosts[i].generation == generation {
                self.schedule(i, now);
            }
        }
    }

    fn expire_leases(&mut self, now: Instant) {
        while let Some(Reverse((deadline, id))) = self.deadlines.peek().copied() {
            if deadline > now {
                break;
            }
            self.deadlines.pop();
            if let Some(out) = self.leases.get(&id)
                && out.deadline == deadline
            {
                let out = self.leases.remove(&id).expect("present");
                self.hosts[out.host].in_flight -= 1;
                self.enqueue_stored(out.host, out.request, true, now);
                self.schedule(out.host, now);
            }
        }
    }

    fn lease(&mut self, max: usize, now: Instant) -> Vec<Lease> {
        self.expire_leases(now);
        self.promote_waiting(now);
        let mut out = Vec::with_capacity(max.min(self.queued));
        while out.len() < max {
            let Some((_, _, i, generation)) = self.ready.pop() else { break };
            if self.hosts[i].generation != generation {
                continue;
            }
            let h = &mut self.hosts[i];
            let Some(stored) = h.pop() else { continue };
            h.in_flight += 1;
            if let Some(r) = &mut h.rate {
                r.record(now);
            }
            let gap = h.policy.next_gap();
            if !gap.is_zero() {
                h.next_at = now + gap;
            }
            self.queued -= 1;
            match stored.to_request() {
                Ok(req) => {
                    self.next_lease += 1;
                    let id = self.next_lease;
                    let deadline = now + self.cfg.lease_ttl;
                    self.deadlines.push(Reverse((deadline, id)));
                    self.leases.insert(id, Out { host: i, request: stored, deadline });
                    out.push(Lease { id: LeaseId(id), request: req });
                }
                // Cannot happen for requests that were valid when queued; recorded, not lost.
                Err(e) => {
                    self.hosts[i].in_flight -= 1;
                    self.failures.push(FailureRecord {
                        url: stored.url.to_string(),
                        kind: ErrorKind::InvalidUrl,
                        message: e.to_string(),
                        attempts: stored.retries,
                        last_status: None,
                        at: std::time::SystemTime::now(),
                    });
                }
            }
            self.schedule(i, now);
        }
        out
    }

    fn take_lease(&mut self, id: LeaseId) -> Result<Out, FrontierError> {
        let out = self.leases.remove(&id.0).ok_or(FrontierError::UnknownLease(id.0))?;
        self.hosts[out.host].in_flight -= 1;
        Ok(out)
    }

    fn readiness(&mut self, now: Instant) -> Readiness {
        if self.queued == 0 {
            return Readiness::Empty;
        }
        self.promote_waiting(now);
        while let Some(&(_, _, i, generation)) = self.ready.peek() {
            if self.hosts[i].generation == generation {
                return Readiness::Now;
            }
            self.ready.pop();
        }
        while let Some(Reverse((at, i, generation))) = self.waiting.peek().copied() {
            if self.hosts[i].generation == generation {
                return Readiness::At(at);
            }
            self.waiting.pop();
        }
        Readiness::Blocked
    }
}

impl MemoryFrontier<MemorySeenSet> {
    pub fn new(cfg: MemoryFrontierConfig) -> Self {
        Self::with_seen(cfg, Arc::new(MemorySeenSet::new()))
    }
}

impl<S: SeenSet> MemoryFrontier<S> {
    pub fn with_seen(cfg: MemoryFrontierConfig, seen: Arc<S>) -> Self {
        MemoryFrontier {
            seen,
            state: Mutex::new(State {
                cfg,
                hosts: Vec::new(),
                host_ids: HashMap::new(),
                ready: BinaryHeap::new(),
                waiting: BinaryHeap::new(),
                leases: HashMap::new(),
                deadlines: BinaryHeap::new(),
                next_lease: 0,
                seq: 0,
                queued: 0,
                failures: Vec::new(),
            }),
        }
    }

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
        let fps: Vec<Fingerprint> = requests.iter().map(|(f, _)| *f).collect();
        let fresh = self.seen.insert_many(&fps).await?;
        let mut report = PushReport::default();
        let mut out = Vec::with_capacity(requests.len());
        for ((_, req), new) in requests.into_iter().zip(fresh) {
            if new {
                report.added += 1;
                out.push(req);
            } else {
                report.seen += 1;
            }
        }
        Ok((out, report))
    }
}

#[async_trait]
impl<S: SeenSet + 'static> Frontier for MemoryFrontier<S> {
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

    async fn complete(&self, batch: Vec<Completion>) -> Result<PushReport, FrontierError> {
        let mut report = PushReport::default();
        let mut first_err = None;
        for c in batch {
            match c {
                Completion::Done { lease, discovered } => {
                    // Seen-check first: if the lease is unknown the discoveries are still kept
                    // (they are new work either way), so nothing is lost.
                    let (fresh, r) = self.filter_new(discovered).await?;
                    report.merge(r);
                    let now = Instant::now();
                    let mut st = self.lock();
                    let taken = st.take_lease(lease);
                    for req in &fresh {
                        st.enqueue(req, now);
                    }
                    match taken {
                        Ok(out) => st.schedule(out.host, now),
                        Err(e) => first_err = first_err.or(Some(e)),
                    }
                }
                Completion::Retry { lease, after } | Completion::Defer { lease, after } => {
                    let counts = matches!(c, Completion::Retry { .. });
                    let now = Instant::now();
                    let mut st = self.lock();
                    match st.take_lease(lease) {
                        Ok(mut out) => {
                            if counts {
                                out.request.retries += 1;
                            }
                            let h = &mut st.hosts[out.host];
                            h.next_at = h.next_at.max(now + after);
                            st.enqueue_stored(out.host, out.request, true, now);
                            st.schedule(out.host, now);
                        }
                        Err(e) => first_err = first_err.or(Some(e)),
                    }
                }
                Completion::Failed { lease, failure } => {
                    let now = Instant::now();
                    let mut st = self.lock();
                    match st.take_lease(lease) {
                        Ok(out) => {
                            st.failures.push(failure);
                            st.schedule(out.host, now);
                        }
                        Err(e) => first_err = first_err.or(Some(e)),
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    async fn readiness(&self) -> Result<Readiness, FrontierError> {
        Ok(self.lock().readiness(Instant::now()))
    }

    async fn adjust_host(&self, host_key: &str, adj: HostAdjustment) -> Result<(), FrontierError> {
        let now = Instant::now();
        let mut st = self.lock();
        let i = st.host_for(host_key, now);
        let h = &mut st.hosts[i];
        if let Some(d) = adj.min_delay {
            h.policy.delay = h.policy.delay.max(d);
        }
        if let Some(p) = adj.pause {
            h.next_at = h.next_at.max(now + p);
        }
        st.schedule(i, now);
        Ok(())
    }

    async fn stats(&self) -> Result<FrontierStats, FrontierError> {
        let st = self.lock();
        Ok(FrontierStats {
            queued: st.queued,
            leased: st.leases.len(),
            hosts: st.hosts.len(),
            failed: st.failures.len(),
        })
    }

    async fn failures(&self) -> Result<Vec<FailureRecord>, FrontierError> {
        Ok(self.lock().failures.clone())
    }
}

impl<S: SeenSet> MemoryFrontier<S> {
    /// The hosts known, with their queued counts (for progress displays and tests).
    pub fn host_queues(&self) -> Vec<(Arc<str>, usize)> {
        self.lock().hosts.iter().map(|h| (h.key.clone(), h.queued)).collect()
    }
}

#[cfg(test)]
mod tests {
    use kumo_core::Url;

    use super::*;
    use crate::{HostPolicy, HostRule, RateLimit};

    fn frontier() -> MemoryFrontier {
        let open = HostPolicy { parallelism: 100, ..Default::default() };
        MemoryFrontier::new(MemoryFrontierConfig {
            politeness: Politeness {
                default: open,
                rules: vec![
                    HostRule::regex(r"^a\.test$", open)
                        .unwrap()
                        .with_rate_limits([RateLimit::per_second(2), RateLimit::per_minute(3)]),
                ],
            },
            ..Default::default()
        })
    }

    fn push(st: &mut State, url: &str, now: Instant) {
        st.enqueue(&Request::get(Url::parse(url).unwrap()), now);
    }

    fn hosts(leases: &[Lease]) -> Vec<String> {
        leases.iter().map(|l| l.request.url.host_str().unwrap().to_string()).collect()
    }

    /// With a synthetic clock: the throttled host waits in the heap for the exact instant a
    /// token frees in every window, and the unlimited host neither waits nor carries a log.
    #[test]
    fn throttled_host_waits_for_the_exact_instant() {
        let f = frontier();
        let mut st = f.lock();
        let t0 = Instant::now();
        let s = Duration::from_secs;
        for i in 0..8 {
            push(&mut st, &format!("http://a.test/{i}"), t0);
        }
        for i in 0..5 {
            push(&mut st, &format!("http://b.test/{i}"), t0);
        }
        let b = st.host_ids["b.test"];
        assert!(st.hosts[b].rate.is_none(), "no rate limits, no bookkeeping");
        let first = st.lease(100, t0);
        assert_eq!(hosts(&first).iter().filter(|h| *h == "a.test").count(), 2, "2 per second");
        assert_eq!(first.len(), 7, "b.test is not held back");
        // Windows are widened by 5 %, at most 20 ms: 1 s → 1.02 s, 60 s → 60.02 s.
        let ms = Duration::from_millis;
        assert_eq!(st.readiness(t0), Readiness::At(t0 + ms(1020)), "the second window frees at 1.02 s");
        assert!(st.lease(100, t0 + ms(1020) - Duration::from_nanos(1)).is_empty());
        assert_eq!(hosts(&st.lease(100, t0 + ms(1020))), ["a.test"], "then the minute allows one more");
        assert_eq!(st.readiness(t0 + ms(1020)), Readiness::At(t0 + ms(60_020)), "the minute window is full");
        assert!(st.lease(100, t0 + s(59)).is_empty());
        assert_eq!(st.lease(100, t0 + ms(60_020)).len(), 2, "two leave the minute at once");
        assert_eq!(st.readiness(t0 + ms(60_020)), Readiness::At(t0 + ms(61_040)));
        assert_eq!(st.waiting.len(), 1, "one heap entry per wait, never a poll");
    }

    /// A pause or delay and a rate limit combine: the later of the two wins.
    #[test]
    fn delay_and_rate_limits_combine() {
        let f = frontier();
        let mut st = f.lock();
        let t0 = Instant::now();
        for i in 0..3 {
            push(&mut st, &format!("http://a.test/{i}"), t0);
        }
        let a = st.host_ids["a.test"];
        st.hosts[a].next_at = t0 + Duration::from_millis(1500);
        st.schedule(a, t0);
        assert_eq!(st.readiness(t0), Readiness::At(t0 + Duration::from_millis(1500)));
        assert_eq!(st.lease(100, t0 + Duration::from_millis(1500)).len(), 2);
        assert_eq!(
            st.readiness(t0),
            Readiness::At(t0 + Duration::from_millis(2520)),
            "1.5 s + the 1.02 s window"
        );
    }
}
