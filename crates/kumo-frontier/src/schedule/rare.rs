//! What few hosts of a broad crawl need, kept apart in one box ([`Rare`]), so a host that
//! needs none of it costs one pointer: a pause its server asked for, retried requests backing
//! off, a Crawl-delay floor, a learned delay, a random delay, rate limits. While a host has
//! no box, its delay is its rule's own.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Entry, Host};
use crate::HostPolicy;
use crate::politeness::RateLog;

#[derive(Debug)]
pub(super) struct Rare {
    /// The rule's delay, which the host's delay no longer shows once a floor or a learned
    /// delay raised it.
    pub rule_delay: Duration,
    /// The rule's random extra to each delay (Colly's `RandomDelay`).
    pub random_delay: Duration,
    /// Until when the server asked the whole host to wait (`HostAdjustment::pause`). Apart
    /// from `next_at` so it can be shown, capped and lifted.
    pub paused_until: Option<Instant>,
    /// Retried requests waiting out their own back-off, by when they may go and sequence.
    /// Counted in `queued`; each goes back to the front of its level when due.
    pub backoff: BTreeMap<(Instant, u64), Entry>,
    /// Raised by `HostAdjustment::min_delay` (Crawl-delay); never lowered.
    pub floor: Duration,
    /// Set by `HostAdjustment::learned_delay` (adaptive throttle); at least `rule_delay`.
    pub learned: Option<Duration>,
    /// Sliding-window rate limits, when the host's rule has some.
    pub rate: Option<RateLog>,
}

impl Rare {
    fn new(rule_delay: Duration) -> Self {
        Rare {
            rule_delay,
            random_delay: Duration::ZERO,
            paused_until: None,
            backoff: BTreeMap::new(),
            floor: Duration::ZERO,
            learned: None,
            rate: None,
        }
    }

    /// A new host's box, if its rule needs one (a random delay, rate limits).
    pub fn of_rule(policy: &HostPolicy, rate: Option<RateLog>) -> Option<Box<Rare>> {
        if policy.random_delay.is_zero() && rate.is_none() {
            return None;
        }
        Some(Box::new(Rare { random_delay: policy.random_delay, rate, ..Rare::new(policy.delay) }))
    }

    /// Whether it holds nothing a box is needed for.
    fn is_empty(&self) -> bool {
        self.paused_until.is_none()
            && self.random_delay.is_zero()
            && self.backoff.is_empty()
            && self.floor.is_zero()
            && self.learned.is_none()
            && self.rate.is_none()
    }
}

impl Host {
    /// The host's box, made for it if it had none.
    pub(super) fn rare_mut(&mut self) -> &mut Rare {
        let rule_delay = self.delay();
        self.rare.get_or_insert_with(|| Box::new(Rare::new(rule_delay)))
    }

    /// Drops the box once it holds nothing (its delay is then the rule's again).
    pub(super) fn shrink(&mut self) {
        if self.rare.as_ref().is_some_and(|r| r.is_empty()) {
            self.rare = None;
        }
    }

    pub(super) fn rule_delay(&self) -> Duration {
        self.rare.as_ref().map_or(self.delay(), |r| r.rule_delay)
    }

    pub(super) fn floor(&self) -> Duration {
        self.rare.as_ref().map_or(Duration::ZERO, |r| r.floor)
    }

    pub(super) fn learned(&self) -> Option<Duration> {
        self.rare.as_ref().and_then(|r| r.learned)
    }

    pub(super) fn paused_until(&self) -> Option<Instant> {
        self.rare.as_ref().and_then(|r| r.paused_until)
    }

    pub(super) fn rate(&self) -> Option<&RateLog> {
        self.rare.as_ref().and_then(|r| r.rate.as_ref())
    }

    pub(super) fn rate_mut(&mut self) -> Option<&mut RateLog> {
        self.rare.as_mut().and_then(|r| r.rate.as_mut())
    }

    /// Retried requests backing off, soonest due first.
    pub(super) fn backoff(&self) -> impl Iterator<Item = (&(Instant, u64), &Entry)> {
        self.rare.iter().flat_map(|r| r.backoff.iter())
    }

    pub(super) fn backing_off(&self) -> usize {
        self.rare.as_ref().map_or(0, |r| r.backoff.len())
    }
}
