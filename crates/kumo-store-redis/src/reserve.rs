//! What a worker holds of the shared crawl, per host: the slots Redis granted it (its part of
//! the host's parallelism), the requests it has started there, and the requests it leased
//! ahead (its reserve). A freed slot starts the next reserved request with no round trip, so
//! a busy host costs one lease call per many pages instead of one per freed slot.
//!
//! Slots are given back as soon as the worker cannot use them (nothing reserved to start), or
//! as its pages end while it holds more than its share (workers joined since it took them),
//! and reserved requests go back to Redis unstarted when their host is paused or slowed, or
//! when they have waited half a lease's life. Both ride on the worker's next call.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use kumo_core::Request;
use kumo_frontier::{Lease, LeaseId, Readiness};

/// A lease this worker holds, by where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting in the reserve.
    Reserved,
    /// Handed to the engine: it holds one of the host's slots.
    Running,
    /// Its response is in (the slot is free); the lease ends when its completion commits.
    Released,
    /// Running past the lease's time to live: Redis has taken it back (its commit will be
    /// stale), and its slot counts no more, as in Redis.
    Expired,
}

#[derive(Default)]
struct HostSlots {
    held: u32,
    /// This worker's share of the host's slots when Redis last said (parallelism ÷ live
    /// workers); `None` until it has.
    share: Option<u32>,
    running: u32,
    reserve: VecDeque<(u64, Request, Instant)>,
    /// Leases of the host not ended yet, whatever their stage: what Redis counts as this
    /// worker's there when it decides how many more to hand out.
    owed: u32,
}

#[derive(Default)]
pub(crate) struct Slots {
    hosts: HashMap<String, HostSlots>,
    leases: HashMap<u64, (String, Stage, Instant)>,
    /// Hosts whose holding went down since the last call.
    lowered: HashSet<String>,
    /// Reserved leases to hand back with the next call.
    give_back: Vec<u64>,
    /// The same, for the worker to drop what it stored of them.
    forgotten: Vec<u64>,
}

impl Slots {
    /// A lease call's answer: a lease for `host`, reserved until the engine asks.
    pub fn reserve(&mut self, id: u64, host: &str, request: Request) {
        let now = Instant::now();
        self.leases.insert(id, (host.to_string(), Stage::Reserved, now));
        let h = self.hosts.entry(host.to_string()).or_default();
        h.reserve.push_back((id, request, now));
        h.owed += 1;
    }

    /// A lease call's answer: Redis now counts `held` slots of `host` as this worker's, and
    /// its share of them is `share`.
    pub fn set_held(&mut self, host: &str, held: u32, share: u32) {
        let h = self.hosts.entry(host.to_string()).or_default();
        (h.held, h.share) = (held, Some(share));
        self.trim(host);
    }

    /// Up to `max` reserved requests whose hosts have a free slot here: they start now. Those
    /// that waited longer than half the lease's time to live (`ttl`) go back instead.
    pub fn start(&mut self, max: usize, ttl: Duration) -> Vec<Lease> {
        let stale_after = ttl / 2;
        let now = Instant::now();
        let mut out = Vec::new();
        let mut trimmed = Vec::new();
        for (key, h) in self.hosts.iter_mut() {
            if h.running >= h.held && !h.reserve.is_empty() {
                // Blocked: a running lease past its time to live no longer holds its slot.
                for (_, (host, stage, at)) in self.leases.iter_mut() {
                    if *stage == Stage::Running && host == key && now.duration_since(*at) > ttl {
                        *stage = Stage::Expired;
                        h.running = h.running.saturating_sub(1);
                    }
                }
            }
            while h.reserve.front().is_some_and(|(_, _, at)| now.duration_since(*at) > stale_after) {
                let (id, _, _) = h.reserve.pop_front().expect("checked");
                h.owed = h.owed.saturating_sub(1);
                self.leases.remove(&id);
                self.give_back.push(id);
                self.forgotten.push(id);
                trimmed.push(key.clone());
            }
            while out.len() < max && h.running < h.held {
                let Some((id, request, _)) = h.reserve.pop_front() else { break };
                h.running += 1;
                if let Some(l) = self.leases.get_mut(&id) {
                    l.1 = Stage::Running;
                }
                // Redis spaces its leases in its script; the downloader adds nothing.
                out.push(Lease { id: LeaseId(id), request, spacing: Duration::ZERO, ip_spacing: None });
            }
        }
        for host in trimmed {
            self.trim(&host);
        }
        out
    }

    /// The engine has the response: the lease's slot is free for the next reserved request.
    pub fn release(&mut self, id: u64) {
        if let Some((host, stage, _)) = self.leases.get_mut(&id)
            && *stage == Stage::Running
        {
            *stage = Stage::Released;
            let host = host.clone();
            self.free_slot(&host);
        }
    }

    /// The lease's completion is committed (or found stale): it is gone.
    pub fn end(&mut self, id: u64) {
        let Some((host, stage, _)) = self.leases.remove(&id) else { return };
        if let Some(h) = self.hosts.get_mut(&host) {
            h.owed = h.owed.saturating_sub(1);
        }
        if stage == Stage::Running {
            self.free_slot(&host);
        } else {
            self.trim(&host);
        }
    }

    /// Hands the host's reserve back and keeps only the slots its running requests use: the
    /// host was paused or slowed, and Redis decides again what may be fetched there.
    pub fn drop_host(&mut self, host: &str) {
        if let Some(h) = self.hosts.get_mut(host) {
            for (id, _, _) in h.reserve.drain(..) {
                h.owed = h.owed.saturating_sub(1);
                self.leases.remove(&id);
                self.give_back.push(id);
                self.forgotten.push(id);
            }
            self.trim(host);
        }
    }

    /// What the next call carries: the hosts whose holding went down, with what is held now,
    /// and the reserved leases handed back.
    pub fn prelude(&mut self) -> (Vec<(String, u32)>, Vec<u64>) {
        let held = self
            .lowered
            .drain()
            .map(|h| {
                let n = self.hosts.get(&h).map_or(0, |s| s.held);
                (h, n)
            })
            .collect();
        (held, std::mem::take(&mut self.give_back))
    }

    /// The leases handed back since the last look.
    pub fn take_forgotten(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.forgotten)
    }

    /// What the reserve says about leasing now, if it says anything: a reserved request can
    /// start (now), or every reserved request waits for a slot here (blocked).
    pub fn readiness(&self) -> Option<Readiness> {
        let mut waiting = false;
        for h in self.hosts.values() {
            if !h.reserve.is_empty() {
                if h.running < h.held {
                    return Some(Readiness::Now);
                }
                waiting = true;
            }
        }
        waiting.then_some(Readiness::Blocked)
    }

    /// Whether some host's leases are down to half what its slots may hold, with some of them
    /// waiting in reserve to be started (so Redis has more for it): time to ask before the
    /// slots run dry.
    pub fn running_low(&self, depth: u32) -> bool {
        self.hosts.values().any(|h| !h.reserve.is_empty() && h.owed * 2 < h.held * depth)
    }

    /// Whether this worker holds any lease (reserved, running, or done and not committed).
    pub fn holds_any(&self) -> bool {
        !self.leases.is_empty()
    }

    /// Requests leased ahead and not started: queued work, as the engine sees it.
    pub fn reserved(&self) -> usize {
        self.hosts.values().map(|h| h.reserve.len()).sum()
    }

    fn free_slot(&mut self, host: &str) {
        if let Some(h) = self.hosts.get_mut(host) {
            h.running = h.running.saturating_sub(1);
        }
        self.trim(host);
    }

    /// Gives up the slots the host's running and reserved requests cannot use, and those
    /// over its share that no running request uses.
    fn trim(&mut self, host: &str) {
        let Some(h) = self.hosts.get_mut(host) else { return };
        let mut usable = h.running + h.reserve.len() as u32;
        if let Some(share) = h.share {
            usable = usable.min(share.max(h.running));
        }
        if h.held > usable {
            h.held = usable;
            self.lowered.insert(host.to_string());
        }
        if h.held == 0 && h.owed == 0 {
            self.hosts.remove(host);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str) -> Request {
        Request::get(kumo_core::Url::parse(&format!("http://a.test/{path}")).unwrap())
    }

    const LONG: Duration = Duration::from_secs(600);

    /// Leases 1 to `n` of `a.test` reserved, with `held` of its slots and a share of `share`.
    fn reserved(n: u64, held: u32, share: u32) -> Slots {
        let mut s = Slots::default();
        for i in 1..=n {
            s.reserve(i, "a.test", req(&i.to_string()));
        }
        s.set_held("a.test", held, share);
        s
    }

    #[test]
    fn a_freed_slot_starts_the_next_reserved_request() {
        let mut s = reserved(5, 2, 2);
        let first = s.start(10, LONG);
        assert_eq!(first.iter().map(|l| l.id.0).collect::<Vec<_>>(), [1, 2], "two slots, two running");
        assert_eq!(s.readiness(), Some(Readiness::Blocked));
        s.release(1);
        assert_eq!(s.readiness(), Some(Readiness::Now));
        assert_eq!(s.start(10, LONG).iter().map(|l| l.id.0).collect::<Vec<_>>(), [3]);
        assert_eq!(s.prelude(), (vec![], vec![]), "both slots still used");
    }

    #[test]
    fn slots_nothing_can_use_go_back_and_so_does_a_dropped_reserve() {
        let mut s = Slots::default();
        s.reserve(1, "a.test", req("1"));
        s.reserve(2, "a.test", req("2"));
        s.set_held("a.test", 4, 4);
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 2)], vec![]), "two requests, two slots");
        s.start(1, LONG);
        s.drop_host("a.test");
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 1)], vec![2]), "the reserve goes back");
        s.release(1);
        s.end(1);
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 0)], vec![]));
        assert_eq!(s.readiness(), None);
        assert!(s.hosts.is_empty());
    }

    #[test]
    fn slots_over_the_share_go_back_as_their_pages_end() {
        let mut s = reserved(20, 8, 8);
        assert_eq!(s.start(20, LONG).len(), 8, "alone, all eight run");
        s.set_held("a.test", 8, 4); // another worker joined: the share is four
        assert_eq!(s.prelude(), (vec![], vec![]), "a running page keeps its slot");
        s.release(1);
        assert!(s.start(20, LONG).is_empty(), "a freed slot over the share starts nothing");
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 7)], vec![]));
        for id in 2..=4 {
            s.release(id);
        }
        assert!(s.start(20, LONG).is_empty());
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 4)], vec![]), "down to the share");
        s.release(5);
        assert_eq!(s.start(20, LONG).len(), 1, "within the share, a freed slot starts the next");
        assert_eq!(s.prelude(), (vec![], vec![]));
    }

    #[test]
    fn a_lease_ended_without_a_release_frees_its_slot_once() {
        let mut s = reserved(3, 1, 1);
        assert_eq!(s.start(5, LONG).len(), 1);
        s.end(1);
        s.end(1);
        assert_eq!(s.start(5, LONG).iter().map(|l| l.id.0).collect::<Vec<_>>(), [2]);
        assert!(s.running_low(8), "two out for a slot that may hold eight");
        assert!(!s.running_low(4), "but enough for one that holds four");
    }

    #[test]
    fn a_request_reserved_too_long_goes_back_unstarted() {
        let mut s = Slots::default();
        s.reserve(1, "a.test", req("1"));
        s.set_held("a.test", 1, 1);
        assert!(s.start(5, Duration::ZERO).is_empty());
        assert_eq!(s.prelude(), (vec![("a.test".to_string(), 0)], vec![1]));
    }
}
