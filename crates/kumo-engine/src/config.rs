//! Crawl settings: raw values in, checked before the engine accepts them.

use std::time::Duration;

use kumo_core::{CanonicalOptions, DedupMode, Url};
use kumo_downloader::DownloaderConfig;
use kumo_frontier::{Politeness, ScopeConfig};

use crate::{AutoThrottle, RobotsConfig};

/// Everything a crawl needs to know, except where its state and output live.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// Start URLs: http or https, with a host ([`CrawlConfig::check`] refuses others).
    pub seeds: Vec<Url>,
    /// Sitemaps (or sitemap indexes) whose pages seed the crawl.
    pub sitemaps: Vec<Url>,
    /// Also read the `Sitemap:` lines of every robots.txt fetched.
    pub robots_sitemaps: bool,
    /// Which links are followed: domains, depth, URL patterns, trap limits.
    pub scope: ScopeConfig,
    /// How URLs are normalized for their fingerprints, which de-duplication compares.
    pub canonical: CanonicalOptions,
    /// Whether a URL found again from another page counts as new.
    pub dedup: DedupMode,
    /// Requests being downloaded at once (all hosts together).
    pub concurrency: usize,
    /// Parser (analyzer) tasks; 0 means one per CPU.
    pub parsers: usize,
    /// Per-host delays and parallelism (a default and rules by host), per-IP gating, page
    /// budgets.
    pub politeness: Politeness,
    /// Each host's delay follows its latency (Scrapy's AutoThrottle); off by default.
    pub auto_throttle: Option<AutoThrottle>,
    /// The HTTP client's settings; each proxy's downloader gets a copy with its proxy.
    pub downloader: DownloaderConfig,
    /// Archive every exchange as WARC records (`--warc DIR`): the downloaders then record
    /// what went over the wire, and each commit appends its pages' records first.
    pub warc: Option<kumo_warc::WarcConfig>,
    /// Pages fetched through a renderer (a browser: `--render`) instead of the HTTP client.
    pub render: Option<crate::Rendering>,
    /// One downloader per proxy, chosen per request by score (the seeds' Registrar); empty
    /// means one direct downloader.
    pub proxies: Vec<String>,
    /// Stop after this many pages; 0 means no limit. Counts the crawl's pages (a re-crawl
    /// round's), so a resumed crawl stops at the same total, unless `limits_per_run`.
    pub max_pages: u64,
    /// Write at most this many items, then stop gracefully; 0 means no limit. Counts the
    /// items the crawl wrote (a re-crawl round's), unless `limits_per_run`. Items of pages
    /// still in flight at the stop are held in the item journal, unwritten, for a resume with
    /// a higher limit (an item a processor drops counts: the limit is on what reaches the
    /// pipeline).
    pub max_items: u64,
    /// `max_pages` and `max_items` count this run's pages and items, not the crawl's: each
    /// run of a schedule (`kumo run`) has its own budget, even one that goes on with a round
    /// an earlier run left unfinished.
    pub limits_per_run: bool,
    /// Stop gracefully once this many errors were counted (any stage, retried ones too); 0
    /// means no limit.
    pub max_errors: u64,
    /// Stop gracefully after this long.
    pub max_duration: Option<Duration>,
    /// Retries of a retryable failure before it is recorded as failed.
    pub max_retries: u32,
    /// First retry delay; doubles with each attempt (with jitter).
    pub retry_backoff: Duration,
    /// The longest `Retry-After` believed: a longer one counts as absent (the request retries
    /// on its back-off, a 429 pauses its host for that back-off), so no single URL holds the
    /// crawl or its host for a wait it would only cut short (`pauses.rs`).
    pub max_retry_after: Duration,
    /// The longest a server may pause a whole host (a 429, 503s with `Retry-After` from
    /// several of its URLs, or a robots.txt answering 5xx: `pauses.rs`); longer asks are cut
    /// to this, and so are pauses kept from an earlier run when the crawl starts. 0: no
    /// answer pauses a host.
    pub max_host_pause: Duration,
    /// Whether robots.txt is obeyed, and how its answers are cached and waited for.
    pub robots: RobotsConfig,
    /// Errors kept for a slow reader of the error stream before new ones are dropped (and
    /// counted).
    pub error_buffer: usize,
    /// Fetched pages of one URL shape (digits as `#`, query values dropped), deeper than
    /// `trap_warn_depth` links, at which a warning asks whether the site is a spider trap,
    /// and again at ten and a hundred times as many; the summary lists the shapes
    /// (`trap_warnings`). 0 turns the warning off.
    pub trap_warn_pages: u64,
    /// Only pages deeper than this count toward `trap_warn_pages`: a trap grows a chain of
    /// links (an endless calendar, a path that grows), while a large catalogue's many pages
    /// of one shape sit a few links from its start.
    pub trap_warn_depth: u32,
    /// Keep a record of every page fetched (its validators and the hash of its body) with the
    /// commit, for a later `--recrawl` to ask for it again only if it changed. Only stores that
    /// keep pages (the embedded one) do anything with it.
    pub keep_pages: bool,
    /// When a kept page is asked for again (by rules on its URL, adaptive or fixed); the
    /// default: on every run.
    pub revisit: crate::RevisitPolicy,
    /// The time kept pages are recorded as checked at (default: when the engine starts): a
    /// scheduled run gives its start, so the pages it checks fall due together by the next.
    pub checked_at: Option<std::time::SystemTime>,
    /// A page asked for again that has not changed is parsed and its items written again
    /// (`emit = "all"`); by default only changed pages are. Such pages must be asked for
    /// without validators: a `304` has no body to parse.
    pub emit_unchanged: bool,
    /// Hooks called as the crawl runs ([`crate::Listener`]).
    pub listeners: crate::Listeners,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            seeds: Vec::new(),
            sitemaps: Vec::new(),
            robots_sitemaps: false,
            scope: ScopeConfig::default(),
            canonical: CanonicalOptions::default(),
            dedup: DedupMode::Strict,
            concurrency: 32,
            parsers: 0,
            politeness: Politeness::default(),
            auto_throttle: None,
            downloader: DownloaderConfig::default(),
            warc: None,
            render: None,
            proxies: Vec::new(),
            max_pages: 0,
            max_items: 0,
            limits_per_run: false,
            max_errors: 0,
            max_duration: None,
            max_retries: 2,
            retry_backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(120),
            max_host_pause: Duration::from_secs(300),
            robots: RobotsConfig::default(),
            error_buffer: 1024,
            trap_warn_pages: 1_000,
            trap_warn_depth: 20,
            keep_pages: false,
            revisit: crate::RevisitPolicy::default(),
            checked_at: None,
            emit_unchanged: false,
            listeners: crate::Listeners::default(),
        }
    }
}

/// A setting the engine refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Neither a start URL nor a sitemap.
    #[error("no start URL or sitemap given")]
    NoSeeds,
    /// A start URL or sitemap (the value) whose scheme is not http or https.
    #[error("start URL {0} is not http or https")]
    SeedScheme(String),
    /// A start URL or sitemap (the value) without a host.
    #[error("start URL {0} has no host")]
    SeedHost(String),
    /// `concurrency` is 0.
    #[error("concurrency must be at least 1")]
    Concurrency,
    /// Per-IP politeness with a proxy, crawl-wide or named by a limit rule.
    #[error(
        "per-IP politeness (per_ip, ip_delay) needs direct connections; through a proxy, the proxy resolves names"
    )]
    PerIpProxy,
    /// The default policy or a host rule allows 0 requests at once.
    #[error("per-host parallelism must be at least 1")]
    Parallelism,
    /// The downloader's `max_body_bytes` is 0.
    #[error("the body size cap must be at least 1 byte")]
    BodyCap,
    /// A bad scope setting, with why. The engine itself never returns it: scope settings
    /// fail as [`EngineError::Scope`](crate::EngineError::Scope).
    #[error("scope: {0}")]
    Scope(String),
    /// A bad [`AutoThrottle`] setting, with why.
    #[error("auto-throttle: {0}")]
    AutoThrottle(String),
}

impl CrawlConfig {
    /// Where the crawl starts: its start URLs, then its sitemaps.
    pub fn starts(&self) -> impl Iterator<Item = &Url> {
        self.seeds.iter().chain(&self.sitemaps)
    }

    /// Checks the settings (the seeds' `Args.Check()`).
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.seeds.is_empty() && self.sitemaps.is_empty() {
            return Err(ConfigError::NoSeeds);
        }
        for s in self.starts() {
            if !matches!(s.scheme(), "http" | "https") {
                return Err(ConfigError::SeedScheme(s.to_string()));
            }
            if s.host_str().is_none_or(str::is_empty) {
                return Err(ConfigError::SeedHost(s.to_string()));
            }
        }
        if self.concurrency == 0 {
            return Err(ConfigError::Concurrency);
        }
        if self.politeness.per_ip.is_some()
            && (!self.proxies.is_empty() || self.politeness.rules.iter().any(|r| !r.proxies().is_empty()))
        {
            return Err(ConfigError::PerIpProxy);
        }
        if self.politeness.default.parallelism == 0
            || self.politeness.rules.iter().any(|r| r.policy.parallelism == 0)
        {
            return Err(ConfigError::Parallelism);
        }
        if self.downloader.max_body_bytes == 0 {
            return Err(ConfigError::BodyCap);
        }
        if let Some(t) = &self.auto_throttle {
            t.check()?;
        }
        Ok(())
    }

    /// The parser task count, resolving 0 to the CPU count.
    pub fn parser_count(&self) -> usize {
        if self.parsers > 0 {
            self.parsers
        } else {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        }
    }
}
