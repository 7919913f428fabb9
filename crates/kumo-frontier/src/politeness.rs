//! Per-host politeness rules: how many requests at once, how far apart they start, and how many
//! may start within given time windows.
//!
//! Rules are matched by host glob (Colly's `LimitRule` with `DomainGlob`) or by regular
//! expression (Colly's `DomainRegexp`), first match wins, else the default. The frontier applies
//! them when it hands out leases, so a rule never costs a worker a sleep.
//!
//! # Rate limits
//!
//! A rule may carry any number of [`RateLimit`]s (say 10 per second *and* 100 per minute). They
//! are **exact sliding windows** over lease hand-outs: for every limit `max per d`, no interval
//! of length `d` contains more than `max` lease starts for one host. Formally a lease at `t` is
//! allowed when fewer than `max` earlier leases of the host lie in `(t - d, t]`, for every
//! limit at once. A burst of `max` is therefore allowed, after which the host waits until the
//! oldest lease of a full window leaves it; the frontier parks the host in its `waiting` heap
//! until exactly that instant (no polling, no sleeping).
//!
//! Every lease counts, including one later returned by a retry, a deferral or its expiry: the
//! count is of hand-outs, which is conservative (a returned lease may or may not have reached
//! the server). The per-host cost is one log of the most recent lease instants, at most as long
//! as the largest `max` and trimmed of instants older than the longest window. Hosts whose rule
//! has no rate limits carry no log at all and pay nothing.
//!
//! Rate limits live on [`HostRule`]; to limit every host, add a last rule matching `*`.
//!
//! # Headers and proxies
//!
//! A rule may also carry headers sent with every request to its hosts, and proxies its
//! hosts' requests must go through. The frontier only keeps these as strings: the engine
//! applies them when it fetches (one downloader per distinct proxy).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use globset::{Glob, GlobMatcher};
use regex::{Regex, RegexBuilder};

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
        // Saturating: a delay may be as long as a server asked (a Crawl-delay, capped later).
        self.delay.saturating_add(margin).saturating_add(random)
    }
}

/// At most `max` leases for one host within any interval of length `per` (see the module
/// documentation for the exact semantics).
///
/// Degenerate values are normalized rather than refused: `max == 0` counts as 1 (as a
/// parallelism of 0 does), a zero `per` imposes nothing, and `per` is capped at 100 years.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimit {
    /// Most leases within one window.
    pub max: u32,
    /// The window's length.
    pub per: Duration,
}

/// A rate limit that does not read as `MAX/PERIOD`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limit {0:?}: expected MAX/PERIOD such as 10/s, 100/min or 5/2s")]
pub struct BadRateLimit(pub String);

impl std::str::FromStr for RateLimit {
    type Err = BadRateLimit;

    /// Reads `10/s`, `100/min`, `5/2s`, `1000/h`, `3/500ms`.
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x > 0.0)` also refuses NaN
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadRateLimit(s.to_string());
        let (max, period) = s.split_once('/').ok_or_else(bad)?;
        let max: u32 = max.trim().parse().map_err(|_| bad())?;
        let period = period.trim();
        let split = period.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(period.len());
        let (count, unit) = period.split_at(split);
        let count: f64 = if count.is_empty() { 1.0 } else { count.parse().map_err(|_| bad())? };
        let unit_secs = match unit {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" | "hour" => 3600.0,
            _ => return Err(bad()),
        };
        if max == 0 || !(count > 0.0) {
            return Err(bad());
        }
        let per = Duration::try_from_secs_f64(count * unit_secs).map_err(|_| bad())?;
        Ok(RateLimit::new(max, per))
    }
}

impl RateLimit {
    /// Longest window honored; longer ones are cut to this (keeps `Instant` arithmetic finite).
    const MAX_PER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

    /// At most `max` leases within any `per`.
    pub const fn new(max: u32, per: Duration) -> Self {
        RateLimit { max, per }
    }

    /// At most `max` leases within any second.
    pub const fn per_second(max: u32) -> Self {
        RateLimit::new(max, Duration::from_secs(1))
    }

    /// At most `max` leases within any minute.
    pub const fn per_minute(max: u32) -> Self {
        RateLimit::new(max, Duration::from_secs(60))
    }

    /// At most `max` leases within any hour.
    pub const fn per_hour(max: u32) -> Self {
        RateLimit::new(max, Duration::from_secs(3600))
    }

    /// The limit as enforced, or `None` if it imposes nothing. The window is widened by 5 %
    /// (at most 20 ms), as delays are: the frontier counts leases, the server counts arrivals,
    /// and the time between the two varies a little.
    fn normalized(self) -> Option<RateLimit> {
        if self.per.is_zero() {
            return None;
        }
        let per = self.per.min(Self::MAX_PER);
        Some(RateLimit { max: self.max.max(1), per: per + (per / 20).min(Duration::from_millis(20)) })
    }
}

#[derive(Debug, Clone)]
enum Matcher {
    Glob(GlobMatcher),
    Regex(Regex),
}

impl Matcher {
    fn is_match(&self, s: &str) -> bool {
        match self {
            Matcher::Glob(g) => g.is_match(s),
            Matcher::Regex(r) => r.is_match(s),
        }
    }
}

/// A host pattern with its policy and its rate limits.
///
/// The pattern is either a glob (`*.example.com`, `127.0.0.1:*`), which must match the whole
/// host key, or a regular expression, which (as Colly's `DomainRegexp`) matches if it is found
/// anywhere in the host key: anchor it with `^…$` to match whole keys. Both are
/// case-insensitive and are tried against `host:port` and against the bare host.
#[derive(Debug, Clone)]
pub struct HostRule {
    pattern: String,
    matcher: Matcher,
    /// The limits a matching host gets.
    pub policy: HostPolicy,
    rate_limits: Vec<RateLimit>,
    /// Headers sent with every request to a matching host (unless the request has its own).
    headers: Vec<(String, String)>,
    /// Proxies (URLs) a matching host's requests go through, one of them per request; empty:
    /// the crawl's own downloaders.
    proxies: Vec<String>,
}

impl HostRule {
    /// A rule matched by host glob.
    pub fn new(pattern: &str, policy: HostPolicy) -> Result<Self, globset::Error> {
        let matcher = Matcher::Glob(Glob::new(&pattern.to_ascii_lowercase())?.compile_matcher());
        Ok(HostRule {
            pattern: pattern.to_string(),
            matcher,
            policy,
            rate_limits: Vec::new(),
            headers: Vec::new(),
            proxies: Vec::new(),
        })
    }

    /// A rule matched by regular expression (unanchored, case-insensitive). An invalid
    /// expression is an error.
    pub fn regex(pattern: &str, policy: HostPolicy) -> Result<Self, regex::Error> {
        let re = RegexBuilder::new(pattern).case_insensitive(true).build()?;
        Ok(HostRule {
            pattern: pattern.to_string(),
            matcher: Matcher::Regex(re),
            policy,
            rate_limits: Vec::new(),
            headers: Vec::new(),
            proxies: Vec::new(),
        })
    }

    /// Adds a rate limit; a rule may carry any number (every one must have a token).
    pub fn with_rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limits.push(limit);
        self
    }

    /// Adds several rate limits.
    pub fn with_rate_limits(mut self, limits: impl IntoIterator<Item = RateLimit>) -> Self {
        self.rate_limits.extend(limits);
        self
    }

    /// Adds a header sent with every request to a matching host.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The headers sent with every request to a matching host.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Sends a matching host's requests through `proxy` (an `http://`, `https://` or
    /// `socks5://` URL). Several may be added: each request goes through one of them. A
    /// repeated proxy is kept once.
    pub fn with_proxy(mut self, proxy: &str) -> Self {
        if !self.proxies.iter().any(|p| p == proxy) {
            self.proxies.push(proxy.to_string());
        }
        self
    }

    /// The proxies a matching host's requests go through (empty: the crawl's own).
    pub fn proxies(&self) -> &[String] {
        &self.proxies
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern is a regular expression (else a glob).
    pub fn is_regex(&self) -> bool {
        matches!(self.matcher, Matcher::Regex(_))
    }

    /// Its rate limits, as added.
    pub fn rate_limits(&self) -> &[RateLimit] {
        &self.rate_limits
    }

    /// Whether the rule applies to `host_key` (`host[:port]`).
    pub fn matches(&self, host_key: &str) -> bool {
        self.matcher.is_match(host_key) || {
            let bare = bare_host(host_key);
            bare.len() != host_key.len() && self.matcher.is_match(bare)
        }
    }
}

/// `host` from `host:port` (a numeric port only; IPv6 literals keep their brackets).
pub fn bare_host(host_key: &str) -> &str {
    host_key
        .rsplit_once(':')
        .map_or(host_key, |(h, p)| if p.bytes().all(|b| b.is_ascii_digit()) { h } else { host_key })
}

/// The default policy and the host rules, the policy per IP address, and the page budgets.
#[derive(Debug, Clone, Default)]
pub struct Politeness {
    /// The policy of a host no rule matches.
    pub default: HostPolicy,
    /// The host rules, in order: the first that matches a host is its rule.
    pub rules: Vec<HostRule>,
    /// Gate every host by its address too (`--per-ip`, `--ip-delay`): a host goes only when
    /// its rules and its address's allow it. The frontier then hands out each host to be
    /// resolved before its first lease.
    pub per_ip: Option<IpPolicy>,
    /// The pages each host and each registrable domain may have queued over the crawl.
    pub budget: Budget,
}

/// Page budgets, so that no host (a giant site, a trap) and no domain (a spam farm of many
/// hosts) takes the crawl: a link to a host or domain that has used its budget is not queued
/// (skipped as `budget`, and not marked seen, so a raised budget takes it when it is found
/// again). Counted as pages are queued, kept across resumes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Pages per host (`host:port`); 0: no budget.
    pub per_host: u64,
    /// Pages per registrable domain, all its hosts together; 0: no budget.
    pub per_domain: u64,
}

impl Budget {
    /// Whether either budget is set.
    pub fn is_on(&self) -> bool {
        self.per_host > 0 || self.per_domain > 0
    }
}

/// What one IP address takes, whichever of its names is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpPolicy {
    /// Most requests in flight to the address at once; 0: no bound (only the gap).
    pub parallelism: u32,
    /// Least time between the starts of two requests to the address.
    pub delay: Duration,
}

impl IpPolicy {
    /// The bound on requests in flight.
    pub fn cap(&self) -> u32 {
        if self.parallelism == 0 { u32::MAX } else { self.parallelism }
    }
}

impl Politeness {
    /// The first rule matching `host_key` (`host[:port]`), if any.
    pub fn rule_for(&self, host_key: &str) -> Option<&HostRule> {
        self.rules.iter().find(|r| r.matches(host_key))
    }

    /// The policy for `host_key`: the first rule matching it, else the default.
    pub fn policy_for(&self, host_key: &str) -> HostPolicy {
        self.rule_for(host_key).map_or(self.default, |r| r.policy)
    }

    /// The rate limits for `host_key`: those of the first matching rule (none by default).
    pub fn rate_limits_for(&self, host_key: &str) -> &[RateLimit] {
        self.rule_for(host_key).map_or(&[], |r| r.rate_limits())
    }
}

/// One host's sliding-window state for its rate limits: the instants of its most recent leases.
///
/// A single log serves every window, since all count the same events: window `i` is full when
/// the `max_i`-th most recent lease is less than `per_i` ago.
#[derive(Debug, Clone)]
pub(crate) struct RateLog {
    /// Normalized, non-empty.
    limits: Box<[RateLimit]>,
    /// Most recent last; at most `cap` long.
    log: VecDeque<Instant>,
    cap: usize,
    longest: Duration,
}

impl RateLog {
    /// The state for `limits`, or `None` if they impose nothing (the frontier then skips all
    /// rate bookkeeping for the host).
    pub(crate) fn new(limits: &[RateLimit]) -> Option<Self> {
        let limits: Box<[RateLimit]> = limits.iter().filter_map(|l| l.normalized()).collect();
        let cap = limits.iter().map(|l| l.max as usize).max()?;
        let longest = limits.iter().map(|l| l.per).max()?;
        Some(RateLog { limits, log: VecDeque::with_capacity(cap.min(64)), cap, longest })
    }

    /// The earliest instant at which every window has a token, or `None` if they all have one
    /// whatever the time. Depends only on the recorded leases, so it stays valid until the next.
    pub(crate) fn next_free(&self) -> Option<Instant> {
        let len = self.log.len();
        self.limits
            .iter()
            .filter(|l| len >= l.max as usize)
            .map(|l| self.log[len - l.max as usize] + l.per)
            .max()
    }

    /// Records a lease handed out at `now`.
    pub(crate) fn record(&mut self, now: Instant) {
        // Instants no window can reach again are forgotten.
        while self.log.front().is_some_and(|&t| t + self.longest <= now) {
            self.log.pop_front();
        }
        if self.log.len() == self.cap {
            self.log.pop_front();
        }
        self.log.push_back(now);
    }

    /// Fills every window as if the last `cap` leases all happened at `at`: the safe guess
    /// after a restart, when the real times are unknown.
    pub(crate) fn assume_full_at(&mut self, at: Instant) {
        self.log.clear();
        self.log.extend(std::iter::repeat_n(at, self.cap));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.log.len()
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
            ..Default::default()
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

    #[test]
    fn regex_rules_match_beside_globs_first_match_wins() {
        let a = HostPolicy { parallelism: 1, ..Default::default() };
        let b = HostPolicy { parallelism: 2, ..Default::default() };
        let c = HostPolicy { parallelism: 3, ..Default::default() };
        let p = Politeness {
            default: HostPolicy::default(),
            rules: vec![
                HostRule::regex(r"^(www|api)\.example\.(com|org)$", a).unwrap(),
                HostRule::new("*.example.com", b).unwrap(),
                HostRule::regex(r"\d+\.\d+\.\d+\.\d+", c).unwrap(),
            ],
            ..Default::default()
        };
        assert!(p.rules[0].is_regex() && !p.rules[1].is_regex());
        assert_eq!(p.policy_for("www.example.com"), a);
        assert_eq!(p.policy_for("API.example.org"), a, "case-insensitive");
        assert_eq!(p.policy_for("api.example.org:8443"), a, "tried against the bare host too");
        assert_eq!(p.policy_for("cdn.example.com"), b, "the regex does not match, the glob does");
        assert_eq!(p.policy_for("127.0.0.1:8080"), c, "unanchored, like Colly's DomainRegexp");
        assert_eq!(p.policy_for("example.net"), HostPolicy::default());
        assert_eq!(p.rules[0].pattern(), r"^(www|api)\.example\.(com|org)$");
    }

    #[test]
    fn invalid_regex_is_an_error() {
        assert!(HostRule::regex("(unclosed", HostPolicy::default()).is_err());
        assert!(HostRule::regex("a{99999999}", HostPolicy::default()).is_err());
        assert!(HostRule::new("[", HostPolicy::default()).is_err(), "and an invalid glob too");
    }

    #[test]
    fn rate_limits_belong_to_the_matching_rule() {
        let p = Politeness {
            default: HostPolicy::default(),
            rules: vec![
                HostRule::regex(r"^a\.test$", HostPolicy::default())
                    .unwrap()
                    .with_rate_limits([RateLimit::per_second(10), RateLimit::per_minute(100)]),
                HostRule::new("*", HostPolicy::default()).unwrap().with_rate_limit(RateLimit::per_hour(5)),
            ],
            ..Default::default()
        };
        assert_eq!(p.rate_limits_for("a.test"), &[RateLimit::per_second(10), RateLimit::per_minute(100)]);
        assert_eq!(p.rate_limits_for("b.test"), &[RateLimit::per_hour(5)]);
        assert!(Politeness::default().rate_limits_for("a.test").is_empty());
    }

    #[test]
    fn rate_limits_read_as_max_per_period() {
        let read = |s: &str| s.parse::<RateLimit>();
        assert_eq!(read("10/s"), Ok(RateLimit::per_second(10)));
        assert_eq!(read("100/min"), Ok(RateLimit::per_minute(100)));
        assert_eq!(read(" 5 / h "), Ok(RateLimit::per_hour(5)));
        assert_eq!(read("5/2s"), Ok(RateLimit::new(5, Duration::from_secs(2))));
        assert_eq!(read("3/500ms"), Ok(RateLimit::new(3, Duration::from_millis(500))));
        assert_eq!(read("1/0.5m"), Ok(RateLimit::new(1, Duration::from_secs(30))));
        for bad in ["", "10", "0/s", "10/", "10/week", "x/s", "10/0s", "10/-1s", "10/1e999h", "10/NaNs"] {
            let e = read(bad).unwrap_err();
            assert!(e.to_string().contains("expected MAX/PERIOD"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn proxies_and_headers_belong_to_the_matching_rule() {
        let p = Politeness {
            default: HostPolicy::default(),
            rules: vec![
                HostRule::new("*.shop.test", HostPolicy::default())
                    .unwrap()
                    .with_proxy("http://127.0.0.1:3128")
                    .with_proxy("socks5://127.0.0.1:1080")
                    .with_proxy("http://127.0.0.1:3128")
                    .with_header("x-a", "1"),
                HostRule::new("*", HostPolicy::default()).unwrap(),
            ],
            ..Default::default()
        };
        let shop = p.rule_for("www.shop.test").unwrap();
        assert_eq!(shop.proxies(), ["http://127.0.0.1:3128", "socks5://127.0.0.1:1080"], "kept once each");
        assert_eq!(shop.headers(), [("x-a".to_string(), "1".to_string())]);
        assert!(p.rule_for("other.test").unwrap().proxies().is_empty());
    }

    #[test]
    fn rate_log_is_absent_when_nothing_is_limited() {
        assert!(RateLog::new(&[]).is_none());
        assert!(RateLog::new(&[RateLimit::new(5, Duration::ZERO)]).is_none(), "a zero window limits nothing");
        let log = RateLog::new(&[RateLimit::new(0, Duration::from_secs(1))]).unwrap();
        assert_eq!(log.limits[0].max, 1, "max 0 counts as 1");
    }

    /// Replays a lease schedule against a log: each lease goes out at the earliest allowed
    /// instant at or after its wish and the previous lease (time only moves forward).
    fn replay(log: &mut RateLog, wishes: &[Duration], t0: Instant) -> Vec<Duration> {
        let mut last = t0;
        wishes
            .iter()
            .map(|&w| {
                let earliest = last.max(t0 + w);
                let at = log.next_free().map_or(earliest, |f| f.max(earliest));
                log.record(at);
                last = at;
                at - t0
            })
            .collect()
    }

    #[test]
    fn every_window_must_have_a_token() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        // 4 per 100 ms and 6 per 400 ms, ten leases wanted at once.
        let mut log = RateLog::new(&[RateLimit::new(4, ms(100)), RateLimit::new(6, ms(400))]).unwrap();
        assert_eq!(log.next_free(), None);
        let got = replay(&mut log, &[Duration::ZERO; 10], t0);
        // Windows widened by 5 %: 100 ms → 105 ms, 400 ms → 420 ms.
        let want = [0, 0, 0, 0, 105, 105, 420, 420, 420, 420].map(ms);
        assert_eq!(got, want, "a burst of 4, then 2 more when the short window frees, then the long one");
        assert_eq!(log.next_free(), Some(t0 + ms(525)), "the 6th most recent + 420 ms");
    }

    #[test]
    fn sliding_windows_hold_for_arbitrary_schedules() {
        let t0 = Instant::now();
        let limits = [
            RateLimit::new(3, Duration::from_millis(70)),
            RateLimit::new(5, Duration::from_millis(200)),
            RateLimit::new(9, Duration::from_millis(1000)),
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        let mut log = RateLog::new(&limits).unwrap();
        let mut wish = Duration::ZERO;
        let wishes: Vec<Duration> = (0..500)
            .map(|_| {
                wish += Duration::from_millis(rng.u64(0..120));
                wish
            })
            .collect();
        let got = replay(&mut log, &wishes, t0);
        assert!(log.len() <= 9, "the log never outgrows the largest max");
        let limits = limits.map(|l| l.normalized().unwrap());
        for l in limits {
            for (i, w) in got.windows(l.max as usize + 1).enumerate() {
                assert!(w[l.max as usize] - w[0] >= l.per, "{l:?} exceeded at lease {i}: {w:?}");
            }
        }
        // And none waited longer than needed: each lease either went at its wish or exactly
        // when some window freed.
        for (k, (&g, &w)) in got.iter().zip(&wishes).enumerate() {
            let freed = limits.iter().any(|l| k >= l.max as usize && got[k - l.max as usize] + l.per == g);
            let prev = if k == 0 { Duration::ZERO } else { got[k - 1] };
            assert!(g == w.max(prev) || freed, "lease {k} at {g:?} (wished {w:?}) waited for nothing");
        }
    }

    #[test]
    fn old_instants_are_forgotten() {
        let t0 = Instant::now();
        let mut log = RateLog::new(&[RateLimit::new(100, Duration::from_millis(10))]).unwrap();
        for k in 0..50 {
            log.record(t0 + Duration::from_millis(k));
        }
        assert!(log.len() <= 11, "only the last 10 ms are kept: {}", log.len());
        assert_eq!(log.next_free(), None);
    }
}
