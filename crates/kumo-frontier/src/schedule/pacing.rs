//! What of a host's politeness survives a restart: its Crawl-delay floor, learned delay,
//! next turn (a pause included), last lease and pages queued against its budget.

use std::time::{Duration, Instant};

use super::HostTable;
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
    pub next_at: Instant,
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
