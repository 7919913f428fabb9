//! The hostile site: a normal synthetic shop salted, deterministically, with the faults the
//! real web throws at a crawler, and the ground truth of what a correct crawl makes of them.
//!
//! Hosts, all on loopback (each port is an origin of its own, with its own robots.txt):
//!
//! - **main**: the synthetic shop (robots.txt forbids `/private/`), its pages linking to the
//!   faults of `faults.rs`: transient and permanent 5xx, resets mid-body, slow and endless
//!   trickles, 429/503 with small, huge, absurd and garbage `Retry-After`, redirect loops, a
//!   30-hop chain, redirects to `file:`, `data:`, `javascript:` and another host, gzip/brotli/
//!   zstd bombs, a 200 MB body, malformed HTML (100 000-deep nesting, NUL bytes, invalid
//!   UTF-8), charsets declared only in a `<meta>` or wrongly in the header, invalid hrefs, a
//!   100 KB URL, and spider traps (an endless calendar, an ever-growing path, a repeated
//!   segment, session ids in every link, endless pagination);
//! - **raw**: broken HTTP (a reset mid-head, `Content-Length` lying both ways, a non-HTTP
//!   answer, a server that never answers);
//! - **robots hosts**: robots.txt answering 503, resetting the connection, refusing it
//!   (nothing listens), 600 KB long, and redirecting. RFC 9309 reads the first three as
//!   "disallow everything";
//! - **outside** (`127.0.0.2`): a host outside the crawl, which must see no request.

mod content;
mod faults;
mod raw;
mod routes;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use bytes::Bytes;

use crate::{Fixture, ServerBuilder, SiteConfig, TestServer};
use faults::{Elsewhere, Expect};
use raw::{RawHost, RawRobots};
use routes::HostileRoutes;

/// The shape of a hostile site.
#[derive(Clone, Debug)]
pub struct HostileConfig {
    /// Normal pages of the synthetic shop (besides its index); keep the site within eight
    /// links of the index (a few thousand pages are).
    pub pages: usize,
    /// Seeds the shop's link graph.
    pub seed: u64,
}

impl Default for HostileConfig {
    fn default() -> Self {
        HostileConfig { pages: 1000, seed: 1 }
    }
}

/// What a correct crawl of the hostile site does, URL by URL. URLs are absolute.
#[derive(Clone, Debug, Default)]
pub struct HostileTruth {
    /// Where the crawl starts: the main host's `/index.html`.
    pub start: String,
    /// Pages fetched exactly once, each a success.
    pub normal: Vec<String>,
    /// Pages that fail at first and work within two retries: fetched by the end.
    pub flaky: Vec<String>,
    /// Pages that fail three times, then work: failures of a crawl with two retries, fetched
    /// once those failures are queued again.
    pub transient: Vec<String>,
    /// Requests that fail for good: a URL prefix and the kind of failure as kumo names it
    /// (`None`: any kind). The redirect chain's failure is on whichever hop hits the cap.
    pub failing: Vec<(String, Option<&'static str>)>,
    /// URL prefixes no request may start with: robots.txt forbids them (or, per RFC 9309,
    /// its unavailability does), they lie outside the crawl, or they are too long to send.
    pub forbidden: Vec<String>,
    /// Requested at most once, whatever the outcome: redirects, loops, chain hops.
    pub at_most_once: Vec<String>,
    /// The exact titles of pages whose charset is odd.
    pub titles: Vec<(String, String)>,
    /// The URL prefix of every spider trap; requests under it are bounded only by a
    /// crawler's defences.
    pub traps: String,
}

/// A running hostile site. It serves until [`HostileSite::shutdown`] or until it is dropped.
#[derive(Debug)]
pub struct HostileSite {
    main: TestServer,
    outside: TestServer,
    servers: Vec<TestServer>,
    raws: Vec<RawHost>,
    truth: HostileTruth,
}

impl HostileSite {
    /// Binds every host on loopback (random ports) and starts serving.
    pub async fn start(cfg: HostileConfig) -> std::io::Result<HostileSite> {
        let outside = ServerBuilder::new().ip(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))).start().await?;
        let raw = RawHost::start(RawRobots::NotFound).await?;
        let unreachable = RawHost::start(RawRobots::Reset).await?;
        let mut truth = HostileTruth::default();
        let mut salt = Vec::new();

        // robots.txt variants, one origin each.
        let robots_503 = ServerBuilder::new()
            .fixture("/robots.txt", Fixture::status(503, "busy"))
            .fixture("/p/1.html", Fixture::html("<title>Behind a 503 robots.txt</title>"))
            .start()
            .await?;
        let huge = ServerBuilder::new()
            .fixture("/robots.txt", robots_txt(content::huge_robots()))
            .fixture("/ok.html", Fixture::html("<title>Past a huge robots.txt</title>"))
            .fixture("/huge-private/x.html", Fixture::html("<title>Forbidden</title>"))
            .fixture("/beyond-the-limit/x.html", Fixture::html("<title>Maybe</title>"))
            .start()
            .await?;
        let redirecting = ServerBuilder::new()
            .fixture("/robots.txt", Fixture::redirect(301, "/rules/robots.txt"))
            .fixture(
                "/rules/robots.txt",
                robots_txt(Bytes::from_static(b"User-agent: *\nDisallow: /secret/\n")),
            )
            .fixture("/open.html", Fixture::html("<title>Open</title>"))
            .fixture("/secret/x.html", Fixture::html("<title>Secret</title>"))
            .start()
            .await?;
        // A port nothing listens on: bound, then let go.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let link = |url: String, salt: &mut Vec<String>| {
            salt.push(url.clone());
            url
        };
        truth.failing.push((link(robots_503.url("/p/1.html"), &mut salt), Some("robots")));
        truth.forbidden.push(robots_503.url("/p/"));
        truth.failing.push((link(format!("{}/p/1.html", unreachable.base_url()), &mut salt), Some("robots")));
        truth.forbidden.push(format!("{}/p/", unreachable.base_url()));
        truth.failing.push((link(format!("http://{closed}/p/1.html"), &mut salt), Some("robots")));
        truth.normal.push(link(huge.url("/ok.html"), &mut salt));
        truth.forbidden.push(link(huge.url("/huge-private/x.html"), &mut salt));
        truth.at_most_once.push(link(huge.url("/beyond-the-limit/x.html"), &mut salt));
        truth.normal.push(link(redirecting.url("/open.html"), &mut salt));
        truth.forbidden.push(link(redirecting.url("/secret/x.html"), &mut salt));
        truth.forbidden.push(outside.base_url());

        // The main host: the shop, its faults and its traps. Its address is known only once
        // bound, so the catalogue's relative paths are made absolute afterwards.
        let (raw_base, outside_base) = (raw.base_url(), outside.base_url());
        let elsewhere = Elsewhere { raw: &raw_base, outside: &outside_base };
        let catalogue = faults::catalogue(&elsewhere);
        salt.extend(catalogue.iter().filter(|e| e.linked).map(|e| e.href.clone()));
        salt.extend(routes::TRAP_ENTRANCES.iter().map(|s| s.to_string()));
        let site = SiteConfig {
            pages: cfg.pages,
            page_bytes: 2_000,
            seed: cfg.seed,
            external_base: Some(outside.base_url()),
            salt,
            ..SiteConfig::default()
        };
        let shop = site.ground_truth();
        let mut b = ServerBuilder::new()
            .synthetic(site)
            .routes(Arc::new(HostileRoutes::default()))
            .fixture("/robots.txt", robots_txt(Bytes::from_static(b"User-agent: *\nDisallow: /private/\n")));
        for e in &catalogue {
            if !e.fixtures.is_empty() {
                b = b.fixture_sequence(&e.href, e.fixtures.clone());
            }
        }
        let main = b.start().await?;

        truth.start = main.url("/index.html");
        truth.normal.push(main.url("/index.html"));
        truth.normal.extend((0..cfg.pages).map(|k| main.url(&format!("/page/{k}.html"))));
        truth
            .normal
            .extend((0..cfg.pages).step_by(50).map(|k| main.url(&format!("/page/{k}.html?view=print"))));
        debug_assert_eq!(truth.normal.len(), shop.unique_urls + 2, "the shop's URLs are listed");
        truth.traps = main.url(routes::TRAP_PREFIX);
        for e in catalogue {
            let url = if e.href.starts_with('/') { main.url(&e.href) } else { e.href };
            if let Some(title) = e.title {
                truth.titles.push((url.clone(), title.to_owned()));
            }
            match e.expect {
                Expect::Normal => truth.normal.push(url),
                Expect::Flaky => truth.flaky.push(url),
                Expect::Transient => truth.transient.push(url),
                Expect::Fails(kind) => truth.failing.push((url, kind)),
                Expect::AtMostOnce => truth.at_most_once.push(url),
                Expect::Forbidden => truth.forbidden.push(url),
            }
        }
        Ok(HostileSite {
            main,
            outside,
            servers: vec![robots_503, huge, redirecting],
            raws: vec![raw, unreachable],
            truth,
        })
    }

    /// What a correct crawl does.
    pub fn truth(&self) -> &HostileTruth {
        &self.truth
    }

    /// The main host's base URL, e.g. `http://127.0.0.1:40123`.
    pub fn base_url(&self) -> String {
        self.main.base_url()
    }

    /// Every request every host received, as absolute URLs, robots.txt included; per host
    /// in arrival order.
    pub fn requests(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in std::iter::once(&self.main).chain([&self.outside]).chain(&self.servers) {
            out.extend(s.hits().into_iter().map(|h| s.url(&h.target)));
        }
        for r in &self.raws {
            out.extend(r.hits().into_iter().map(|t| format!("{}{t}", r.base_url())));
        }
        out
    }

    /// Stops every host.
    pub async fn shutdown(self) {
        self.main.shutdown().await;
        self.outside.shutdown().await;
        for s in self.servers {
            s.shutdown().await;
        }
        for r in self.raws {
            r.shutdown().await;
        }
    }
}

fn robots_txt(body: Bytes) -> Fixture {
    Fixture {
        headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
        body,
        ..Fixture::default()
    }
}
