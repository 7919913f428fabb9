//! How a worker joins a crawl kept in Redis.

use std::time::Duration;

use kumo_frontier::{HostPolicy, Politeness, RateLimit};

/// Settings of one worker's connection to a shared crawl.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    /// `redis://HOST:PORT/DB` or `redis+unix:///path/to/socket`.
    pub url: String,
    /// The crawl's name: every key of the crawl is under `kumo:{NAME}:`, one hash slot.
    pub crawl: String,
    /// This worker's stable name. A process started with the same name takes over the
    /// previous one's leases at once and its item journal (its outputs).
    pub worker: String,
    /// Identifies the crawl's configuration: a worker whose id differs from the crawl's is
    /// refused.
    pub config_id: String,
    /// Per-host rules, written into Redis by the first worker and enforced there.
    pub politeness: Politeness,
    /// A lease never completed comes back after this long, whatever its worker's heartbeat.
    pub lease_ttl: Duration,
    /// A worker whose heartbeat stopped this long ago is dead: its leases go back.
    pub dead_after: Duration,
    /// How long calls keep retrying while Redis is away before they fail.
    pub outage_wait: Duration,
}

impl RedisConfig {
    /// A worker's settings with the defaults: a lease back after 10 minutes, a worker dead 15 s
    /// after its last heartbeat, calls retried for 5 minutes; no config id, default politeness.
    pub fn new(url: &str, crawl: &str, worker: &str) -> Self {
        RedisConfig {
            url: url.to_string(),
            crawl: crawl.to_string(),
            worker: worker.to_string(),
            config_id: String::new(),
            politeness: Politeness::default(),
            lease_ttl: Duration::from_secs(600),
            dead_after: Duration::from_secs(15),
            outage_wait: Duration::from_secs(300),
        }
    }

    /// The crawl's key prefix; the braces make it one hash slot on Redis Cluster.
    pub fn prefix(&self) -> String {
        format!("kumo:{{{}}}:", self.crawl)
    }
}

/// The policies as the script reads them: index 0 the default, index i+1 rule i, each
/// `parallelism|delay_ms|random_delay_ms|max/per_ms,...`.
pub(crate) fn policy_specs(p: &Politeness) -> Vec<String> {
    let spec = |policy: &HostPolicy, limits: &[RateLimit]| {
        let limits: Vec<String> = limits
            .iter()
            .filter(|l| !l.per.is_zero())
            .map(|l| format!("{}/{}", l.max.max(1), millis(l.per)))
            .collect();
        format!(
            "{}|{}|{}|{}",
            policy.parallelism.max(1),
            millis(policy.delay),
            millis(policy.random_delay),
            limits.join(",")
        )
    };
    let mut out = vec![spec(&p.default, &[])];
    out.extend(p.rules.iter().map(|r| spec(&r.policy, r.rate_limits())));
    out
}

/// The index of the policy a host gets (see [`policy_specs`]).
pub(crate) fn policy_index(p: &Politeness, host_key: &str) -> usize {
    p.rules.iter().position(|r| r.matches(host_key)).map_or(0, |i| i + 1)
}

/// Whole milliseconds, saturating: a century is as good as forever here.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).min(3_153_600_000_000)
}
