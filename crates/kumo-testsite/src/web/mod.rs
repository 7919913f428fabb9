//! The synthetic web: many host names on a few loopback addresses, one DNS server for them,
//! and a server-side request log from which a test judges a broad crawl's politeness.
//!
//! Everything derives from [`WebConfig::seed`]; pages are never stored: a page's links and body
//! are computed on demand from (seed, host, page), so a web of 100 000 hosts and a million pages
//! costs only its host table.
//!
//! - **Hosts** `h{i}.d{j}.test`, a few per registrable domain `d{j}.test`, each on one of
//!   [`WebConfig::addresses`] addresses `127.77.x.y` drawn with a Zipf skew (shared hosting: a
//!   few addresses carry many names). All listen on one port.
//! - **Pages**: `/` and `/p/{k}.html` (`/private/{k}.html` for some pages of hosts whose
//!   robots.txt disallows `/private/`), a heavy-tailed count per host. Page `k` links to its
//!   home, to pages `2k+1` and `2k+2` (so every page is reachable from `/`), and to random pages,
//!   a share of them (all, on a one-page host) on other hosts chosen by a Zipf popularity.
//! - **The odd ones**, linked from the index pages of the most popular hosts: a trap host
//!   (`trap.d0.test`, an endless calendar), a spam farm (`s{k}.spam{m}.test`, densely linked),
//!   names refusing connections (`down{i}…`, an address nothing listens on), NXDOMAIN names
//!   (`gone{i}…`) and names whose DNS never answers (`mute{i}…`).
//! - **robots.txt**: 404, allow-all, `Disallow: /private/`, `Crawl-delay` (0.5 s or 1 s) or
//!   500 (disallow all, RFC 9309), by a seeded draw.
//!
//! A request for a host on an address it does not resolve to answers `421 Misdirected
//! Request`; an unknown host or path answers `404`.

mod closure;
mod judge;
mod links;
mod model;
mod render;
mod serve;
mod truth;

#[cfg(test)]
mod live_tests;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use closure::{Closure, PageBudgets};
pub use judge::{Rules, Tally, Violations};
pub use model::{HostKind, Robots, WebHost};
pub use serve::{SyntheticWeb, WebHit};
pub use truth::WebTruth;

/// The shape of a synthetic web. The same config always makes the same web.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WebConfig {
    /// Seeds every random choice.
    pub seed: u64,
    /// Ordinary hosts, `h{i}.d{j}.test`.
    pub hosts: usize,
    /// The mean number of hosts per registrable domain; each domain gets 1 to `2 × mean − 1`.
    pub hosts_per_domain: usize,
    /// Loopback addresses serving the hosts (1 to 65 000), `127.77.0.1` on.
    pub addresses: usize,
    /// About the mean number of pages of an ordinary host (a Pareto draw with tail index 4/3,
    /// trimmed by `max_pages_per_host`): most hosts have a few, some hundreds.
    pub mean_pages: usize,
    /// The most pages an ordinary host has.
    pub max_pages_per_host: usize,
    /// Links per page (the tree links and the home link count; the odd names linked from the
    /// popular hosts' index pages come on top).
    pub links_per_page: usize,
    /// Of the random links, the percentage that point at another host (a one-page host's all
    /// do).
    pub cross_host_percent: u32,
    /// The approximate size of a page's HTML.
    pub page_bytes: usize,
    /// Start URLs: the index pages of this many most popular hosts.
    pub seeds: usize,
    /// How long every response on a served host waits before its head.
    pub latency: Duration,
    /// Ordinary hosts that answer after `slow_latency` instead.
    pub slow_hosts: usize,
    /// How long a slow host waits before each response's head.
    pub slow_latency: Duration,
    /// Names whose address has no listener: connections are refused.
    pub refusing_hosts: usize,
    /// Linked names whose DNS answer is NXDOMAIN.
    pub nxdomain_names: usize,
    /// Linked names whose DNS query is never answered.
    pub silent_names: usize,
    /// The TTL of A records, and the negative TTL of NXDOMAIN answers.
    pub ttl: u32,
    /// Serve the trap host, `trap.d0.test`.
    pub trap: bool,
    /// The spam farm: `spam_domains` domains of `spam_hosts` hosts of `spam_pages` pages.
    pub spam_domains: usize,
    /// Hosts per spam domain.
    pub spam_hosts: usize,
    /// Pages per spam host.
    pub spam_pages: usize,
    /// How ordinary hosts' robots.txt files are drawn.
    pub robots: RobotsMix,
    /// Spread the ordinary hosts evenly over the addresses instead of by a Zipf skew: a web
    /// whose crawl per-IP politeness does not pace (with the skew, a tenth of the names share
    /// one address, which a polite crawler asks ten times a second).
    pub even_addresses: bool,
}

/// Relative weights of the robots.txt kinds among ordinary hosts. The seed hosts never get
/// a 5xx, and a host with more than [`RobotsMix::CRAWL_DELAY_MAX_PAGES`] pages never a
/// Crawl-delay (it gets allow-all instead), so that a full crawl stays short.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RobotsMix {
    /// Weight of [`Robots::NotFound`].
    pub not_found: u32,
    /// Weight of [`Robots::AllowAll`].
    pub allow_all: u32,
    /// Weight of [`Robots::Disallow`].
    pub disallow: u32,
    /// Weight of [`Robots::CrawlDelay`].
    pub crawl_delay: u32,
    /// Weight of [`Robots::ServerError`].
    pub server_error: u32,
}

impl RobotsMix {
    /// The most pages a host with a Crawl-delay has.
    pub const CRAWL_DELAY_MAX_PAGES: u32 = 10;
}

impl Default for RobotsMix {
    fn default() -> Self {
        RobotsMix { not_found: 30, allow_all: 40, disallow: 15, crawl_delay: 10, server_error: 5 }
    }
}

impl Default for WebConfig {
    /// A small web: 200 hosts (about 50 domains) on 8 addresses, about 1 000 pages.
    fn default() -> Self {
        WebConfig {
            seed: 1,
            hosts: 200,
            hosts_per_domain: 4,
            addresses: 8,
            mean_pages: 5,
            max_pages_per_host: 300,
            links_per_page: 8,
            cross_host_percent: 25,
            page_bytes: 1_500,
            seeds: 4,
            latency: Duration::from_millis(1),
            slow_hosts: 2,
            slow_latency: Duration::from_millis(400),
            refusing_hosts: 2,
            nxdomain_names: 3,
            silent_names: 2,
            ttl: 300,
            trap: true,
            spam_domains: 2,
            spam_hosts: 10,
            spam_pages: 5,
            robots: RobotsMix::default(),
            even_addresses: false,
        }
    }
}
