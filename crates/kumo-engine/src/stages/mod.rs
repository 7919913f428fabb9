//! The stage tasks of a run: downloaders (robots.txt check, then fetch) and parsers
//! (analyzer, redirects, scope and fingerprints). Each reads from a bounded channel and writes
//! to the next. Neither changes the frontier: a parser only asks which links it already knows
//! (`Frontier::known`), and a downloader holds its lease at the departure gate until its host's
//! (and address's) spacing has passed.

use std::sync::Arc;
use std::time::Duration;

use kumo_core::{ErrorKind, Fingerprint, Item, Request, RequestKind, Response, SkipReason, Stage};
use kumo_downloader::FetchError;
use kumo_frontier::{Frontier, HostAdjustment, LeaseId, PageRecord, Scope};
use kumo_parse::SitemapKind;
use kumo_warc::{Records, Revisit};
use tokio::sync::mpsc;

use crate::analyze::{Analysis, Analyzer, ScriptFailure};
use crate::analyzer_registrar::{AnalyzerRegistrar, RegisteredAnalyzer};
use crate::archive;
use crate::buffers::Gauged;
use crate::{CrawlConfig, CrawlError, ErrorStream, Visit};

mod download;

pub(crate) use download::{DownloadStage, download_task};

/// A download handed from a downloader task to the parsers.
pub(crate) struct Fetched {
    pub lease: LeaseId,
    pub result: Result<Response, FetchError>,
    /// Requests found on the way (the `Sitemap:` lines of a robots.txt), already admitted.
    pub extra: Vec<(Fingerprint, Request)>,
    /// WARC records of exchanges made on the way (robots.txt).
    pub archive: Vec<Records>,
}

/// What the stages report to the scheduler for one lease.
pub(crate) struct PageResult {
    pub lease: LeaseId,
    pub outcome: Outcome,
    /// What was learned about the request's host (`host[:port]`).
    pub adjust: Option<(String, HostAdjustment)>,
    /// New requests found on the way, queued whatever the outcome.
    pub extra: Vec<(Fingerprint, Request)>,
    /// Who answered and how, for the adaptive throttle (only when it is on).
    pub sample: Option<LatencySample>,
    /// How long the answer's headers took to come, when there was an answer (the throttle's
    /// sample and the latency histogram read it).
    pub latency: Option<Duration>,
    /// The WARC records of the exchanges made for this lease (`CrawlConfig::warc`).
    pub archive: Vec<Records>,
}

/// One answer, for the adaptive throttle (its latency is the result's).
pub(crate) struct LatencySample {
    /// `host[:port]`.
    pub host: String,
    /// A 2xx answer (only those may lower the host's delay).
    pub ok: bool,
}

pub(crate) enum Outcome {
    Page {
        status: u16,
        bytes: u64,
        discovered: Vec<(Fingerprint, Request)>,
        items: Vec<Item>,
        skips: Vec<SkipReason>,
        /// Parser errors met on the page, already on the error stream; counted with the
        /// page's commit, so a resumed crawl counts them once.
        errors: Vec<ErrorKind>,
        /// The script hooks whose calls failed on the page (one entry a failure), for the
        /// summary's count per hook.
        script_hooks: Vec<&'static str>,
        /// The page is fetched but its request failed all the same, for the failure list: a
        /// redirect that leads nowhere, or one past the redirect limit.
        failure: Option<Box<PageFailure>>,
        /// The URL's shape, for the spider-trap warning (`None` when it is off). Made here, in
        /// the parsers, so the scheduler only counts it.
        shape: Option<String>,
        /// The page's record, to keep for a later re-crawl (`CrawlConfig::keep_pages`).
        page: Option<Box<PageRecord>>,
        /// What a re-crawl makes of it: new, changed, unchanged or gone.
        change: Option<Change>,
    },
    /// The server answered with a status worth trying again (429, 5xx).
    RetryableStatus {
        status: u16,
        /// The answer's `Retry-After`, uncapped: the scheduler caps it for the request's
        /// retry and for a pause of its host.
        retry_after: Option<Duration>,
        request: Box<Request>,
    },
    Failed(FetchError),
    /// Not fetched, for good (robots.txt disallows it).
    Skipped(SkipReason),
    /// Not fetched now; put back for this long without counting an attempt.
    Deferred(Duration),
}

/// How a page compares with what the crawl knew of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Not known before: not a page asked again.
    New,
    /// Asked again; answered with another body.
    Changed,
    /// Asked again; answered `304`, or with the same body. `saved`: the bytes a `304` did not
    /// send again.
    Unchanged { saved: u64 },
    /// Asked again; answered `404` or `410`.
    Gone,
}

/// Why a fetched page's request failed all the same.
pub(crate) struct PageFailure {
    pub kind: ErrorKind,
    pub message: String,
    /// The request's URL, as records show it.
    pub url: String,
    pub attempts: u32,
}

impl Outcome {
    /// Whether this result is a page (what `max_pages` counts): robots.txt outcomes, retries
    /// and failures are not.
    pub(crate) fn is_page(&self) -> bool {
        matches!(self, Outcome::Page { .. })
    }
}

/// Statuses that mean "try again later": the request was fine, the server was not.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 522 | 524)
}

/// The checks every discovered request goes through before the frontier sees it.
pub(crate) fn admit(
    scope: &Scope,
    cfg: &CrawlConfig,
    req: Request,
    out: &mut Vec<(Fingerprint, Request)>,
    skips: &mut Vec<SkipReason>,
) {
    match scope.check(&req) {
        Ok(()) => out.push((req.fingerprint(&cfg.canonical, cfg.dedup), req)),
        Err(reason) => skips.push(reason),
    }
}

/// What a parser task needs.
pub(crate) struct ParseStage {
    pub cfg: Arc<CrawlConfig>,
    pub scope: Arc<Scope>,
    /// The registered analyzers; each page goes to the one with the best score.
    pub analyzers: Arc<AnalyzerRegistrar>,
    /// Asked only which links it knows already (see [`Frontier::known`]).
    pub frontier: Arc<dyn Frontier>,
    pub errors: Arc<ErrorStream>,
    /// When this run started, ms since the Unix epoch: the time its page records were checked,
    /// so pages checked in one run fall due together at the next.
    pub round_ms: u64,
}

/// Runs one parser task until the fetched channel closes.
pub(crate) async fn parse_task(
    stage: Arc<ParseStage>,
    fetched: async_channel::Receiver<Fetched>,
    results: Gauged<mpsc::Sender<PageResult>>,
) {
    while let Ok(f) = fetched.recv().await {
        let sample = match &f.result {
            Ok(resp) if stage.cfg.auto_throttle.is_some() => {
                Some(LatencySample { host: resp.request.host_key(), ok: resp.status.is_success() })
            }
            _ => None,
        };
        let latency = f.result.as_ref().ok().map(|r| r.latency);
        let mut archive = f.archive;
        let record = stage.cfg.warc.as_ref().map(|w| &w.record);
        let outcome = match f.result {
            Ok(resp) => {
                let mut outlinks = record.map(|_| Vec::new());
                let outcome = stage.analyze(&resp, outlinks.as_mut());
                if let Some(opts) = record {
                    let links = outlinks.unwrap_or_default();
                    archive.extend(archive::records(opts, &resp, &links, revisit_of(&outcome)));
                }
                outcome
            }
            Err(mut e) => {
                if let (Some(opts), Some(partial)) = (record, e.partial.take()) {
                    archive.extend(archive::records(opts, &partial, &[], None));
                }
                Outcome::Failed(e)
            }
        };
        let result =
            PageResult { lease: f.lease, outcome, adjust: None, extra: f.extra, sample, latency, archive };
        if results.send(result).await.is_err() {
            break;
        }
    }
}

/// What a page asked again held when it was last fetched: its body's hash and size, and its
/// re-visit interval.
type Known = (u64, u64, u64);

impl ParseStage {
    /// The analyzer's say on each admitted link the frontier does not know yet; the known ones
    /// are kept as they are, for the commit to count as seen.
    fn steer(
        &self,
        analyzer: &dyn Analyzer,
        resp: &Response,
        discovered: &mut Vec<(Fingerprint, Request)>,
        failures: &mut Vec<ScriptFailure>,
    ) {
        let fps: Vec<Fingerprint> = discovered.iter().map(|(fp, _)| *fp).collect();
        let mut known = self.frontier.known(&fps).into_iter();
        discovered
            .retain_mut(|(_, req)| known.next().unwrap_or(false) || analyzer.steer_link(resp, req, failures));
    }

    /// What `resp` holds for the crawl; the links found on it go to `outlinks` as well when
    /// it is given (for the archive). The page goes to the registered analyzer with the best
    /// score, and counts on it.
    fn analyze(&self, resp: &Response, outlinks: Option<&mut Vec<String>>) -> Outcome {
        self.cfg.listeners.after_fetch(resp);
        let status = resp.status.as_u16();
        if is_retryable_status(status) {
            // The scheduler decides whether it pauses the host (`pauses.rs`).
            let retry_after = retry_after(resp);
            return Outcome::RetryableStatus { status, retry_after, request: Box::new(resp.request.clone()) };
        }
        let module = self.analyzers.pick();
        module.begin();
        let known = match resp.request.kind {
            RequestKind::Revisit { hash, bytes, interval_ms } => Some((hash, bytes, interval_ms)),
            _ => None,
        };
        let hash = (self.cfg.keep_pages || known.is_some()).then(|| xxhash_rust::xxh3::xxh3_64(&resp.body));
        if let Some(unchanged) = self.unchanged(resp, known, hash) {
            module.finish_unanalyzed();
            return unchanged;
        }
        let mut discovered = Vec::new();
        let mut skips = Vec::new();
        let mut errors = Vec::new();
        let analysis = match resp.request.kind {
            RequestKind::Sitemap { nesting } if resp.status.is_success() => {
                self.sitemap(&module, resp, nesting, &mut errors)
            }
            _ => module.analyzer().analyze(resp),
        };
        for issue in analysis.issues {
            self.report(&module, resp, ErrorKind::Content, issue, &mut errors);
        }
        let mut script_failures = analysis.script_errors;
        if let Some(out) = outlinks {
            out.extend(analysis.requests.iter().map(|r| r.url.to_string()));
        }
        for req in analysis.requests {
            admit(&self.scope, &self.cfg, req, &mut discovered, &mut skips);
        }
        if module.analyzer().steers_links() {
            self.steer(module.analyzer(), resp, &mut discovered, &mut script_failures);
        }
        let extract_failure = analysis.extract_errors.first().cloned();
        for message in analysis.extract_errors {
            self.report(&module, resp, ErrorKind::Extract, message, &mut errors);
        }
        let mut script_hooks = Vec::with_capacity(script_failures.len());
        // The first failed call names the page's failure; each is reported.
        let mut script_failure = None;
        let failed_calls = script_failures.len();
        for failure in script_failures {
            script_hooks.push(failure.hook);
            script_failure.get_or_insert_with(|| failure.message.clone());
            self.report(&module, resp, ErrorKind::Script, failure.message, &mut errors);
        }
        self.cfg.listeners.links_found(&resp.request, &discovered);
        if !analysis.items.is_empty() {
            self.cfg.listeners.target_page(resp);
        }
        let failure = self.redirect(&module, resp, &mut discovered, &mut skips, &mut errors);
        // The analyzer's own failures count against it (`analyzer_registrar.rs`).
        module.finish(script_failure.is_some() || extract_failure.is_some());
        let mut items = analysis.items;
        let failure = crate::analyze::page_failure(
            failure,
            script_failure.map(|m| (m, failed_calls)),
            extract_failure,
            &mut items,
        );
        let failure = failure.map(|(kind, message)| {
            Box::new(PageFailure {
                kind,
                message,
                url: crate::analyze::shown(&resp.request.url),
                attempts: resp.request.retries + 1,
            })
        });
        let deep = resp.request.depth > self.cfg.trap_warn_depth;
        let shape = (self.cfg.trap_warn_pages != 0 && deep).then(|| crate::traps::shape(&resp.url));
        let page = match hash {
            Some(h) if resp.status.is_success() => {
                let visit = known.map_or(Visit::First, |(was, _, interval_ms)| Visit::Again {
                    interval: Duration::from_millis(interval_ms),
                    changed: h != was,
                });
                Some(self.page_record(resp, h, resp.body.len() as u64, visit))
            }
            _ => None,
        };
        Outcome::Page {
            status,
            bytes: resp.body.len() as u64,
            discovered,
            items,
            skips,
            errors,
            script_hooks,
            failure,
            shape,
            page,
            change: change_of(resp, known, hash),
        }
    }

    /// A page asked again that has not changed is not parsed: its links and items are those
    /// of its last fetch. `None` when it must be parsed.
    fn unchanged(&self, resp: &Response, known: Option<Known>, hash: Option<u64>) -> Option<Outcome> {
        let (was, bytes, interval_ms) = known?;
        let status = resp.status.as_u16();
        let same_body = resp.status.is_success() && hash == Some(was);
        if status != 304 && (!same_body || self.cfg.emit_unchanged) {
            return None;
        }
        let saved = if status == 304 { bytes } else { 0 };
        // Written again when it holds something new: a same body's validators, or, when pages
        // have re-visit intervals, when it was checked and its next interval.
        let visit = Visit::Again { interval: Duration::from_millis(interval_ms), changed: false };
        let page =
            (same_body || !self.cfg.revisit.every_run()).then(|| self.page_record(resp, was, bytes, visit));
        Some(Outcome::Page {
            status,
            bytes: resp.body.len() as u64,
            discovered: Vec::new(),
            items: Vec::new(),
            skips: Vec::new(),
            errors: Vec::new(),
            script_hooks: Vec::new(),
            failure: None,
            shape: None,
            page,
            change: Some(Change::Unchanged { saved }),
        })
    }

    /// A redirect is a new request (same depth) that goes through scope and de-duplication
    /// like any link, so every hop is checked; one that cannot be followed fails its request
    /// (the failure list says why): its message is returned.
    fn redirect(
        &self,
        module: &RegisteredAnalyzer,
        resp: &Response,
        discovered: &mut Vec<(Fingerprint, Request)>,
        skips: &mut Vec<SkipReason>,
        errors: &mut Vec<ErrorKind>,
    ) -> Option<String> {
        match resp.redirect_location()? {
            Ok(target) => {
                let before = skips.len();
                admit(&self.scope, &self.cfg, resp.request.redirect_to(target.clone()), discovered, skips);
                if skips[before..] != [SkipReason::TooManyRedirects] {
                    return None;
                }
                skips.truncate(before);
                Some(format!(
                    "redirect chain cut after {} redirects (next: {})",
                    resp.request.redirects,
                    crate::analyze::shown(&target)
                ))
            }
            Err(e) => {
                let message = e.to_string();
                self.report(module, resp, ErrorKind::BadRedirect, message.clone(), errors);
                Some(message)
            }
        }
    }
}

/// What a later re-crawl needs of a fetched page: its request (`revisit_pages` sets its kind
/// and validators anew), the validators of this answer verbatim, and the hash and size of its
/// body.
impl ParseStage {
    /// The record of a page with body hash `hash` and size `bytes`, checked in this run. Its
    /// validators are the answer's; a `304` that repeats none keeps those it was asked with.
    fn page_record(&self, resp: &Response, hash: u64, bytes: u64, visit: Visit) -> Box<PageRecord> {
        let header = |name, asked| {
            let asked = || (resp.status == 304).then(|| resp.request.headers.get(asked)).flatten();
            resp.headers.get(name).or_else(asked).and_then(|v| v.to_str().ok()).map(str::to_owned)
        };
        let interval = self.cfg.revisit.interval(&resp.request.url, visit);
        Box::new(PageRecord {
            request: kumo_core::StoredRequest::from(&resp.request),
            etag: header(http::header::ETAG, http::header::IF_NONE_MATCH),
            last_modified: header(http::header::LAST_MODIFIED, http::header::IF_MODIFIED_SINCE),
            hash,
            bytes,
            checked_ms: self.round_ms,
            interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// A parser error on `resp` goes to the listeners as well as the error stream, as the
    /// scheduler's fetch failures do: a listener must not miss what the stream shows. Its kind
    /// joins `errors`, the page's list for the summary.
    fn report(
        &self,
        module: &RegisteredAnalyzer,
        resp: &Response,
        kind: ErrorKind,
        message: String,
        errors: &mut Vec<ErrorKind>,
    ) {
        errors.push(kind);
        let error = CrawlError {
            stage: Stage::Parser,
            kind,
            module: Some(module.id().clone()),
            url: Some(resp.url.to_string()),
            message,
        };
        self.cfg.listeners.error(&error);
        self.errors.send(error);
    }

    /// A sitemap's entries as requests: pages (with the sitemap's priority and lastmod kept)
    /// or, from an index, more sitemaps, at most `MAX_SITEMAP_NESTING` indexes deep.
    fn sitemap(
        &self,
        module: &RegisteredAnalyzer,
        resp: &Response,
        nesting: u8,
        errors: &mut Vec<ErrorKind>,
    ) -> Analysis {
        let mut out = Analysis::default();
        out.items.push(crate::analyze::page_record(resp, None));
        let map = match kumo_parse::parse_sitemap(&resp.body, &resp.url) {
            Ok(m) => m,
            Err(e) => {
                self.report(module, resp, ErrorKind::Decode, e.to_string(), errors);
                return out;
            }
        };
        out.issues = map.issues;
        let parent = &resp.request;
        for e in map.entries {
            let mut r = Request::get(e.loc);
            r.depth = parent.depth;
            r.task = parent.task;
            r.source = Some(resp.url.clone());
            match map.kind {
                SitemapKind::Index if nesting < MAX_SITEMAP_NESTING => {
                    r.kind = RequestKind::Sitemap { nesting: nesting + 1 };
                }
                SitemapKind::Index => continue,
                SitemapKind::UrlSet => {
                    // Sitemap priority 0.0–1.0 becomes frontier levels 0–10.
                    r.priority = e.priority.map_or(parent.priority, |p| (p * 10.0).round() as i32);
                    let meta =
                        serde_json::json!({ "sitemap": { "lastmod": e.lastmod, "priority": e.priority } });
                    let _ = r.data.set(&meta);
                }
            }
            out.requests.push(r);
        }
        out
    }
}

/// What a re-crawl makes of a parsed page (`None` on a first crawl's failed answer).
fn change_of(resp: &Response, known: Option<Known>, hash: Option<u64>) -> Option<Change> {
    let ok = resp.status.is_success();
    match (known, resp.status.as_u16()) {
        (None, _) if ok => Some(Change::New),
        (None, _) => None,
        (Some(_), 404 | 410) => Some(Change::Gone),
        // Parsed again although the same (`emit_unchanged`).
        (Some((was, _, _)), _) if ok && hash == Some(was) => Some(Change::Unchanged { saved: 0 }),
        (Some(_), _) => Some(Change::Changed),
    }
}

/// How the archive keeps a page a re-crawl found unchanged: a `304` as a revisit of what the
/// server did not send again, the same body as a revisit of the payload archived before.
fn revisit_of(outcome: &Outcome) -> Option<Revisit> {
    match outcome {
        Outcome::Page { status: 304, change: Some(Change::Unchanged { .. }), .. } => {
            Some(Revisit::NotModified)
        }
        Outcome::Page { change: Some(Change::Unchanged { .. }), .. } => {
            Some(Revisit::IdenticalPayload { refers_to_date: None })
        }
        _ => None,
    }
}

/// Sitemap indexes followed below a sitemap seed.
const MAX_SITEMAP_NESTING: u8 = 3;

/// The `Retry-After` header: delay-seconds or an HTTP date. Any value is a duration (callers
/// cap it); a number too large for `u64` is the largest there is.
fn retry_after(resp: &Response) -> Option<Duration> {
    let v = resp.headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or_default())
}
