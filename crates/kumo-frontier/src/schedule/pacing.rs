//! What of a host's politeness survives a restart (its Crawl-delay floor, learned delay, next
//! turn with a pause, last lease and pages queued against its budget), and what the crawl
//! learns of a host while it runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::HostTable;
use crate::HostAdjustment;
use crate::instant::later;

/// See [`HostTable::pacing`].
#[derive(Debug, Clone, Copy)]
pub struct HostPacing {
    /// The rule's delay, or the floor it was raised to (Crawl-delay), without the learned one.
    pub delay: Duration,
    /// The floor alone: what the crawl learned (Crawl-delay). A restart restores this, not
    /// `delay`, so the rule's delay is the resumed run's own (a changed `--delay-ms` holds).
    pub floor: Duration,
    /// The adaptive throttle's learned delay, if it set one.
    pub learned: Option<Duration>,
    /// When the host may next go, its pause included.
    pub next_at: Instant,
    /// Its last lease, if it had one.
    pub last_lease: Option<Instant>,
    /// Pages of the host queued over the crawl (with a page budget; else 0).
    pub admitted: u64,
}

impl HostTable {
    /// A host's politeness state worth keeping across restarts: its raised delay, its
    /// learned delay, the instant it may next go (its pause included), and its last lease.
    pub fn pacing(&self, i: usize) -> HostPacing {
        let h = &self.hosts[i];
        HostPacing {
            delay: h.rule_delay().max(h.floor()),
            floor: h.floor(),
            learned: h.learned(),
            next_at: h.free_at(),
            last_lease: h.last_lease(),
            admitted: h.admitted,
        }
    }

    /// Restores a host's politeness state from an earlier run (`delay`: its raised delay,
    /// `learned`: its learned one). Without knowing what happened after its last lease, the
    /// host waits two delays from it, and a rate-limited host counts its windows as full at
    /// that lease, so a restart never bursts past a limit. A `not_before` later than that
    /// spacing is a pause (its server asked for it), so it can be capped and lifted.
    pub fn restore_pacing(
        &mut self,
        i: usize,
        floor: Duration,
        learned: Option<Duration>,
        not_before: Instant,
        last_lease: Option<Instant>,
    ) {
        let h = &mut self.hosts[i];
        if floor > h.floor() {
            h.rare_mut().floor = floor;
        }
        if let Some(d) = learned {
            let rare = h.rare_mut();
            rare.learned = Some(d.max(rare.rule_delay));
        }
        h.update_delay();
        let now = Instant::now();
        let mut spacing = now;
        if let Some(t) = last_lease {
            // The lease time is known, not when its request reached the server (a killed run
            // may have sent it late): a second delay covers that.
            spacing = later(later(t, h.policy().next_gap()), h.delay());
            if let Some(r) = h.rate_mut() {
                r.assume_full_at(t);
            }
            h.hold(spacing);
        }
        if not_before > spacing.max(now) {
            h.pause(not_before);
        }
        h.last_lease = last_lease.into();
        self.schedule(i, now);
    }
}

/// What the crawl learns of a host while it runs, and what of it the store must keep.
impl HostTable {
    /// Applies what the crawl learned about a host. Returns the host's index.
    pub fn adjust(&mut self, host_key: &str, adj: HostAdjustment, now: Instant) -> usize {
        let (i, _) = self.host_for(host_key, now);
        let h = &mut self.hosts[i];
        if let Some(d) = adj.min_delay.filter(|d| *d > h.floor()) {
            h.rare_mut().floor = d;
        }
        if let Some(d) = adj.learned_delay {
            let rare = h.rare_mut();
            rare.learned = Some(d.max(rare.rule_delay));
        }
        h.update_delay();
        if let Some(p) = adj.pause {
            h.pause(later(now, p));
        }
        self.schedule(i, now);
        i
    }

    /// The hosts with a learned delay, and that delay.
    pub fn learned_delays(&self) -> Vec<(Arc<str>, Duration)> {
        self.hosts.iter().filter_map(|h| Some((Arc::from(&*h.key), h.learned()?))).collect()
    }

    /// Hosts whose kept state changed since the last call: paced hosts (with a delay or rate
    /// limits) leased, and hosts that queued pages against a budget.
    pub fn take_paced_leases(&mut self) -> Vec<usize> {
        let v = std::mem::take(&mut self.paced_dirty);
        for &i in &v {
            self.hosts[i].pacing_dirty = false;
        }
        v
    }
}
