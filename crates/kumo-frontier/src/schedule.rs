//! Per-host queues and politeness in memory: the scheduling core every frontier backend shares.
//!
//! Mercator-style: each host has a queue per priority level, an in-flight count and the instant
//! it may next be fetched. Hosts with work sit in one of two heaps: `ready` (may be fetched now,
//! ordered by the priority of their best request, then first come) or `waiting` (ordered by the
//! instant their politeness delay ends or, for rate-limited hosts, a token frees in every
//! window). Heap entries carry the host's generation number; an entry whose generation is stale
//! is skipped, which is cheaper than removing it.
//!
//! **Spilling.** A persistent backend keeps every queued request on disk and only the head of
//! each level in memory: at most `spill_at` entries per level are buffered, later ones are
//! counted as *spilled* and read back in order (by sequence number, after the level's cursor)
//! when the buffer runs dry. The in-memory backend never spills.
//!
//! **Waits.** A retried request waits out its own back-off (`schedule/waits.rs`) while its
//! host serves its other requests; only what the server asks of the whole host (a pause the
//! engine decides on: a 429, 503s with `Retry-After` from several URLs, robots.txt
//! unavailable) or a delay holds the host. Pauses are
//! kept apart from delays, so they can be listed, capped and lifted. Every instant computed
//! from a duration goes through [`later`], so no duration a server sends can overflow.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_core::{Priority, StoredRequest};

use crate::instant::later;
use crate::politeness::RateLog;
use crate::{Budget, FrontierError, HostPolicy, Lease, LeaseId, Politeness, Readiness};

mod budget;
mod figures;
mod index;
mod ips;
mod levels;
mod pacing;
mod peek;
mod rare;
mod tick;
mod waits;

use index::HostIndex;
use ips::{IpSlot, Ips, ReadyEntry};
use levels::Levels;
use rare::Rare;
use tick::Tick;

pub use pacing::HostPacing;
pub use peek::{HostQueue, QueuedRequest};
pub use waits::{HostView, LiftedPause};

/// A queued request and its position in its level (sequence numbers grow with each push).
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its sequence number: first come, first out within its level.
    pub seq: u64,
    /// The request, as stored.
    pub request: StoredRequest,
    /// A retried request is not handed out before this (its back-off); its host goes on.
    pub not_before: Option<Instant>,
}

impl Entry {
    /// An entry that may go as soon as its host may.
    pub fn new(seq: u64, request: StoredRequest) -> Self {
        Entry { seq, request, not_before: None }
    }
}

/// Where an enqueued entry went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Held in memory, ready to lease.
    Buffered,
    /// Counted only: the backend reads it back from storage when its turn comes.
    Spilled,
}

/// A lease that is out: which host, and the entry it holds.
#[derive(Debug)]
pub struct Out {
    /// The host's index.
    pub host: usize,
    /// The address it was charged to (per-IP politeness), freed when it comes back.
    ip: Option<u32>,
    /// The entry it holds, queued again at the front if the lease expires.
    pub entry: Entry,
    deadline: Instant,
    /// The request is back from its host (see [`HostTable::release`]): its slot is free.
    released: bool,
}

/// What one `lease` call handed out, and queued entries that could not become requests
/// (recorded as failures by the backend, never lost silently).
#[derive(Debug, Default)]
pub struct Leased {
    /// The leases handed out.
    pub leases: Vec<Lease>,
    /// Entries taken off the queue that are not requests: host index, entry, and why.
    pub invalid: Vec<(usize, Entry, String)>,
}

/// Reads spilled entries back: `(host, level, after_seq, max)` → the next entries of that
/// level with a sequence number above `after_seq`, in order.
pub type Refill<'a> = dyn FnMut(usize, Priority, u64, usize) -> Result<Vec<Entry>, FrontierError> + 'a;

struct Host {
    /// Its name, held here alone (the name index keys on it).
    key: Box<str>,
    /// Highest priority first.
    levels: Levels,
    queued: usize,
    in_flight: u32,
    /// When the host's delay (or a hold) lets it go next; a pause is kept apart.
    next_at: Tick,
    /// Until when the host is held whatever its delay (deferral waits, a restored spacing): a
    /// lowered delay never moves `next_at` before this.
    hold_until: Tick,
    /// The rule's parallelism (its random delay, when it has one, is in `rare`).
    parallelism: u32,
    /// The effective delay in nanoseconds (see [`Host::delay`]).
    delay_ns: u64,
    /// A pause, back-offs, a raised delay, rate limits: `None` while the host has none.
    rare: Option<Box<Rare>>,
    generation: u64,
    /// Its last lease, if it had one (see [`Host::last_lease`]).
    last_lease: Tick,
    /// Listed in `paced_dirty`.
    pacing_dirty: bool,
    /// Its address, with per-IP politeness.
    ip: IpSlot,
    /// Pages of the host queued over the crawl, counted against its budget (`budget.rs`).
    admitted: u64,
    /// Its registrable domain's index in `domain_pages`, with a budget per domain.
    domain: u32,
    /// What this run's requests to it came to (`figures.rs`).
    outcomes: u8,
}

impl Host {
    /// The rule's policy, with the effective delay.
    fn policy(&self) -> HostPolicy {
        let random_delay = self.rare.as_ref().map_or(Duration::ZERO, |r| r.random_delay);
        HostPolicy { parallelism: self.parallelism, delay: self.delay(), random_delay }
    }

    /// The effective delay: the largest of the rule's delay, the Crawl-delay floor and the
    /// learned delay.
    fn delay(&self) -> Duration {
        Duration::from_nanos(self.delay_ns)
    }

    /// Sets the effective delay (a delay over 584 years is cut to that).
    fn set_delay(&mut self, delay: Duration) {
        self.delay_ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
    }

    /// When the host was last leased, if ever (kept for every host: a delay set later counts
    /// from it).
    fn last_lease(&self) -> Option<Instant> {
        self.last_lease.get()
    }

    fn head_priority(&self) -> Option<Priority> {
        self.levels.best()
    }

    /// Whether the spacing of this host's requests must survive a restart.
    fn is_paced(&self) -> bool {
        self.delay_ns != 0 || self.rate().is_some()
    }

    /// Recomputes the effective delay; when it changed, the next lease is due one new gap
    /// after the last lease (a lowered delay takes effect at once), but not before a hold.
    fn update_delay(&mut self) {
        let delay = self.rule_delay().max(self.floor()).max(self.learned().unwrap_or_default());
        if delay == self.delay() {
            return;
        }
        self.set_delay(delay);
        if let Some(t) = self.last_lease() {
            self.next_at = self.hold_until.max(later(t, self.policy().next_gap()).into());
        }
    }

    /// Holds the host until `until` at least.
    fn hold(&mut self, until: Instant) {
        self.hold_until = self.hold_until.max(until.into());
        self.next_at = self.next_at.max(until.into());
    }

    /// Pauses the host until `until` at least (what its server asked).
    fn pause(&mut self, until: Instant) {
        let rare = self.rare_mut();
        rare.paused_until = Some(rare.paused_until.map_or(until, |p| p.max(until)));
    }

    /// When the host may go next: its delay, holds and pause together.
    fn free_at(&self) -> Instant {
        let next = self.next_at.instant();
        self.paused_until().map_or(next, |p| p.max(next))
    }
}

/// The per-host queues, heaps and leases of a frontier.
pub struct HostTable {
    politeness: Politeness,
    lease_ttl: Duration,
    spill_at: usize,
    /// Spill every request of a host never leased (see [`HostTable::spilling_cold_hosts`]).
    spill_cold: bool,
    hosts: Vec<Host>,
    host_ids: HostIndex,
    /// (priority of best request, Reverse(sequence), host, generation)
    ready: BinaryHeap<ReadyEntry>,
    /// Reverse((instant, host, generation)), the instant in 8 bytes
    waiting: BinaryHeap<Reverse<(Tick, u32, u64)>>,
    leases: HashMap<u64, Out>,
    deadlines: BinaryHeap<Reverse<(Instant, u64)>>,
    next_lease: u64,
    heap_seq: u64,
    queued: usize,
    /// Paced hosts leased since the last `take_paced_leases`.
    paced_dirty: Vec<usize>,
    /// The addresses' gates, with per-IP politeness.
    ips: Option<Ips>,
    /// Hosts with work whose address is to be looked up ([`IpSlot::Listed`]).
    unresolved: Vec<usize>,
    /// Hosts handed out to be looked up, not answered yet.
    pending: usize,
    budget: Budget,
    /// Registrable domains by name, with a budget per domain.
    domain_ids: HashMap<Arc<str>, u32>,
    /// Pages of each domain queued over the crawl.
    domain_pages: Vec<u64>,
}

impl HostTable {
    /// `spill_at`: entries buffered per level before the rest spill (`usize::MAX`: never).
    pub fn new(politeness: Politeness, lease_ttl: Duration, spill_at: usize) -> Self {
        HostTable {
            lease_ttl,
            spill_at: spill_at.max(1),
            spill_cold: false,
            hosts: Vec::new(),
            host_ids: HostIndex::default(),
            ready: BinaryHeap::new(),
            waiting: BinaryHeap::new(),
            leases: HashMap::new(),
            deadlines: BinaryHeap::new(),
            next_lease: 0,
            heap_seq: 0,
            queued: 0,
            paced_dirty: Vec::new(),
            ips: politeness.per_ip.map(Ips::new),
            unresolved: Vec::new(),
            pending: 0,
            budget: politeness.budget,
            domain_ids: HashMap::new(),
            domain_pages: Vec::new(),
            politeness,
        }
    }

    /// Buffers nothing for a host never leased: its requests stay in storage until its first
    /// lease reads them back. A broad crawl knows far more hosts than it has fetched yet, and
    /// a request held in memory costs some 230 bytes a host. Only for a backend that spills.
    pub fn spilling_cold_hosts(mut self) -> Self {
        self.spill_cold = self.spill_at != usize::MAX;
        self
    }

    /// The host's index, and whether it was just created.
    pub fn host_for(&mut self, key: &str, now: Instant) -> (usize, bool) {
        if let Some(i) = self.host_ids.get(key, &self.hosts) {
            return (i, false);
        }
        let key: Box<str> = Box::from(key);
        let domain = self.domain_of(&key);
        let rule = self.politeness.rule_for(&key);
        let policy = rule.map_or(self.politeness.default, |r| r.policy);
        let rate = rule.and_then(|r| RateLog::new(r.rate_limits()));
        let mut host = Host {
            key,
            levels: Levels::default(),
            queued: 0,
            in_flight: 0,
            next_at: now.into(),
            hold_until: now.into(),
            parallelism: policy.parallelism,
            delay_ns: 0,
            rare: Rare::of_rule(&policy, rate),
            generation: 0,
            last_lease: Tick::NEVER,
            pacing_dirty: false,
            ip: if self.ips.is_some() { IpSlot::Unknown } else { IpSlot::Free },
            admitted: 0,
            domain,
            outcomes: 0,
        };
        host.set_delay(policy.delay);
        self.hosts.push(host);
        let i = self.hosts.len() - 1;
        self.host_ids.insert(i, &self.hosts);
        (i, true)
    }

    /// The key (`host[:port]`) of host `host`; panics on an index the table never gave.
    pub fn host_key(&self, host: usize) -> &str {
        &self.hosts[host].key
    }

    /// Hosts with their queued counts.
    pub fn host_queues(&self) -> Vec<(Arc<str>, usize)> {
        self.hosts.iter().map(|h| (Arc::from(&*h.key), h.queued)).collect()
    }

    /// Requests queued (spilled and backing off included).
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Leases out, released ones included.
    pub fn leased(&self) -> usize {
        self.leases.len()
    }

    /// Hosts the table knows.
    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }

    /// Puts host `i` in the heap it belongs in now, invalidating older entries.
    pub fn schedule(&mut self, i: usize, now: Instant) {
        let h = &mut self.hosts[i];
        h.generation += 1;
        waits::wake_due(h, now);
        if h.queued == 0 || h.in_flight >= h.parallelism.max(1) {
            return;
        }
        match h.ip {
            // Resolved before its first lease, so even that one is gated by its address.
            IpSlot::Unknown => {
                h.ip = IpSlot::Listed;
                self.unresolved.push(i);
                return;
            }
            IpSlot::Listed | IpSlot::Pending => return,
            IpSlot::Gated(_) | IpSlot::Free => {}
        }
        // The host may go when its delay and pause have passed and every rate window has a
        // token, and it has a request that is not backing off.
        let free = h.free_at();
        let mut at = match h.rate() {
            None => free,
            Some(r) => r.next_free().map_or(free, |t| t.max(free)),
        };
        if h.levels.is_empty()
            && let Some((&(due, _), _)) = h.backoff().next()
        {
            at = at.max(due);
        }
        if at <= now {
            let prio = h.head_priority().unwrap_or_default();
            self.heap_seq += 1;
            self.ready.push((prio, Reverse(self.heap_seq), i as u32, h.generation));
        } else {
            self.waiting.push(Reverse((at.into(), i as u32, h.generation)));
        }
    }

    /// Queues an entry at the back of its level. `make` builds the request (and its
    /// not-before, if it is backing off) only if it is buffered, so a backend reopening a
    /// large queue decodes just the heads.
    pub fn enqueue_with<E>(
        &mut self,
        i: usize,
        priority: Priority,
        seq: u64,
        now: Instant,
        make: impl FnOnce() -> Result<(StoredRequest, Option<Instant>), E>,
    ) -> Result<Placement, E> {
        let spill_at = self.spill_at;
        let h = &mut self.hosts[i];
        let cold = self.spill_cold && h.last_lease().is_none();
        let was_best = h.head_priority();
        let level = h.levels.level(priority);
        let placement = if cold || level.spilled > 0 || level.buf.len() >= spill_at {
            level.spilled += 1;
            Placement::Spilled
        } else {
            let (request, not_before) = make()?;
            level.push_back(Entry { seq, request, not_before });
            level.cursor = level.cursor.max(seq);
            Placement::Buffered
        };
        h.queued += 1;
        self.queued += 1;
        // Re-schedule only when the host's heap position may change.
        if h.queued == 1 || h.head_priority() != was_best {
            self.schedule(i, now);
        }
        Ok(placement)
    }

    /// [`enqueue_with`](Self::enqueue_with) for a request in hand.
    pub fn enqueue(&mut self, i: usize, entry: Entry, now: Instant) -> Placement {
        let prio = entry.request.priority;
        let seq = entry.seq;
        let make = || Ok((entry.request, entry.not_before));
        match self.enqueue_with::<std::convert::Infallible>(i, prio, seq, now, make) {
            Ok(p) => p,
            Err(never) => match never {},
        }
    }

    /// Puts a request that was out back at the front of its level; the host waits `after`
    /// (a deferral: the host must wait, not the request).
    pub fn requeue_front(&mut self, i: usize, entry: Entry, after: Duration, now: Instant) {
        let h = &mut self.hosts[i];
        h.hold(later(now, after));
        push_front(h, entry);
        h.queued += 1;
        self.queued += 1;
        self.schedule(i, now);
    }

    fn promote_waiting(&mut self, now: Instant) {
        let now_tick = Tick::from(now);
        while let Some(Reverse((at, i, generation))) = self.waiting.peek().copied() {
            if at > now_tick {
                break;
            }
            self.waiting.pop();
            let i = i as usize;
            if self.hosts[i].generation == generation {
                self.schedule(i, now);
            }
        }
        if let Some(ips) = &mut self.ips {
            let mut back = Vec::new();
            let hosts = &self.hosts;
            ips.promote(now, &mut back, |e| hosts[e.2 as usize].generation == e.3);
            self.ready.extend(back);
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
                if !out.released {
                    self.hosts[out.host].in_flight -= 1;
                    self.free_ip(out.ip, now);
                }
                self.requeue_front(out.host, out.entry, Duration::ZERO, now);
            }
        }
    }

    /// Takes the next entry of host `i`, reading spilled entries back when the best level's
    /// buffer is empty.
    fn pop(&mut self, i: usize, refill: &mut Refill<'_>) -> Result<Option<Entry>, FrontierError> {
        let spill_at = self.spill_at;
        let h = &mut self.hosts[i];
        let Some((prio, l)) = h.levels.first_mut() else { return Ok(None) };
        if l.buf.is_empty() && l.spilled > 0 {
            let got = refill(i, prio, l.cursor, spill_at.min(l.spilled as usize))?;
            if got.is_empty() {
                // Storage holds fewer than counted; nothing more can be read back.
                h.queued -= l.spilled as usize;
                self.queued -= l.spilled as usize;
                l.spilled = 0;
            } else {
                l.spilled = l.spilled.saturating_sub(got.len() as u64);
                l.cursor = got.last().map_or(l.cursor, |e| e.seq);
                l.extend(got);
            }
        }
        let entry = l.buf.pop_front();
        if l.buf.is_empty() && l.spilled == 0 {
            h.levels.remove_first();
        }
        if entry.is_some() {
            h.queued -= 1;
            self.queued -= 1;
        }
        Ok(entry)
    }

    /// Hands out up to `max` requests whose hosts may be fetched now, best priority first.
    pub fn lease(
        &mut self,
        max: usize,
        now: Instant,
        refill: &mut Refill<'_>,
    ) -> Result<Leased, FrontierError> {
        self.expire_leases(now);
        self.promote_waiting(now);
        let mut out = Leased { leases: Vec::with_capacity(max.min(self.queued)), invalid: Vec::new() };
        let (mut busy, mut spread) = (Vec::new(), true);
        while out.leases.len() < max {
            let Some(ready) = self.next_ready(&mut busy, &mut spread) else { break };
            let i = ready.2 as usize;
            let ip = match self.hosts[i].ip {
                IpSlot::Gated(id) => Some(id),
                _ => None,
            };
            if let (Some(id), Some(ips)) = (ip, &mut self.ips)
                && !ips.open(id, now)
            {
                ips.park(id, ready);
                continue;
            }
            let Some(entry) = self.pop(i, refill)? else {
                self.schedule(i, now);
                continue;
            };
            // Read back from storage still backing off: it waits apart, the host goes on.
            if entry.not_before.is_some_and(|t| t > now) {
                waits::set_aside(&mut self.hosts[i], entry);
                self.queued += 1;
                self.schedule(i, now);
                continue;
            }
            let h = &mut self.hosts[i];
            match entry.request.to_request() {
                Ok(req) => {
                    h.in_flight += 1;
                    if let Some(r) = h.rate_mut() {
                        r.record(now);
                    }
                    let gap = h.policy().next_gap();
                    if !gap.is_zero() {
                        h.next_at = later(now, gap).into();
                    }
                    // Kept for every host: a delay set later counts from it.
                    h.last_lease = now.into();
                    let spacing = h.delay();
                    if h.is_paced() && !h.pacing_dirty {
                        h.pacing_dirty = true;
                        self.paced_dirty.push(i);
                    }
                    self.next_lease += 1;
                    let id = self.next_lease;
                    let deadline = later(now, self.lease_ttl);
                    self.deadlines.push(Reverse((deadline, id)));
                    let mut ip_spacing = None;
                    if let (Some(ip), Some(ips)) = (ip, &mut self.ips) {
                        ips.leased(ip, now);
                        ip_spacing = Some(ips.spacing(ip)).filter(|(_, gap)| !gap.is_zero());
                    }
                    self.leases.insert(id, Out { host: i, ip, entry, deadline, released: false });
                    out.leases.push(Lease { id: LeaseId(id), request: req, spacing, ip_spacing });
                }
                // Cannot happen for requests that were valid when queued; reported, not lost.
                Err(e) => out.invalid.push((i, entry, e.to_string())),
            }
            self.schedule(i, now);
        }
        self.ready.extend(busy);
        Ok(out)
    }

    /// The next ready host to lease from, breadth first: while `spread`, a host with requests
    /// in flight waits in `busy` if a host of at least its priority is ready after it, so one
    /// host never takes the crawl's free slots while others wait; once only busy hosts are
    /// left, they take the rest in their turn. The caller puts `busy` back in the heap.
    fn next_ready(&mut self, busy: &mut Vec<ReadyEntry>, spread: &mut bool) -> Option<ReadyEntry> {
        loop {
            let Some(ready) = self.ready.pop() else {
                if !*spread || busy.is_empty() {
                    return None;
                }
                *spread = false;
                self.ready.extend(busy.drain(..));
                continue;
            };
            let (priority, _, i, generation) = ready;
            let h = &self.hosts[i as usize];
            if h.generation != generation {
                continue;
            }
            if *spread && h.in_flight > 0 && self.ready.peek().is_some_and(|next| next.0 >= priority) {
                busy.push(ready);
                continue;
            }
            return Some(ready);
        }
    }

    /// Removes a lease that is out. The caller re-schedules the host.
    pub fn take_lease(&mut self, id: LeaseId) -> Result<Out, FrontierError> {
        let out = self.leases.remove(&id.0).ok_or(FrontierError::UnknownLease(id.0))?;
        if !out.released {
            self.hosts[out.host].in_flight -= 1;
            self.free_ip(out.ip, Instant::now());
        }
        Ok(out)
    }

    /// [`release`](Self::release) for each of `ids`.
    pub fn release_all(&mut self, ids: &[LeaseId], now: Instant) {
        for &id in ids {
            self.release(id, now);
        }
    }

    /// Frees the host slot of a lease whose request is back from its host, so the host may
    /// be fetched again before the lease is completed; the lease itself stays out. Unknown
    /// or already released leases are ignored.
    pub fn release(&mut self, id: LeaseId, now: Instant) {
        let Some(out) = self.leases.get_mut(&id.0) else { return };
        if out.released {
            return;
        }
        out.released = true;
        let (host, ip) = (out.host, out.ip);
        self.hosts[host].in_flight -= 1;
        self.free_ip(ip, now);
        self.schedule(host, now);
    }

    /// When work can next be leased; first moves hosts whose wait is over to the ready heap.
    pub fn readiness(&mut self, now: Instant) -> Readiness {
        if self.queued == 0 {
            return Readiness::Empty;
        }
        self.promote_waiting(now);
        while let Some(&(_, _, i, generation)) = self.ready.peek() {
            if self.hosts[i as usize].generation == generation {
                return Readiness::Now;
            }
            self.ready.pop();
        }
        let mut next = None;
        while let Some(Reverse((at, i, generation))) = self.waiting.peek().copied() {
            if self.hosts[i as usize].generation == generation {
                next = Some(at.instant());
                break;
            }
            self.waiting.pop();
        }
        // An address's gap ending may free a parked host.
        let ip_next = self.ips.as_ref().and_then(Ips::next_timer);
        match next.into_iter().chain(ip_next).min() {
            Some(at) => Readiness::At(at),
            None => Readiness::Blocked,
        }
    }
}

/// Puts `entry` at the front of its level (it was out, so its place is first).
fn push_front(h: &mut Host, entry: Entry) {
    let level = h.levels.level(entry.request.priority);
    level.cursor = level.cursor.max(entry.seq);
    level.push_front(entry);
}

#[cfg(test)]
mod ip_tests;
#[cfg(test)]
mod tests;
