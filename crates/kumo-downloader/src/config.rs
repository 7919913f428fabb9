//! Downloader settings.

use std::sync::Arc;
use std::time::Duration;

use crate::{CookieJar, UserAgent};

/// The default User-Agent: says what is crawling and where to read about it.
pub const DEFAULT_USER_AGENT: &str =
    concat!("kumo/", env!("CARGO_PKG_VERSION"), " (+https://github.com/kumo-crawler/kumo)");

/// Settings of one downloader instance.
#[derive(Debug, Clone)]
pub struct DownloaderConfig {
    pub user_agent: UserAgent,
    /// Time allowed to establish a connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// Time allowed for the whole exchange, body included.
    pub timeout: Duration,
    /// Most body bytes kept, counted after decompression.
    pub max_body_bytes: usize,
    /// Idle keep-alive connections kept per host.
    pub pool_idle_per_host: usize,
    /// Ask for gzip, deflate, brotli and zstd, and decode them.
    pub decompress: bool,
    /// Keep cookies the sites set and send them back (per domain and path, as a browser
    /// does), in `cookie_jar`.
    pub cookies: bool,
    /// The jar, shared by every downloader given the same one (the engine gives one to all
    /// the downloaders of a crawl, over the crawl's cookie storage). `None`: the downloader
    /// makes its own, in memory.
    pub cookie_jar: Option<Arc<CookieJar>>,
    /// Send every request through this proxy (`http://`, `https://` or `socks5://` URL).
    /// Without one, requests go direct (proxy environment variables are not read).
    pub proxy: Option<String>,
}

impl Default for DownloaderConfig {
    fn default() -> Self {
        DownloaderConfig {
            user_agent: UserAgent::default(),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body_bytes: 10 * 1024 * 1024,
            pool_idle_per_host: 64,
            decompress: true,
            proxy: None,
            cookies: true,
            cookie_jar: None,
        }
    }
}
