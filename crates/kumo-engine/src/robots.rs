//! robots.txt in the crawl: fetched once per origin (single-flight), cached with a time-to-live
//! and a bounded size, and consulted before every fetch.
//!
//! The downloader task that first needs an origin's rules fetches them inside its own lease,
//! so the fetch counts against the host's parallelism like any request. A 5xx answer or no
//! answer at all (refused, reset, timed out) makes the origin unavailable, which RFC 9309
//! §2.3.1.4 reads as "disallow everything": the answer is cached for a while, the origin's
//! requests are put back (their host paused) meanwhile, and after `max_unavailable` such
//! answers in a row they are recorded as failures of kind `robots`. A 5xx waits
//! `unavailable_backoff` (the server is there and busy); no answer waits like a failed page
//! (`unreachable_backoff`, doubling), so a dead host gives up in seconds and a silent one
//! costs one timeout per try, as with `--ignore-robots`, not two.
//!
//! With a shared [`RobotsStore`] (a crawl in Redis), the workers of one crawl fetch each
//! origin's robots.txt once between them: the first claims it and fetches, the others wait a
//! moment (their request deferred) and then read the shared answer.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kumo_core::{ErrorKind, Request, Response, Url};
use kumo_downloader::Downloader;
use kumo_frontier::robots::{
    self, MAX_ROBOTS_BYTES, RobotsAnswer, RobotsClaim, RobotsRules, RobotsStore, SharedRobots, agent_token,
    robots_url,
};
use serde::Serialize;
use tokio::sync::OnceCell;

/// How the crawl treats robots.txt.
#[derive(Debug, Clone)]
pub struct RobotsConfig {
    /// Fetch and obey robots.txt (on by default; `--ignore-robots` turns it off).
    pub obey: bool,
    /// The longest `Crawl-delay` honored; a longer one is cut to this (and counted).
    pub max_crawl_delay: Duration,
    /// How long fetched rules are trusted.
    pub ttl: Duration,
    /// Origins whose rules are kept; the oldest are dropped beyond this, but none fetched
    /// within three Crawl-delay caps (at least 30 s), which a page sent back may still need.
    pub capacity: usize,
    /// How long an origin whose robots.txt answered 5xx waits before it is tried again;
    /// nothing is fetched from it meanwhile.
    pub unavailable_backoff: Duration,
    /// How long an origin whose robots.txt could not be reached waits before the second try,
    /// doubling with each try after; nothing is fetched from it meanwhile.
    pub unreachable_backoff: Duration,
    /// Unavailable answers in a row after which the origin's requests are recorded as failed.
    pub max_unavailable: u32,
    /// With a store: how long a claim to fetch an origin's robots.txt holds (another worker,
    /// or the next run of a crawl killed mid-fetch, may fetch it after that). `None`: the
    /// longer of the request timeout (a live fetch ends within it) and the connect timeout
    /// plus `max_crawl_delay` (a cut-off fetch reached the host within the one, and a
    /// Crawl-delay it carried holds no longer than the other).
    pub claim_for: Option<Duration>,
    /// With a shared store: how long a worker waits before asking again while another one
    /// fetches an origin's robots.txt.
    pub claim_wait: Duration,
}

impl Default for RobotsConfig {
    fn default() -> Self {
        RobotsConfig {
            obey: true,
            max_crawl_delay: Duration::from_secs(10),
            ttl: Duration::from_secs(24 * 3600),
            capacity: 10_000,
            unavailable_backoff: Duration::from_secs(30),
            unreachable_backoff: Duration::from_millis(500),
            max_unavailable: 3,
            claim_for: None,
            claim_wait: Duration::from_millis(200),
        }
    }
}

/// robots.txt counts for the summary.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct RobotsStats {
    /// robots.txt requests sent, redirects and a too-large file's second, ranged ask included.
    pub fetched: u64,
    /// Requests robots.txt disallowed.
    pub disallowed: u64,
    /// robots.txt fetches that got no answer, or one neither 2xx nor 4xx (a 5xx, say).
    pub unavailable: u64,
    /// Crawl-delays above [`RobotsConfig::max_crawl_delay`], cut to it.
    pub crawl_delay_capped: u64,
}

/// What to do with one request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Allow,
    Disallow,
    /// Put back for this long (robots.txt answered 5xx, or could not be reached).
    Unavailable(Duration),
    /// robots.txt stayed unavailable through every try: record the request as failed, with
    /// why and the status robots.txt last answered, if it answered.
    GiveUp(String, Option<u16>),
    /// robots.txt could not be asked for because the host's name has no address (a failed
    /// lookup): the request fails with that kind at once, as its own fetch would.
    Fail(ErrorKind, String),
}

/// A decision, and what the check learned about the host when its rules were new.
#[derive(Debug)]
pub(crate) struct Check {
    pub decision: Decision,
    /// The rules were fetched (or waited for) during this check: the host just received a
    /// request.
    pub fresh: bool,
    /// The crawl delay (capped) of rules this check obtained, fetched here or read from the
    /// store (another worker's answer, or an earlier run's): the host's floor from now on.
    pub crawl_delay: Option<Duration>,
    /// The `Sitemap:` URLs of rules fetched during this check.
    pub sitemaps: Vec<Url>,
    /// The answers of the robots.txt fetch this check made, redirects included, when the
    /// downloader recorded them (for the archive); each goes to one check only.
    pub exchanges: Vec<Response>,
}

/// What one fetch of robots.txt came to.
struct RobotsFetch {
    answer: RobotsAnswer,
    /// Why it is unavailable, when it is.
    why: String,
    status: Option<u16>,
    /// The file as the workers of a shared crawl share it.
    raw: Option<SharedRobots>,
    /// It failed before any connection: the host's name has no address.
    dns_failed: bool,
}

struct Entry {
    answer: RobotsAnswer,
    fetched_at: Instant,
    /// Unavailable answers in a row, this one included.
    unavailable_streak: u32,
    /// Why it is unavailable: "answered 503", "unreachable: …".
    why: String,
    /// The status robots.txt answered with, if the server answered.
    status: Option<u16>,
    /// The fetch of robots.txt failed before any connection: its host's name has no address.
    dns_failed: bool,
    /// How long the answer is trusted.
    ttl: Duration,
    /// Read from the shared store (another worker fetched it), or waiting for another worker
    /// to fetch it: the host got no request from here.
    shared: bool,
    /// The answers of the fetch, when recorded, until a check takes them (`Check::exchanges`).
    exchanges: Mutex<Vec<Response>>,
}

type Slot = Arc<OnceCell<Arc<Entry>>>;

pub(crate) struct RobotsCache {
    cfg: RobotsConfig,
    agent: String,
    slots: Mutex<(HashMap<String, Slot>, VecDeque<String>)>,
    store: Option<Arc<dyn RobotsStore>>,
    fetched: AtomicU64,
    disallowed: AtomicU64,
    unavailable: AtomicU64,
    capped: AtomicU64,
}

impl RobotsCache {
    pub fn new(cfg: RobotsConfig, user_agent: &str) -> Self {
        RobotsCache {
            cfg,
            agent: agent_token(user_agent).to_string(),
            slots: Mutex::new((HashMap::new(), VecDeque::new())),
            store: None,
            fetched: AtomicU64::new(0),
            disallowed: AtomicU64::new(0),
            unavailable: AtomicU64::new(0),
            capped: AtomicU64::new(0),
        }
    }

    /// Shares answers with the other workers of the crawl through `store`.
    pub fn with_store(mut self, store: Option<Arc<dyn RobotsStore>>) -> Self {
        self.store = store;
        self
    }

    pub fn stats(&self) -> RobotsStats {
        RobotsStats {
            fetched: self.fetched.load(Ordering::Relaxed),
            disallowed: self.disallowed.load(Ordering::Relaxed),
            unavailable: self.unavailable.load(Ordering::Relaxed),
            crawl_delay_capped: self.capped.load(Ordering::Relaxed),
        }
    }

    /// The slot for `origin`, replacing an expired one. Returns the slot and, when it
    /// replaced an expired one, the previous entry's 5xx streak.
    fn slot(&self, origin: &str) -> (Slot, u32) {
        let mut guard = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *guard;
        if let Some(slot) = map.get(origin) {
            match slot.get() {
                Some(e) => {
                    if e.fetched_at.elapsed() < e.ttl {
                        return (slot.clone(), 0);
                    }
                    let streak = e.unavailable_streak;
                    let fresh: Slot = Arc::new(OnceCell::new());
                    map.insert(origin.to_string(), fresh.clone());
                    return (fresh, streak);
                }
                None => return (slot.clone(), 0),
            }
        }
        // The oldest go first, but never one fetched within the pin window: a page sent back
        // after its robots.txt (to wait out its host's delay) must find it again, or a crawl
        // of more hosts than the capacity fetches robots.txt for ever and no page.
        let pin = self.pin_window();
        while map.len() >= self.cfg.capacity.max(1) {
            let Some(old) = order.front() else { break };
            // Still being fetched, or fetched within the window: kept, and so is what follows.
            let young = map.get(old).is_some_and(|s| s.get().is_none_or(|e| e.fetched_at.elapsed() < pin));
            if young {
                break;
            }
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        let slot: Slot = Arc::new(OnceCell::new());
        map.insert(origin.to_string(), slot.clone());
        order.push_back(origin.to_string());
        (slot, 0)
    }

    /// How long a fetched answer stays whatever the capacity: longer than any wait a page is
    /// sent back for after its robots.txt (its host's delay, a Crawl-delay up to the cap).
    fn pin_window(&self) -> Duration {
        self.cfg.max_crawl_delay.max(Duration::from_secs(10)) * 3
    }

    /// Decides whether `req` may be fetched, fetching the origin's robots.txt if needed.
    pub async fn check(&self, req: &Request, dl: &Downloader) -> Check {
        let allow = || Check {
            decision: Decision::Allow,
            fresh: false,
            crawl_delay: None,
            sitemaps: Vec::new(),
            exchanges: Vec::new(),
        };
        // Checked on every request: the origin key is all it needs unless rules must be fetched.
        let url = &req.url;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || url.path() == "/robots.txt"
        {
            return allow();
        }
        let Some(robots) = robots_url(url) else { return allow() };
        let origin = url.origin().ascii_serialization();
        let (slot, streak) = self.slot(&origin);
        let was_known = slot.initialized();
        // Checks racing on a new origin all wait on one fetch and all keep their spacing from
        // it, but only the one whose closure ran counts a capped delay and takes the sitemaps.
        let mut obtained_here = false;
        let entry = slot
            .get_or_init(|| {
                obtained_here = true;
                self.entry(&origin, &robots, dl, streak)
            })
            .await;
        let fetched_here = !was_known && !entry.shared;
        let crawl_delay = match &entry.answer {
            RobotsAnswer::Rules(r) if !was_known => self.capped_delay(r, obtained_here),
            _ => None,
        };
        let decision = match &entry.answer {
            RobotsAnswer::Rules(r) if r.allowed(&req.url) => Decision::Allow,
            RobotsAnswer::Rules(_) => {
                self.disallowed.fetch_add(1, Ordering::Relaxed);
                Decision::Disallow
            }
            RobotsAnswer::Unavailable if entry.dns_failed => {
                Decision::Fail(ErrorKind::Dns, format!("robots.txt of {origin}: {}", entry.why))
            }
            RobotsAnswer::Unavailable if entry.unavailable_streak >= self.cfg.max_unavailable => {
                Decision::GiveUp(
                    format!(
                        "robots.txt unavailable {} times in a row ({}), so nothing is fetched from {origin}",
                        entry.unavailable_streak, entry.why
                    ),
                    entry.status,
                )
            }
            RobotsAnswer::Unavailable => {
                Decision::Unavailable(entry.ttl.saturating_sub(entry.fetched_at.elapsed()))
            }
        };
        let sitemaps = match (&entry.answer, fetched_here && obtained_here) {
            (RobotsAnswer::Rules(r), true) => {
                r.sitemaps().iter().filter_map(|s| Url::parse(s).ok()).collect()
            }
            _ => Vec::new(),
        };
        let exchanges = match fetched_here {
            true => std::mem::take(&mut *entry.exchanges.lock().unwrap_or_else(|e| e.into_inner())),
            false => Vec::new(),
        };
        Check { decision, fresh: fetched_here, crawl_delay, sitemaps, exchanges }
    }

    /// The answer for `origin`: shared by another worker, fetched here (and shared), or "wait:
    /// another worker is fetching it" (or a killed run was).
    async fn entry(&self, origin: &str, robots: &Url, dl: &Downloader, streak: u32) -> Arc<Entry> {
        let claim = match &self.store {
            None => RobotsClaim::Fetch,
            // The engine fills in the claim's time; 30 s if a caller built the cache without it.
            Some(store) => {
                let hold = self.cfg.claim_for.unwrap_or(Duration::from_secs(30));
                store.claim(origin, hold).await.unwrap_or_else(|e| {
                    tracing::warn!(origin, error = %e, "shared robots.txt store failed; fetching it here");
                    RobotsClaim::Fetch
                })
            }
        };
        let shared = |answer, ttl, why: &str| {
            let why = why.to_string();
            Arc::new(Entry {
                answer,
                fetched_at: Instant::now(),
                unavailable_streak: streak,
                why,
                status: None,
                dns_failed: false,
                ttl,
                shared: true,
                exchanges: Mutex::default(),
            })
        };
        match claim {
            RobotsClaim::Known(r) => {
                return shared(RobotsAnswer::from_response(r.status, &r.body, &self.agent), self.cfg.ttl, "");
            }
            RobotsClaim::Wait => {
                return shared(
                    RobotsAnswer::Unavailable,
                    self.cfg.claim_wait,
                    "being fetched elsewhere (by another worker, or by a run killed while it fetched it)",
                );
            }
            RobotsClaim::Fetch => {}
        }
        let mut exchanges = Vec::new();
        let RobotsFetch { answer, why, status, raw, dns_failed } =
            self.fetch(robots, dl, &mut exchanges).await;
        if let Some(store) = &self.store
            && let Err(e) = store.share(origin, raw.as_ref(), self.cfg.ttl).await
        {
            tracing::warn!(origin, error = %e, "could not keep robots.txt in the crawl state");
        }
        let (unavailable_streak, ttl) = match answer {
            RobotsAnswer::Rules(_) => (0, self.cfg.ttl),
            RobotsAnswer::Unavailable if status.is_some() => (streak + 1, self.cfg.unavailable_backoff),
            RobotsAnswer::Unavailable => {
                let doubled = 1u32 << streak.min(16);
                (streak + 1, self.cfg.unreachable_backoff.saturating_mul(doubled))
            }
        };
        Arc::new(Entry {
            answer,
            fetched_at: Instant::now(),
            unavailable_streak,
            why,
            status,
            dns_failed,
            ttl,
            shared: false,
            exchanges: Mutex::new(exchanges),
        })
    }

    /// The rules' Crawl-delay, cut to the cap; `count`: a cut is counted and logged.
    fn capped_delay(&self, rules: &RobotsRules, count: bool) -> Option<Duration> {
        let d = rules.crawl_delay()?;
        if d > self.cfg.max_crawl_delay {
            if !count {
                return Some(self.cfg.max_crawl_delay);
            }
            self.capped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "Crawl-delay of {:.1}s is above the {:.1}s cap; using the cap",
                d.as_secs_f64(),
                self.cfg.max_crawl_delay.as_secs_f64()
            );
            return Some(self.cfg.max_crawl_delay);
        }
        Some(d)
    }

    /// Fetches robots.txt, following up to five redirects (RFC 9309 §2.3.1.2). An origin
    /// that cannot be reached (refused, reset, timed out) is unavailable, as one answering
    /// 5xx is (§2.3.1.4); the string says why, for the failure records, and the status says
    /// what the server answered, if it did; and the answer as other workers may share it (one
    /// that holds rules). The answers the downloader recorded go to `exchanges`.
    async fn fetch(&self, url: &Url, dl: &Downloader, exchanges: &mut Vec<Response>) -> RobotsFetch {
        // Redirected away from http(s), or too many redirects: no rules, as a 4xx.
        let allow_all = || RobotsFetch {
            answer: RobotsAnswer::Rules(RobotsRules::AllowAll),
            why: String::new(),
            status: Some(404),
            raw: Some(SharedRobots { status: 404, body: Vec::new() }),
            dns_failed: false,
        };
        let mut target = url.clone();
        // Set once a body came over the downloader's cap: the file is asked again for its
        // first MAX_ROBOTS_BYTES only, which RFC 9309 §2.5 says to parse.
        let mut ranged = false;
        for _ in 0..=5 {
            self.fetched.fetch_add(1, Ordering::Relaxed);
            let resp = match dl.fetch(robots_request(&target, ranged)).await {
                Ok(resp) => resp,
                Err(e) if e.is_too_large() && !ranged => {
                    exchanges.extend(e.partial.map(|p| *p));
                    ranged = true;
                    continue;
                }
                Err(mut e) => {
                    exchanges.extend(e.partial.take().map(|p| *p));
                    self.unavailable.fetch_add(1, Ordering::Relaxed);
                    let why = format!("unreachable: {}: {}", e.kind, e.message);
                    let dns_failed = e.kind == ErrorKind::Dns;
                    return RobotsFetch {
                        answer: RobotsAnswer::Unavailable,
                        why,
                        status: None,
                        raw: None,
                        dns_failed,
                    };
                }
            };
            let next = resp.redirect_location();
            if resp.wire.is_some() {
                exchanges.push(resp.clone());
            }
            match next {
                Some(Ok(next)) if matches!(next.scheme(), "http" | "https") => target = next,
                Some(_) => return allow_all(),
                None => {
                    let status = resp.status.as_u16();
                    let answer = RobotsAnswer::from_response(status, &resp.body, &self.agent);
                    let raw = match answer {
                        RobotsAnswer::Rules(_) => {
                            let body = robots::capped(&resp.body).to_vec();
                            Some(SharedRobots { status, body })
                        }
                        RobotsAnswer::Unavailable => {
                            self.unavailable.fetch_add(1, Ordering::Relaxed);
                            None
                        }
                    };
                    let why = format!("answered {status}");
                    return RobotsFetch { answer, why, status: Some(status), raw, dns_failed: false };
                }
            }
        }
        // Too many redirects: treated like "no robots.txt" (4xx), as RFC 9309 allows.
        allow_all()
    }
}

/// The request for robots.txt at `url`; `ranged`, for its first [`MAX_ROBOTS_BYTES`] only
/// (`Range`, on the bytes as stored: no content coding), when the whole was too large.
fn robots_request(url: &Url, ranged: bool) -> Request {
    let mut req = Request::get(url.clone());
    if ranged {
        let range = format!("bytes=0-{}", MAX_ROBOTS_BYTES - 1);
        if let Ok(v) = http::HeaderValue::from_str(&range) {
            req.headers.insert(http::header::RANGE, v);
        }
        req.headers.insert(http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("identity"));
    }
    req
}
