//! kumo's HTTP downloader: turns a [`Request`](kumo_core::Request) into a
//! [`Response`](kumo_core::Response) or a typed [`FetchError`] that gives the request back.
//!
//! One shared client per downloader (connection pooling, HTTP/2 over TLS by ALPN, rustls),
//! connect and total timeouts, a body cap that bounds *decompressed* bytes, and charset
//! detection. A crawl may give its downloaders one shared [`DnsResolver`] (its own cache,
//! a bound on lookups, typed failures) instead of the system's resolver.
//!
//! Redirects are deliberately not followed here: the crawler turns a 3xx into a new request
//! so that every hop is checked against scope, de-duplication and politeness.

#![warn(missing_docs)]

mod cache;
mod config;
mod connections;
mod cookies;
mod decode;
mod dns;
mod error;
mod fetch;
mod proxy;
mod render;
mod user_agent;

pub use cache::{CacheRules, HttpCache};
pub use config::{DEFAULT_USER_AGENT, DownloaderConfig, ExtraRoots};
pub use connections::ConnectionLimit;
pub use cookies::CookieJar;
pub use dns::{DnsConfig, DnsError, DnsErrorKind, DnsFailures, DnsResolver, DnsSnapshot};
pub use error::{BuildError, FetchError};
pub use fetch::Downloader;
pub use proxy::{PROXY_SCHEMES, ProxyError, check_proxy};
pub use render::{Block, IDLE_QUIET, RENDERED_HEADER, RenderConfig, Renderer, Wait};
pub use user_agent::UserAgent;
