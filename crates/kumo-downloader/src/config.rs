//! Downloader settings.

use std::sync::Arc;
use std::time::Duration;

use crate::{BuildError, ConnectionLimit, CookieJar, DnsResolver, HttpCache, UserAgent};

/// The default User-Agent: says what is crawling and where to read about it.
pub const DEFAULT_USER_AGENT: &str =
    concat!("kumo/", env!("CARGO_PKG_VERSION"), " (+https://github.com/kumo-crawler/kumo)");

/// Settings of one downloader instance.
#[derive(Debug, Clone)]
pub struct DownloaderConfig {
    /// The `User-Agent` sent with a request that has none of its own.
    pub user_agent: UserAgent,
    /// Time allowed to establish a connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// Time allowed for the whole exchange, body included: also the body's total deadline.
    pub timeout: Duration,
    /// The slowest a body may come, in bytes a second, measured over each
    /// `min_body_window` from the answer's head on: a body that brings less in a window
    /// (a trickle) is cut there as a timeout, which frees its host's slot long before
    /// `timeout`, and is retried once at most (`FetchError::retry_limit`). 0: no minimum.
    pub min_body_rate: u64,
    /// The window `min_body_rate` is measured over; also the least time any body is given.
    pub min_body_window: Duration,
    /// Most body bytes kept, counted after decompression.
    pub max_body_bytes: usize,
    /// Idle keep-alive connections kept per host.
    pub pool_idle_per_host: usize,
    /// How long an idle connection is kept for its host's next request; zero: each closes
    /// after its answer.
    pub keep_alive: Duration,
    /// The bound on connections in use at once, shared by every downloader given the same
    /// one. `None`: no bound but the crawl's concurrency.
    pub connections: Option<Arc<ConnectionLimit>>,
    /// Ask for gzip, deflate, brotli and zstd, and decode them.
    pub decompress: bool,
    /// Keep cookies the sites set and send them back (per domain and path, as a browser
    /// does), in `cookie_jar`.
    pub cookies: bool,
    /// The jar, shared by every downloader given the same one (the engine gives one to all
    /// the downloaders of a crawl, over the crawl's cookie storage). `None`: the downloader
    /// makes its own, in memory.
    pub cookie_jar: Option<Arc<CookieJar>>,
    /// Send every request through this proxy (one of [`crate::PROXY_SCHEMES`]; others are
    /// refused when the downloader is built).
    /// Without one, requests go direct (proxy environment variables are not read).
    pub proxy: Option<String>,
    /// Root certificates trusted beside the system's (a private certificate authority).
    pub extra_roots: ExtraRoots,
    /// Accept any server certificate, unverified (`--insecure`): only for hosts you control.
    pub accept_invalid_certs: bool,
    /// Answer from this development cache when it holds the answer, and keep every new one
    /// there (`--http-cache DIR`): see [`HttpCache`].
    pub http_cache: Option<Arc<HttpCache>>,
    /// Keep what an archive needs of each exchange (`Response::wire`: the request's headers
    /// as sent, the body before decoding, the server's address), and on a body over the cap
    /// read up to the cap and keep that too (`FetchError::partial`): for `--warc`.
    pub record: bool,
    /// Resolve host names with this resolver, shared by every downloader given the same one
    /// (the crawl's cache, counters and bound on lookups). `None`: the system's resolver, as
    /// reqwest calls it (getaddrinfo), with no cache of kumo's and failures seen as `connect`.
    pub dns: Option<Arc<DnsResolver>>,
}

/// Root certificates to trust beside the system's, as checked PEM text.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ExtraRoots(Vec<u8>);

impl ExtraRoots {
    /// Takes PEM text holding one or more certificates; refuses text that holds none.
    pub fn from_pem(pem: Vec<u8>) -> Result<Self, BuildError> {
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| BuildError(format!("not PEM certificates: {e}")))?;
        if certs.is_empty() {
            return Err(BuildError("no certificate in it (PEM, -----BEGIN CERTIFICATE-----)".into()));
        }
        Ok(ExtraRoots(pem))
    }

    pub(crate) fn certificates(&self) -> Vec<reqwest::Certificate> {
        // Checked when made: only an empty set parses to nothing.
        reqwest::Certificate::from_pem_bundle(&self.0).unwrap_or_default()
    }

    /// Whether no certificate was given (the default).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for ExtraRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExtraRoots({} certificates)", self.certificates().len())
    }
}

impl Default for DownloaderConfig {
    fn default() -> Self {
        DownloaderConfig {
            user_agent: UserAgent::default(),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            // 1 KiB/s is slower than a dial-up modem: no real link is that slow for 10 s,
            // while a trickle holds a slot for a third of `timeout` at most.
            min_body_rate: 1024,
            min_body_window: Duration::from_secs(10),
            max_body_bytes: 10 * 1024 * 1024,
            pool_idle_per_host: 64,
            keep_alive: Duration::from_secs(90),
            connections: None,
            decompress: true,
            proxy: None,
            cookies: true,
            cookie_jar: None,
            extra_roots: ExtraRoots::default(),
            accept_invalid_certs: false,
            http_cache: None,
            record: false,
            dns: None,
        }
    }
}
