//! kumo-testsite: the local HTTP server that kumo's tests, examples and `kumo bench` crawl.
//!
//! One [`TestServer`] answers on a loopback address (by default `127.0.0.1` on a random port)
//! and serves, in this order of precedence:
//!
//! 1. **fixtures** — canned responses for exact paths ([`Fixture`]): any status, any headers,
//!    optionally a slow answer (a wait before the headers) or a slow "trickle" body sent in
//!    delayed chunks;
//! 2. **the synthetic site** — a seeded, deterministic shop ([`SiteConfig`]) of `N` product
//!    pages plus `/index.html`, with a link graph full of the things a crawler must get right
//!    (relative and absolute spellings of one URL, fragments, duplicates, query variants,
//!    external hosts, `mailto:` and `javascript:` links). [`SiteConfig::ground_truth`] says
//!    exactly what a correct crawl must find, depth by depth;
//! 3. **a directory** — static files, served like `python3 -m http.server` (directories
//!    without a trailing slash answer `301`, no listings);
//! 4. otherwise `404`. Methods other than GET and HEAD answer `405` unless a fixture matches.
//!
//! [`HostileSite`] runs several such servers (and one that speaks broken HTTP) as a synthetic
//! site salted with the faults of the real web, with the ground truth of a correct crawl.
//!
//! [`DnsServer`] answers DNS queries on a loopback UDP port from a [`DnsZone`] (addresses,
//! NXDOMAIN, NODATA, silence, SERVFAIL, delays) and logs them: the name server of a synthetic
//! web of many host names.
//!
//! [`SyntheticWeb`] is that web: a seeded [`WebConfig`] makes thousands of host names
//! (`h{i}.d{j}.test`, several per registrable domain) served by `Host` from a few loopback
//! addresses `127.77.x.y` on one port, with a [`DnsServer`] answering for them (A records,
//! NXDOMAIN, silence), heavy-tailed page counts, cross-host links with a popularity skew, every
//! kind of robots.txt, slow and refusing hosts, a trap host and a spam farm. Pages are computed
//! on demand, so a million of them cost nothing until asked for. [`WebTruth`] says what a
//! correct crawl fetches, and [`SyntheticWeb::violations`] judges a crawl's politeness (gaps and
//! overlaps per host and per address, robots.txt, misrouted requests) from the server's log of
//! [`WebHit`]s against [`Rules`].
//!
//! Every request is counted; with recording on (the default) each one is also logged as a
//! [`Hit`]. Benchmarks turn recording off so the server never takes a lock.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};
//!
//! let cfg = SiteConfig { pages: 500, ..SiteConfig::default() };
//! let truth = cfg.ground_truth();
//! let server = ServerBuilder::new()
//!     .synthetic(cfg)
//!     .fixture("/moved", Fixture::redirect(301, "/index.html"))
//!     .start()
//!     .await?;
//! // ... crawl server.url("/index.html") with the crawler under test, then:
//! assert_eq!(server.hit_count(), truth.unique_urls);
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! The server never talks to anything but the client that connects to it; external links on
//! the synthetic site point at `external_base` (a trap server the test runs) or at loopback
//! addresses that nothing serves.

#![warn(missing_docs)]

mod body;
mod directory;
mod dns;
mod fixture;
mod hostile;
mod proxy;
mod record;
pub mod scripted;
mod server;
pub mod services;
mod synthetic;
mod tls;
mod web;

pub use dns::{DnsBehaviour, DnsQuery, DnsServer, DnsZone};
pub use fixture::Fixture;
pub use hostile::{HostileConfig, HostileSite, HostileTruth};
pub use proxy::ForwardProxy;
pub use record::Hit;
pub use scripted::{ScriptedSite, ScriptedTruth};
pub use server::{ServerBuilder, TestServer};
pub use synthetic::{GroundTruth, SiteConfig};
pub use tls::TlsIdentity;
pub use web::{
    Closure, HostKind, PageBudgets, Robots, RobotsMix, Rules, SyntheticWeb, Tally, Violations, WebConfig,
    WebHit, WebHost, WebTruth,
};
