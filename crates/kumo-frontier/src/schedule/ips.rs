//! Politeness per IP address (`--per-ip`, `--ip-delay`): a host goes only when its address
//! may too, since shared hosting puts thousands of names on one server.
//!
//! The ready heap keeps hosts, as without the option. A host popped while its address is full
//! or still spacing is *parked* in its address's own heap, and comes back to `ready` when the
//! address frees a slot or its gap ends: one host per free slot, best first, so ten thousand
//! names on one server cost a heap operation per lease, not ten thousand (BUbiNG's two levels,
//! kept lazy).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_core::Priority;

use crate::instant::later;
use crate::politeness::IpPolicy;

use super::HostTable;

/// A host's place in the ready heap: (priority of its best request, Reverse(sequence), host,
/// generation).
pub(super) type ReadyEntry = (Priority, Reverse<u64>, u32, u64);

/// Where a host stands with its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IpSlot {
    /// Not asked yet: the host waits to be resolved before its first lease.
    Unknown,
    /// In the list of hosts to resolve.
    Listed,
    /// Handed out to be resolved; the answer comes with [`super::HostTable::resolved`].
    Pending,
    /// Gated by address `id`.
    Gated(u32),
    /// Not gated by an address: per-IP politeness is off, or the name has none (its requests
    /// then fail as `dns` when fetched).
    Free,
}

struct Ip {
    in_flight: u32,
    /// When the address's gap lets the next request start.
    next_at: Instant,
    /// Whether an entry for this address is in `waiting`.
    timer: bool,
    /// Hosts ready but for this address, best first.
    parked: BinaryHeap<ReadyEntry>,
}

/// The addresses of a crawl's hosts and their gates.
pub(super) struct Ips {
    policy: IpPolicy,
    ids: HashMap<IpAddr, u32>,
    addrs: Vec<IpAddr>,
    ips: Vec<Ip>,
    /// Addresses whose gap ends at the instant: Reverse((instant, address)).
    waiting: BinaryHeap<Reverse<(Instant, u32)>>,
}

impl Ips {
    pub(super) fn new(policy: IpPolicy) -> Self {
        Ips { policy, ids: HashMap::new(), addrs: Vec::new(), ips: Vec::new(), waiting: BinaryHeap::new() }
    }

    /// The address's id, made on first sight.
    pub(super) fn id(&mut self, addr: IpAddr, now: Instant) -> u32 {
        if let Some(&id) = self.ids.get(&addr) {
            return id;
        }
        let id = self.ips.len() as u32;
        self.ips.push(Ip { in_flight: 0, next_at: now, timer: false, parked: BinaryHeap::new() });
        self.ids.insert(addr, id);
        self.addrs.push(addr);
        id
    }

    pub(super) fn len(&self) -> usize {
        self.ips.len()
    }

    /// The address `id` stands for, and the least gap between two starts to it.
    pub(super) fn spacing(&self, id: u32) -> (IpAddr, Duration) {
        (self.addrs[id as usize], self.policy.delay)
    }

    /// Whether a request to the address may start now.
    pub(super) fn open(&self, id: u32, now: Instant) -> bool {
        let ip = &self.ips[id as usize];
        ip.in_flight < self.policy.cap() && ip.next_at <= now
    }

    /// Holds `entry` until its address opens; sets the address's timer if only its gap keeps
    /// it shut (a full address opens when a request comes back).
    pub(super) fn park(&mut self, id: u32, entry: ReadyEntry) {
        let full = self.ips[id as usize].in_flight >= self.policy.cap();
        let ip = &mut self.ips[id as usize];
        ip.parked.push(entry);
        if !full && !ip.timer {
            ip.timer = true;
            self.waiting.push(Reverse((ip.next_at, id)));
        }
    }

    /// A request to the address starts now.
    pub(super) fn leased(&mut self, id: u32, now: Instant) {
        let gap = self.gap();
        let ip = &mut self.ips[id as usize];
        ip.in_flight += 1;
        if !gap.is_zero() {
            ip.next_at = later(now, gap);
        }
    }

    /// The least spacing between two request starts to one address, with the margin hosts
    /// get (see `HostPolicy::next_gap`).
    fn gap(&self) -> Duration {
        let d = self.policy.delay;
        d + (d / 20).min(Duration::from_millis(20))
    }

    /// A request to the address came back: hosts parked on it may go again.
    pub(super) fn freed(
        &mut self,
        id: u32,
        now: Instant,
        ready: &mut Vec<ReadyEntry>,
        valid: impl Fn(&ReadyEntry) -> bool,
    ) {
        let ip = &mut self.ips[id as usize];
        ip.in_flight = ip.in_flight.saturating_sub(1);
        self.unpark(id, now, ready, valid);
    }

    /// Restores an address's spacing from a host's last lease in an earlier run: two gaps
    /// from it, as hosts are restored, since when its request reached the server is unknown.
    pub(super) fn restore(&mut self, id: u32, last_lease: Instant) {
        let gap = self.gap();
        let ip = &mut self.ips[id as usize];
        ip.next_at = ip.next_at.max(later(later(last_lease, gap), gap));
    }

    /// Addresses whose gap has ended: their parked hosts may go.
    pub(super) fn promote(
        &mut self,
        now: Instant,
        ready: &mut Vec<ReadyEntry>,
        valid: impl Fn(&ReadyEntry) -> bool,
    ) {
        while let Some(Reverse((at, id))) = self.waiting.peek().copied() {
            if at > now {
                break;
            }
            self.waiting.pop();
            self.ips[id as usize].timer = false;
            self.unpark(id, now, ready, &valid);
        }
    }

    /// The earliest instant an address's gap ends, if one is awaited.
    pub(super) fn next_timer(&self) -> Option<Instant> {
        self.waiting.peek().map(|Reverse((at, _))| *at)
    }

    /// Moves as many parked hosts as the address has free slots back to `ready`, skipping
    /// entries that are no longer `valid` (their host was scheduled again since), or sets its
    /// timer when only its gap holds them.
    fn unpark(
        &mut self,
        id: u32,
        now: Instant,
        ready: &mut Vec<ReadyEntry>,
        valid: impl Fn(&ReadyEntry) -> bool,
    ) {
        let parallelism = self.policy.cap();
        let ip = &mut self.ips[id as usize];
        if ip.parked.is_empty() || ip.in_flight >= parallelism {
            return;
        }
        if ip.next_at > now {
            if !ip.timer {
                ip.timer = true;
                self.waiting.push(Reverse((ip.next_at, id)));
            }
            return;
        }
        let mut free = parallelism - ip.in_flight;
        while free > 0
            && let Some(e) = ip.parked.pop()
        {
            if valid(&e) {
                ready.push(e);
                free -= 1;
            }
        }
    }
}

impl HostTable {
    /// A request charged to address `ip` came back: a host parked on it may go.
    pub(super) fn free_ip(&mut self, ip: Option<u32>, now: Instant) {
        if let (Some(id), Some(ips)) = (ip, &mut self.ips) {
            let mut back = Vec::new();
            let hosts = &self.hosts;
            ips.freed(id, now, &mut back, |e| hosts[e.2 as usize].generation == e.3);
            self.ready.extend(back);
        }
    }

    /// Up to `max` hosts with work whose address is to be looked up (per-IP politeness),
    /// each handed out once; the answer comes back through [`HostTable::resolved`].
    pub fn take_unresolved(&mut self, max: usize) -> Vec<Arc<str>> {
        let n = max.min(self.unresolved.len());
        let mut keys = Vec::with_capacity(n);
        for i in self.unresolved.drain(..n) {
            let h = &mut self.hosts[i];
            // Answered meanwhile (`--resolve`).
            if h.ip != IpSlot::Listed {
                continue;
            }
            h.ip = IpSlot::Pending;
            self.pending += 1;
            keys.push(Arc::from(&*h.key));
        }
        keys
    }

    /// Whether hosts wait for their address to be looked up, or are being looked up.
    pub fn resolving(&self) -> bool {
        !self.unresolved.is_empty() || self.pending > 0
    }

    /// The address `host_key` resolved to, gating its requests from now on; `None`: it has
    /// none (its requests go, and fail as `dns`). A host resumed from an earlier run charges
    /// its last lease to the address, as its own spacing is restored.
    pub fn resolved(&mut self, host_key: &str, addr: Option<IpAddr>, now: Instant) {
        let (i, _) = self.host_for(host_key, now);
        let Some(ips) = &mut self.ips else { return };
        let h = &mut self.hosts[i];
        if h.ip == IpSlot::Pending {
            self.pending -= 1;
        }
        h.ip = match addr {
            Some(addr) => {
                let id = ips.id(addr, now);
                if let Some(t) = h.last_lease() {
                    ips.restore(id, t);
                }
                IpSlot::Gated(id)
            }
            None => IpSlot::Free,
        };
        self.schedule(i, now);
    }

    /// How many addresses the crawl's hosts are on (per-IP politeness; else 0).
    pub fn addresses(&self) -> usize {
        self.ips.as_ref().map_or(0, Ips::len)
    }
}
