//! The adaptive throttle (Scrapy's AutoThrottle): each host's delay follows how fast it
//! answers, so a slow server gets fewer requests at once and a fast one is not held back.
//!
//! For every response the scheduler takes the *latency* (from sending the request to its
//! response headers) and aims for `target_concurrency` requests in flight at the host:
//!
//! ```text
//! target = latency / target_concurrency
//! new    = (old + target) / 2,  kept within [the host's rule delay, max_delay]
//! ```
//!
//! A non-2xx answer never lowers the delay (error pages and redirects are small and quick, and
//! would speed up a struggling server); a failed fetch has no latency and changes nothing
//! (a 429 still pauses the host, as do 503s from several URLs: `pauses.rs`). A host starts at `start_delay`
//! as soon as the crawl has work for it, before its first request goes out.
//!
//! The delay is *learned* state the frontier keeps per host ([`HostAdjustment::learned_delay`]):
//! the frontier spaces leases by the largest of the rule's delay, a robots.txt Crawl-delay and
//! the learned delay, and a durable frontier keeps it across restarts. The scheduler alone
//! computes it, and sends at most one change per host per commit batch.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kumo_frontier::HostAdjustment;

use crate::ConfigError;

/// The adaptive throttle's settings. kumo takes Scrapy's defaults: one request in flight per
/// host, 5 s before the first answer is known, at most 60 s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoThrottle {
    /// Requests the throttle aims to have in flight at each host (more than 0; may be a
    /// fraction: 0.5 waits twice the latency between requests).
    pub target_concurrency: f64,
    /// A host's delay before its first answer is known.
    pub start_delay: Duration,
    /// The longest delay the throttle sets (a rule's own delay may still be longer).
    pub max_delay: Duration,
}

impl Default for AutoThrottle {
    fn default() -> Self {
        AutoThrottle {
            target_concurrency: 1.0,
            start_delay: Duration::from_secs(5),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl AutoThrottle {
    /// Checks the settings.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !(self.target_concurrency.is_finite() && self.target_concurrency > 0.0) {
            return Err(ConfigError::AutoThrottle("the target concurrency must be a number above 0".into()));
        }
        if self.max_delay.is_zero() {
            return Err(ConfigError::AutoThrottle("the largest delay must be above 0".into()));
        }
        Ok(())
    }

    /// A host's first delay: `start_delay`, within `[floor, max_delay]`.
    pub fn start(&self, floor: Duration) -> Duration {
        self.start_delay.min(self.max_delay).max(floor)
    }

    /// The next delay of a host whose delay is `old` and whose last answer took `latency`;
    /// `ok` is a 2xx answer (anything else may raise the delay but never lowers it). `floor`
    /// is the host's rule delay.
    pub fn next_delay(&self, old: Duration, latency: Duration, ok: bool, floor: Duration) -> Duration {
        // In whole nanoseconds (the cast saturates), so no latency or target can overflow.
        let target =
            Duration::from_nanos((latency.as_nanos() as f64 / self.target_concurrency).round() as u64);
        let new = (old.saturating_add(target) / 2).min(self.max_delay).max(floor);
        if !ok && new < old { old } else { new }
    }
}

/// The scheduler's view of the learned delays, and the changes not yet sent to the frontier.
#[derive(Debug)]
pub(crate) struct Throttle {
    cfg: AutoThrottle,
    delays: HashMap<String, Duration>,
    /// Changed since the last [`Throttle::take`]; sorted so the frontier sees a stable order.
    pending: BTreeMap<String, Duration>,
    /// The frontier's learned delays were read in (once per engine initialization).
    resumed: bool,
}

impl Throttle {
    pub fn new(cfg: AutoThrottle) -> Self {
        Throttle { cfg, delays: HashMap::new(), pending: BTreeMap::new(), resumed: false }
    }

    /// Whether the delays the frontier kept from an earlier run are still to be read in.
    pub fn needs_resume(&self) -> bool {
        !self.resumed
    }

    /// Goes on from the delays the frontier kept (a resumed crawl).
    pub fn resume(&mut self, kept: Vec<(String, Duration)>) {
        for (host, d) in kept {
            self.delays.entry(host).or_insert(d);
        }
        self.resumed = true;
    }

    /// The crawl has work for `host`: a host not met before starts at the start delay
    /// (`floor`, its rule's delay, is only asked for then).
    pub fn meet(&mut self, host: &str, floor: impl FnOnce() -> Duration) {
        if !self.delays.contains_key(host) {
            let d = self.cfg.start(floor());
            self.delays.insert(host.to_string(), d);
            self.pending.insert(host.to_string(), d);
        }
    }

    /// An answer from `host` that took `latency`.
    pub fn observe(&mut self, host: &str, latency: Duration, ok: bool, floor: Duration) {
        let old = self.delays.get(host).copied().unwrap_or_else(|| self.cfg.start(floor));
        let new = self.cfg.next_delay(old, latency, ok, floor);
        if new != old {
            self.pending.insert(host.to_string(), new);
        }
        self.delays.insert(host.to_string(), new);
    }

    /// The changes to send, one adjustment per host.
    pub fn take(&mut self) -> Vec<(String, HostAdjustment)> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .map(|(host, d)| (host, HostAdjustment { learned_delay: Some(d), ..Default::default() }))
            .collect()
    }

    #[cfg(test)]
    fn delay(&self, host: &str) -> Option<Duration> {
        self.delays.get(host).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn cfg(target: f64) -> AutoThrottle {
        AutoThrottle { target_concurrency: target, start_delay: ms(1000), max_delay: ms(4000) }
    }

    #[test]
    fn the_delay_moves_halfway_to_latency_over_target() {
        let t = cfg(1.0);
        assert_eq!(t.next_delay(ms(1000), ms(200), true, Duration::ZERO), ms(600));
        assert_eq!(t.next_delay(ms(600), ms(200), true, Duration::ZERO), ms(400));
        assert_eq!(t.next_delay(ms(100), ms(900), true, Duration::ZERO), ms(500), "and up as well");
        // Two requests in flight wanted: half the latency apart.
        assert_eq!(cfg(2.0).next_delay(ms(1000), ms(1000), true, Duration::ZERO), ms(750));
        assert_eq!(cfg(0.5).next_delay(ms(0), ms(1000), true, Duration::ZERO), ms(1000));
    }

    #[test]
    fn the_delay_converges_to_latency_over_target() {
        let t = cfg(1.0);
        let mut d = t.start(Duration::ZERO);
        for _ in 0..20 {
            d = t.next_delay(d, ms(300), true, Duration::ZERO);
        }
        assert!(d.abs_diff(ms(300)) < ms(1), "{d:?}");
    }

    #[test]
    fn bounds_hold_and_errors_never_lower() {
        let t = cfg(1.0);
        assert_eq!(t.next_delay(ms(4000), ms(60_000), true, Duration::ZERO), ms(4000), "max_delay");
        assert_eq!(t.next_delay(ms(300), ms(0), true, ms(250)), ms(250), "never below the rule's delay");
        assert_eq!(t.next_delay(ms(5000), ms(0), true, ms(5000)), ms(5000), "a rule above max_delay wins");
        assert_eq!(t.next_delay(ms(1000), ms(10), false, Duration::ZERO), ms(1000), "a non-2xx never lowers");
        assert_eq!(t.next_delay(ms(100), ms(900), false, Duration::ZERO), ms(500), "but may raise");
        assert_eq!(t.start(Duration::ZERO), ms(1000));
        assert_eq!(t.start(ms(2000)), ms(2000));
        let low_max = AutoThrottle { max_delay: ms(10), ..t };
        assert_eq!(low_max.start(Duration::ZERO), ms(10), "the start delay within max_delay");
    }

    #[test]
    fn settings_are_checked() {
        assert!(AutoThrottle::default().check().is_ok());
        for target in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(AutoThrottle { target_concurrency: target, ..Default::default() }.check().is_err());
        }
        assert!(AutoThrottle { max_delay: Duration::ZERO, ..Default::default() }.check().is_err());
    }

    #[test]
    fn hosts_start_at_the_start_delay_and_changes_are_sent_once() {
        let mut t = Throttle::new(cfg(1.0));
        t.resume(vec![("kept.test".into(), ms(70))]);
        t.meet("a.test", || Duration::ZERO);
        t.meet("a.test", || panic!("the floor is only asked for a new host"));
        t.meet("kept.test", || Duration::ZERO);
        let sent = t.take();
        assert_eq!(sent.len(), 1, "a met host once, a kept one not at all: {sent:?}");
        assert_eq!(sent[0].1.learned_delay, Some(ms(1000)));
        t.observe("a.test", ms(200), true, Duration::ZERO);
        t.observe("a.test", ms(200), true, Duration::ZERO);
        t.observe("kept.test", ms(70), true, Duration::ZERO);
        let sent = t.take();
        assert_eq!(sent.len(), 1, "one adjustment per host per batch, none when nothing changed");
        assert_eq!((sent[0].0.as_str(), sent[0].1.learned_delay), ("a.test", Some(ms(400))));
        assert_eq!(t.delay("kept.test"), Some(ms(70)));
        assert!(t.take().is_empty());
    }
}
