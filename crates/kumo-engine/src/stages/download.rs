//! The downloader tasks: each lease's robots.txt check, its turn at the departure gate, then
//! its fetch through the registered downloader with the best score.

use std::sync::Arc;

use kumo_core::{ErrorKind, Request, RequestKind, Response, SkipReason};
use kumo_downloader::FetchError;
use kumo_frontier::{HostAdjustment, Lease, Scope};
use kumo_warc::Records;
use tokio::sync::mpsc;

use super::{Fetched, Outcome, PageResult, admit};
use crate::CrawlConfig;
use crate::archive;
use crate::buffers::Gauged;
use crate::departures::Departures;
use crate::registrar::{Registered, Registrar};
use crate::robots::{Decision, RobotsCache};

/// What a downloader task needs.
pub(crate) struct DownloadStage {
    pub cfg: Arc<CrawlConfig>,
    pub scope: Arc<Scope>,
    pub registrar: Arc<Registrar>,
    pub robots: Option<Arc<RobotsCache>>,
    /// Each paced host's last departure (`departures.rs`).
    pub departures: Departures,
}

impl DownloadStage {
    /// Handles one lease: robots.txt first, then the fetch. Returns the fetch for the
    /// parsers, or what goes to the scheduler directly (robots outcomes).
    pub async fn handle(&self, mut lease: Lease) -> Handled {
        let proxies = self.apply_rule(&mut lease.request);
        // The registrar picks the downloader with the best score for each lease, among those
        // for the proxies the host's rule names, if it names any.
        let Some(picked) = self.registrar.pick_for(proxies) else {
            let message = format!("no downloader is registered for the proxies {}", proxies.join(", "));
            let e = FetchError::new(ErrorKind::Other, message, lease.request);
            return Handled::Report(PageResult {
                lease: lease.id,
                outcome: Outcome::Failed(e),
                adjust: None,
                extra: Vec::new(),
                sample: None,
                latency: None,
                archive: Vec::new(),
            });
        };
        let Some(robots) = &self.robots else {
            self.departures.wait_for(&lease).await;
            return Handled::Fetched(Fetched {
                lease: lease.id,
                result: self.fetch_in_turn(&picked, lease).await,
                extra: Vec::new(),
                archive: Vec::new(),
            });
        };
        // Its turn is taken before robots.txt, which may be what goes first.
        self.departures.wait_for(&lease).await;
        let check = robots.check(&lease.request, &picked.downloader).await;
        if check.fresh {
            // Its robots.txt request just went: the page keeps its spacing from it.
            self.departures.note_robots(&lease);
        }
        let archive: Vec<Records> = match &self.cfg.warc {
            Some(w) => {
                check.exchanges.iter().filter_map(|r| archive::records(&w.record, r, &[], None)).collect()
            }
            None => Vec::new(),
        };
        let mut extra = Vec::new();
        if self.cfg.robots_sitemaps {
            let mut skips = Vec::new();
            for url in check.sitemaps {
                let mut r = Request::get(url);
                r.task = lease.request.task;
                r.kind = RequestKind::Sitemap { nesting: 0 };
                admit(&self.scope, &self.cfg, r, &mut extra, &mut skips);
            }
        }
        let crawl_delay = check.crawl_delay;
        let adjust = crawl_delay
            .map(|d| (lease.request.host_key(), HostAdjustment { min_delay: Some(d), ..Default::default() }));
        let reply = |outcome, adjust, extra, archive| {
            Handled::Report(PageResult {
                lease: lease.id,
                outcome,
                adjust,
                extra,
                sample: None,
                latency: None,
                archive,
            })
        };
        match check.decision {
            Decision::Allow => {}
            Decision::Disallow => return reply(Outcome::Skipped(SkipReason::Robots), adjust, extra, archive),
            Decision::Unavailable(wait) => {
                let pause = Some((
                    lease.request.host_key(),
                    HostAdjustment { pause: Some(wait), ..Default::default() },
                ));
                return reply(Outcome::Deferred(wait), pause, extra, archive);
            }
            Decision::GiveUp(why, status) => {
                let mut e = FetchError::new(ErrorKind::Robots, why, lease.request);
                e.status = status;
                return reply(Outcome::Failed(e), adjust, extra, archive);
            }
            Decision::Fail(kind, why) => {
                return reply(
                    Outcome::Failed(FetchError::new(kind, why, lease.request)),
                    adjust,
                    extra,
                    archive,
                );
            }
        }
        if !check.fresh && crawl_delay.is_some_and(|d| !d.is_zero()) {
            // A stored answer's Crawl-delay is new to this run (a resumed crawl, another
            // worker's answer): the page waits for a lease at the raised floor, since the
            // host's last request (maybe a killed run's) may be that recent.
            return reply(Outcome::Deferred(crawl_delay.unwrap_or_default()), adjust, extra, archive);
        }
        if check.fresh {
            // The host was just sent its robots.txt request: if it wants requests spaced,
            // this one waits its turn in the frontier rather than here.
            let host = lease.request.host_key();
            let spacing = self.cfg.politeness.policy_for(&host).delay.max(crawl_delay.unwrap_or_default());
            // A rate-limited or throttled host counts the robots.txt request's lease too: the
            // page goes back for a lease of its own.
            if !spacing.is_zero()
                || !self.cfg.politeness.rate_limits_for(&host).is_empty()
                || self.cfg.auto_throttle.is_some()
            {
                return reply(Outcome::Deferred(spacing), adjust, extra, archive);
            }
            // The page goes after its robots.txt request, on a turn of its own.
            self.departures.wait_for(&lease).await;
        }
        Handled::Fetched(Fetched {
            lease: lease.id,
            result: self.fetch_in_turn(&picked, lease).await,
            extra,
            archive,
        })
    }

    /// Fetches `lease`'s request. A paced host that takes one request at a time then counts
    /// its next spacing from the response, as Nutch and Heritrix do: a request that reached
    /// its server late (a new connection, a loaded machine) is never followed too soon. Its
    /// address's gap counts from the response too.
    async fn fetch_in_turn(&self, picked: &Registered, lease: Lease) -> Result<Response, FetchError> {
        // An unpaced host (the common case of a focused crawl) costs one branch.
        let one_at_a_time = (!lease.spacing.is_zero())
            .then(|| lease.request.host_key())
            .filter(|host| self.cfg.politeness.policy_for(host).parallelism <= 1);
        let result = fetch(&self.cfg, picked, lease.request).await;
        if let Some(host) = one_at_a_time {
            self.departures.note_response(&host, lease.spacing);
        }
        if let Some((ip, gap)) = lease.ip_spacing {
            self.departures.note_address_response(ip, gap);
        }
        result
    }
}

/// Fetches with a registered downloader and records the outcome for its score.
async fn fetch(cfg: &CrawlConfig, picked: &Registered, req: Request) -> Result<Response, FetchError> {
    cfg.listeners.before_fetch(&req);
    let result = match cfg.render.as_ref().filter(|r| r.takes(&req)) {
        Some(r) => r.renderer.render(req, &picked.downloader).await,
        None => picked.downloader.fetch(req).await,
    };
    picked.record(result.is_ok());
    result
}

impl DownloadStage {
    /// Adds the headers of the limit rule matching the request's host, unless the request
    /// sets them itself, and returns the proxies the rule names.
    fn apply_rule(&self, req: &mut Request) -> &[String] {
        if self.cfg.politeness.rules.is_empty() {
            return &[];
        }
        let Some(rule) = self.cfg.politeness.rule_for(&req.host_key()) else { return &[] };
        for (name, value) in rule.headers() {
            if let (Ok(n), Ok(v)) =
                (http::HeaderName::from_bytes(name.as_bytes()), http::HeaderValue::from_str(value))
                && !req.headers.contains_key(&n)
            {
                req.headers.insert(n, v);
            }
        }
        rule.proxies()
    }
}

/// Where a downloader task sends what it did with a lease.
// Built once per lease and moved straight into a channel: boxing the big variant would only add
// an allocation per page.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Handled {
    /// To the parsers.
    Fetched(Fetched),
    /// Straight to the scheduler (not fetched: robots.txt said no, or not yet).
    Report(PageResult),
}

/// Runs one downloader task until the lease channel closes.
pub(crate) async fn download_task(
    stage: Arc<DownloadStage>,
    leases: async_channel::Receiver<Lease>,
    fetched: Gauged<async_channel::Sender<Fetched>>,
    results: Gauged<mpsc::Sender<PageResult>>,
) {
    while let Ok(lease) = leases.recv().await {
        let sent = match stage.handle(lease).await {
            Handled::Fetched(f) => fetched.send(f).await.is_ok(),
            Handled::Report(r) => results.send(r).await.is_ok(),
        };
        if !sent {
            break;
        }
    }
}
