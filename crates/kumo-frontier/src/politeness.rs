//! Per-host politeness rules: how many requests at once, and how far apart they start.
//!
//! Rules are matched by host glob (Colly's `LimitRule`), first match wins, else the default.
//! The frontier applies them when it hands out leases, so a rule never costs a worker a sleep.

use std::time::Duration;

use globset::{Glob, GlobMatcher};

/// Limits for one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPolicy {
    /// Most requests in flight to the host at once (at least 1).
    pub parallelism: u32,
    /// Least time between the starts of two requests to the host.
    pub delay: Duration,
    /// A random extra in `[0, random_delay)` added to each delay (Colly's `RandomDelay`).
    pub random_delay: Duration,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy { parallelism: 8, delay: Duration::ZERO, random_delay: Duration::ZERO }
    }
}

impl HostPolicy {
    /// The spacing to the next lease: `delay` plus a random share of `random_delay`, plus a
    /// margin of 5 % of the delay (at most 20 ms). The margin covers the time between a lease
    /// and its request leaving, which varies a little, so the gap the *server* sees between two
    /// requests is never shorter than the delay.
    pub fn next_gap(&self) -> Duration {
        if self.delay.is_zero() && self.random_delay.is_zero() {
            return Duration::ZERO;
        }
        let margin = (self.delay / 20).min(Duration::from_millis(20));
        let random = if self.random_delay.is_zero() {
            Duration::ZERO
        } else {
            let nanos = self.random_delay.as_nanos().min(u64::MAX as u128) as u64;
            Duration::from_nanos(fastrand::u64(0..nanos))
        };
        self.delay + margin + random
    }
}

/// A host glob (`*.example.com`, `127.0.0.1:*`) with its policy.
#[derive(Debug, Clone)]
pub struct HostRule {
    pattern: String,
    matcher: GlobMatcher,
    pub policy: HostPolicy,
}

impl HostRule {
    pub fn new(pattern: &str, policy: HostPolicy) -> Result<Self, globset::Error> {
        let matcher = Glob::new(&pattern.to_ascii_lowercase())?.compile_matcher();
        Ok(HostRule { pattern: pattern.to_string(), matcher, policy })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

/// The default policy and the host rules.
#[derive(Debug, Clone, Default)]
pub struct Politeness {
    pub default: HostPolicy,
    pub rules: Vec<HostRule>,
}

impl Politeness {
    /// The policy for `host_key` (`host[:port]`): the first rule matching it, else the default.
    pub fn policy_for(&self, host_key: &str) -> HostPolicy {
        let bare = host_key
            .rsplit_once(':')
            .map_or(host_key, |(h, p)| if p.bytes().all(|b| b.is_ascii_digit()) { h } else { host_key });
        self.rules
            .iter()
            .find(|r| r.matcher.is_match(host_key) || r.matcher.is_match(bare))
            .map_or(self.default, |r| r.policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_rule_wins_else_default() {
        let slow = HostPolicy { parallelism: 1, delay: Duration::from_secs(2), ..Default::default() };
        let p = Politeness {
            default: HostPolicy::default(),
            rules: vec![
                HostRule::new("*.example.com", slow).unwrap(),
                HostRule::new("*", HostPolicy { parallelism: 3, ..Default::default() }).unwrap(),
            ],
        };
        assert_eq!(p.policy_for("www.example.com"), slow);
        assert_eq!(p.policy_for("www.example.com:8080"), slow);
        assert_eq!(p.policy_for("other.org").parallelism, 3);
        let none = Politeness::default();
        assert_eq!(none.policy_for("x"), HostPolicy::default());
    }

    #[test]
    fn random_delay_stays_in_bounds() {
        let p = HostPolicy {
            parallelism: 1,
            delay: Duration::from_millis(10),
            random_delay: Duration::from_millis(5),
        };
        for _ in 0..200 {
            let g = p.next_gap();
            // 10 ms delay + 0.5 ms margin + [0, 5) ms random.
            assert!(g >= Duration::from_micros(10_500) && g < Duration::from_micros(15_500), "{g:?}");
        }
    }
}
