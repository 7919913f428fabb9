//! When a retryable answer pauses its whole host, and when it only delays its own URL.
//!
//! A `Retry-After` speaks for the URL that carried it until the host shows otherwise: one
//! page answering `503 Retry-After: 86400` (a page in maintenance, or a hostile one) must not
//! stall its site. So:
//! - a `Retry-After` longer than `max_retry_after` is not believed (a wait no crawl should
//!   make, or a number no clock holds): the answer counts as if it had none, for its request
//!   (retried on its back-off: `results.rs`) and for a 429's pause;
//! - a 429 ("too many requests": about the crawl's pace on the host) pauses the host for its
//!   believed `Retry-After`, or for the request's back-off without one;
//! - a 503 with a `Retry-After` pauses the host only once [`DISTINCT_URLS`] different URLs of
//!   the host have answered so within [`WINDOW`], and then for the shortest wait they asked
//!   for (the one they all agree on; believed or not, since a host that is down for a day
//!   shows it from every URL);
//! - a URL pauses its host at most once per crawl: its later answers delay only itself, so a
//!   retry that goes first when a pause lifts cannot pause its host again and again.
//!
//! Every pause is capped at `max_host_pause`. The memory is the scheduler's, in this process:
//! a resumed crawl, or another worker of a shared one, may let a URL pause its host once more,
//! which costs one capped pause at most.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use kumo_core::Url;

use crate::CrawlConfig;

/// Different URLs of a host whose 503s with `Retry-After` speak for the host. One or two may
/// be a single broken page under two URLs (aliases the canonical form keeps apart); a host
/// that is down answers every request so, and shows three at once (a host has eight requests
/// in flight by default).
pub(crate) const DISTINCT_URLS: usize = 3;

/// How close together those answers must come: a host that is down answers its next requests
/// so within seconds, even at the longest Crawl-delay honored by default (10 s), while a few
/// broken pages met over a long crawl do not add up.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// `retry_after` when the crawl believes it: at most `max_retry_after`.
pub(crate) fn believed(cfg: &CrawlConfig, retry_after: Option<Duration>) -> Option<Duration> {
    retry_after.filter(|wait| *wait <= cfg.max_retry_after)
}

/// Hosts with 503s on record before those whose window has passed are swept out.
const SWEEP_AT: usize = 1024;

/// A retryable answer, as the pause rules read it.
pub(crate) struct Answer<'a> {
    /// `host[:port]`.
    pub host: &'a str,
    pub url: &'a Url,
    pub status: u16,
    /// The answer's `Retry-After`, as the server sent it.
    pub retry_after: Option<Duration>,
    /// The request's retries so far (a bare 429 pauses for the request's back-off).
    pub retries: u32,
}

/// One 503 with a `Retry-After`, waiting for others from the same host.
struct Sighting {
    at: Instant,
    url: u64,
    wait: Duration,
}

/// What the scheduler remembers to decide pauses.
#[derive(Default)]
pub(crate) struct HostPauses {
    /// URLs (the xxh3 of their text) that have paused their host: at most one more for each
    /// answer that pauses a host, about 16 bytes each.
    paused_by: HashSet<u64>,
    /// Per host, its recent 503s with a `Retry-After` from URLs not in `paused_by`, one per
    /// URL, fewer than [`DISTINCT_URLS`].
    recent: HashMap<String, Vec<Sighting>>,
}

impl HostPauses {
    /// How long `a` pauses its host from `now`, or `None` when it only delays its request.
    pub fn on_answer(&mut self, cfg: &CrawlConfig, a: &Answer<'_>, now: Instant) -> Option<Duration> {
        let cap = cfg.max_host_pause;
        let url = xxhash_rust::xxh3::xxh3_64(a.url.as_str().as_bytes());
        if cap.is_zero() || self.paused_by.contains(&url) {
            return None;
        }
        let pause = match (a.status, a.retry_after) {
            (429, wait) => match believed(cfg, wait) {
                Some(wait) => wait,
                None => cfg.retry_backoff.saturating_mul(1 << a.retries.min(16)),
            },
            (503, Some(wait)) if !wait.is_zero() => {
                return self.sighted(a.host, url, wait, now).map(|w| w.min(cap));
            }
            _ => return None,
        };
        if pause.is_zero() {
            return None;
        }
        self.paused_by.insert(url);
        // Its pause is had: an earlier 503 of it no longer counts toward another.
        if let Some(seen) = self.recent.get_mut(a.host) {
            seen.retain(|s| s.url != url);
        }
        Some(pause.min(cap))
    }

    /// Counts a 503 with a `Retry-After` of `wait` from `url`; once enough URLs of `host` agree
    /// within the window, they pause it for the shortest wait and never count again.
    fn sighted(&mut self, host: &str, url: u64, wait: Duration, now: Instant) -> Option<Duration> {
        let fresh = |s: &Sighting| now.saturating_duration_since(s.at) < WINDOW;
        if self.recent.len() >= SWEEP_AT && !self.recent.contains_key(host) {
            self.recent.retain(|_, seen| seen.iter().any(fresh));
        }
        let seen = self.recent.entry(host.to_owned()).or_default();
        seen.retain(|s| fresh(s) && s.url != url);
        seen.push(Sighting { at: now, url, wait });
        if seen.len() < DISTINCT_URLS {
            return None;
        }
        let seen = self.recent.remove(host).unwrap_or_default();
        self.paused_by.extend(seen.iter().map(|s| s.url));
        seen.iter().map(|s| s.wait).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "a.test";

    fn cfg() -> CrawlConfig {
        CrawlConfig {
            max_host_pause: Duration::from_secs(300),
            max_retry_after: Duration::from_secs(400),
            retry_backoff: Duration::from_millis(500),
            ..Default::default()
        }
    }

    fn url(path: &str) -> Url {
        Url::parse(&format!("http://{HOST}{path}")).unwrap()
    }

    /// The pause for `status` with a `Retry-After` of `secs` from `path`.
    fn answer(
        p: &mut HostPauses,
        path: &str,
        status: u16,
        secs: Option<u64>,
        now: Instant,
    ) -> Option<Duration> {
        let u = url(path);
        let a =
            Answer { host: HOST, url: &u, status, retry_after: secs.map(Duration::from_secs), retries: 0 };
        p.on_answer(&cfg(), &a, now)
    }

    #[test]
    fn one_url_never_pauses_its_host_with_503s() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        for i in 0..10 {
            let at = t0 + Duration::from_secs(i);
            assert_eq!(answer(&mut p, "/down", 503, Some(86_400), at), None, "answer {i}");
        }
    }

    #[test]
    fn three_urls_pause_the_host_once_for_the_wait_they_share() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        assert_eq!(answer(&mut p, "/a", 503, Some(86_400), t0), None);
        assert_eq!(answer(&mut p, "/b", 503, Some(20), t0), None);
        assert_eq!(answer(&mut p, "/b", 503, Some(30), t0), None, "the same URL again is not another");
        assert_eq!(answer(&mut p, "/c", 503, Some(40), t0), Some(Duration::from_secs(30)));
        // Each of them has had its pause: 503s or 429s from them delay only themselves.
        assert_eq!(answer(&mut p, "/a", 503, Some(5), t0), None);
        assert_eq!(answer(&mut p, "/b", 429, Some(5), t0), None);
        assert_eq!(answer(&mut p, "/c", 503, Some(5), t0), None);
        assert_eq!(answer(&mut p, "/d", 503, Some(5), t0), None, "a new count starts");
    }

    #[test]
    fn a_pause_from_503s_is_capped() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        for path in ["/a", "/b"] {
            assert_eq!(answer(&mut p, path, 503, Some(86_400), t0), None);
        }
        assert_eq!(answer(&mut p, "/c", 503, Some(86_400), t0), Some(Duration::from_secs(300)));
    }

    #[test]
    fn answers_further_apart_than_the_window_do_not_add_up() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        assert_eq!(answer(&mut p, "/a", 503, Some(10), t0), None);
        assert_eq!(answer(&mut p, "/b", 503, Some(10), t0 + WINDOW / 2), None);
        assert_eq!(answer(&mut p, "/c", 503, Some(10), t0 + WINDOW), None, "/a is out of the window");
        assert_eq!(answer(&mut p, "/d", 503, Some(10), t0 + WINDOW), Some(Duration::from_secs(10)));
    }

    #[test]
    fn answers_asking_no_wait_or_other_statuses_are_no_evidence() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        for path in ["/a", "/b", "/c", "/d"] {
            assert_eq!(answer(&mut p, path, 503, Some(0), t0), None);
            assert_eq!(answer(&mut p, path, 503, None, t0), None);
            assert_eq!(answer(&mut p, path, 500, Some(60), t0), None);
        }
    }

    #[test]
    fn a_429_pauses_its_host_once_per_url() {
        let (mut p, t0) = (HostPauses::default(), Instant::now());
        assert_eq!(answer(&mut p, "/busy", 429, Some(7), t0), Some(Duration::from_secs(7)));
        assert_eq!(answer(&mut p, "/busy", 429, Some(7), t0), None, "its retry delays only itself");
        assert_eq!(answer(&mut p, "/capped", 429, Some(300), t0), Some(Duration::from_secs(300)));
        assert_eq!(answer(&mut p, "/bare", 429, None, t0), Some(Duration::from_millis(500)));
        // Longer than max_retry_after: not believed, so a bare 429's back-off.
        assert_eq!(answer(&mut p, "/day", 429, Some(86_400), t0), Some(Duration::from_millis(500)));
        // A URL that paused its host with a 429 adds nothing to a count of 503s.
        assert_eq!(answer(&mut p, "/x", 503, Some(9), t0), None);
        assert_eq!(answer(&mut p, "/x", 429, Some(9), t0), Some(Duration::from_secs(9)));
        assert_eq!(answer(&mut p, "/y", 503, Some(9), t0), None);
        assert_eq!(answer(&mut p, "/z", 503, Some(9), t0), None, "/x's 503 no longer counts");
    }

    #[test]
    fn no_pause_cap_means_no_pause() {
        let (mut p, u) = (HostPauses::default(), url("/busy"));
        let a = Answer {
            host: HOST,
            url: &u,
            status: 429,
            retry_after: Some(Duration::from_secs(9)),
            retries: 0,
        };
        let none = CrawlConfig { max_host_pause: Duration::ZERO, ..cfg() };
        assert_eq!(p.on_answer(&none, &a, Instant::now()), None);
        assert_eq!(
            p.on_answer(&cfg(), &a, Instant::now()),
            Some(Duration::from_secs(9)),
            "it had not paused it"
        );
    }
}
