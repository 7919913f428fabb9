//! The synthetic web's host table: every name, its address, domain, page count, robots.txt
//! and role, drawn from the seed once. Pages are not stored (see `links.rs`).

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::ops::Range;
use std::time::Duration;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{RobotsMix, WebConfig};

/// The served addresses are `127.77.0.1` on; nothing else uses `127.77.0.0/16` or
/// `127.78.0.0/16`, so neither collides with `127.0.0.1` servers in the same test.
const FIRST_ADDRESS: u32 = u32::from_be_bytes([127, 77, 0, 1]);
/// Where refusing names point: an address no listener of the web binds.
pub(crate) const REFUSING_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 78, 0, 1);
const MAX_ADDRESSES: usize = 65_000;

/// Index pages of this many most popular hosts carry the links to the odd names.
const HUBS: usize = 16;

/// What a name is in the web.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostKind {
    /// An ordinary host `h{i}.d{j}.test`.
    Ordinary,
    /// The endless calendar, `trap.d0.test`.
    Trap,
    /// A host of the spam farm, `s{k}.spam{m}.test`.
    Spam,
    /// Resolves to an address nothing listens on: the connection is refused.
    Refusing,
    /// DNS answers NXDOMAIN.
    NxDomain,
    /// DNS never answers.
    Silent,
}

impl HostKind {
    /// Whether a request can reach the host at all (it resolves and something listens).
    pub fn serves(self) -> bool {
        matches!(self, HostKind::Ordinary | HostKind::Trap | HostKind::Spam)
    }
}

/// A host's robots.txt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Robots {
    /// 404: everything allowed.
    NotFound,
    /// `Allow: /`.
    AllowAll,
    /// `Disallow: /private/`; some of the host's pages live there.
    Disallow,
    /// `Crawl-delay` of this much (0.5 s or 1 s), everything allowed.
    CrawlDelay(Duration),
    /// 500: everything disallowed (RFC 9309, 2.3.1.4).
    ServerError,
}

/// The prefix [`Robots::Disallow`] forbids.
pub(crate) const DISALLOWED_PREFIX: &str = "/private/";

impl Robots {
    /// The path prefix the file forbids, if it forbids one (a 5xx forbids all: `/`).
    pub fn disallowed_prefix(self) -> Option<&'static str> {
        match self {
            Robots::Disallow => Some(DISALLOWED_PREFIX),
            Robots::ServerError => Some("/"),
            _ => None,
        }
    }

    /// The `Crawl-delay` the file sets, if it sets one.
    pub fn crawl_delay(self) -> Option<Duration> {
        match self {
            Robots::CrawlDelay(d) => Some(d),
            _ => None,
        }
    }

    /// Whether a crawler obeying the file may fetch `path` (robots.txt itself always).
    pub fn allows(self, path: &str) -> bool {
        path == "/robots.txt" || self.disallowed_prefix().is_none_or(|p| !path.starts_with(p))
    }
}

/// One name of the web.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WebHost {
    /// The host name, e.g. `h3.d1.test`.
    pub name: String,
    /// The registrable domain, e.g. `d7.test`.
    pub domain: String,
    /// Its A record; `None` for NXDOMAIN and silent names.
    pub addr: Option<Ipv4Addr>,
    /// Pages it serves: 1 for names that fail (their linked `/`), `u32::MAX` for the trap.
    pub pages: u32,
    /// Its role in the web.
    pub kind: HostKind,
    /// What its robots.txt says.
    pub robots: Robots,
    /// Answers after [`WebConfig::slow_latency`].
    pub slow: bool,
}

/// The host table and what link generation needs to pick targets.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) cfg: WebConfig,
    pub(crate) addresses: Vec<Ipv4Addr>,
    /// Ordinary hosts first (`0..ordinary`), then the trap, the spam farm and the failing names.
    pub(crate) hosts: Vec<WebHost>,
    pub(crate) by_name: HashMap<String, u32>,
    /// Ordinary hosts by popularity, the most popular first.
    pub(crate) by_rank: Vec<u32>,
    /// Popularity rank of each ordinary host.
    pub(crate) rank: Vec<u32>,
    /// Cross-host link targets by rank: Zipf weights.
    pub(crate) popularity: Zipf,
    /// Hosts linked from the hubs' index pages: the trap, one per spam domain, failing names.
    pub(crate) odd: Vec<u32>,
    pub(crate) hubs: u32,
    pub(crate) trap: Option<u32>,
    pub(crate) spam: Range<u32>,
}

/// Independent random streams, so that changing one draw never moves another.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    DomainSize = 1,
    Address,
    Pages,
    Robots,
    Shuffle,
    Links,
    Misc,
}

/// A counter-based random source: the `i`-th number of a stream is `xxh3(seed; key, i)`, so
/// any page's draws can be made alone, in any order.
#[derive(Debug)]
pub(crate) struct Rng {
    seed: u64,
    key: u64,
    i: u64,
}

impl Rng {
    pub(crate) fn new(seed: u64, stream: Stream, a: u64, b: u64) -> Rng {
        Rng { seed, key: a ^ ((stream as u64) << 56), i: b << 20 }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut input = [0u8; 16];
        input[..8].copy_from_slice(&self.key.to_le_bytes());
        input[8..].copy_from_slice(&self.i.to_le_bytes());
        self.i += 1;
        xxh3_64_with_seed(&input, self.seed)
    }

    /// A number in `0..n`, `n` positive (the modulo bias does not matter here).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A float in `(0, 1]`.
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// Integer Zipf weights (1/(r+1)) over `0..n`: exact on every platform, unlike `powf`.
#[derive(Debug)]
pub(crate) struct Zipf {
    cumulative: Vec<u64>,
}

impl Zipf {
    pub(crate) fn new(n: usize) -> Zipf {
        let mut total = 0u64;
        let cumulative = (0..n as u64)
            .map(|r| {
                total += (1u64 << 32) / (r + 1);
                total
            })
            .collect();
        Zipf { cumulative }
    }

    /// A rank in `0..n` (0 the likeliest); `n` must be positive.
    pub(crate) fn sample(&self, rng: &mut Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(1);
        let x = rng.below(total);
        self.cumulative.partition_point(|&c| c <= x)
    }
}

impl Model {
    pub(crate) fn new(cfg: WebConfig) -> Model {
        let k = cfg.addresses.clamp(1, MAX_ADDRESSES);
        let addresses: Vec<Ipv4Addr> = (0..k as u32).map(|i| Ipv4Addr::from(FIRST_ADDRESS + i)).collect();
        let address_skew = Zipf::new(k);
        let mut hosts = ordinary_hosts(&cfg, &addresses, &address_skew);
        let ordinary = hosts.len() as u32;
        let (by_rank, rank) = popularity_order(&cfg, ordinary);
        settle_ordinary(&cfg, &mut hosts, &by_rank);

        let domains = hosts.last().map_or(1, |h| domain_number(&h.domain) + 1);
        let mut odd = Vec::new();
        let mut rng = Rng::new(cfg.seed, Stream::Misc, 0, 0);
        let mut pick_addr = || addresses[address_skew.sample(&mut rng)];
        let trap = cfg.trap.then(|| {
            odd.push(hosts.len() as u32);
            hosts.push(extra("trap.d0.test", "d0.test", Some(pick_addr()), u32::MAX, HostKind::Trap));
            hosts.len() as u32 - 1
        });
        let spam_start = hosts.len() as u32;
        for m in 0..if cfg.spam_hosts > 0 { cfg.spam_domains } else { 0 } {
            let addr = pick_addr();
            odd.push(hosts.len() as u32);
            let domain = format!("spam{m}.test");
            for s in 0..cfg.spam_hosts {
                let pages = cfg.spam_pages.clamp(1, u32::MAX as usize) as u32;
                hosts.push(extra(&format!("s{s}.{domain}"), &domain, Some(addr), pages, HostKind::Spam));
            }
        }
        let spam = spam_start..hosts.len() as u32;
        let failing = [
            ("down", cfg.refusing_hosts, HostKind::Refusing),
            ("gone", cfg.nxdomain_names, HostKind::NxDomain),
            ("mute", cfg.silent_names, HostKind::Silent),
        ];
        for (n, (prefix, count, kind)) in failing.into_iter().enumerate() {
            for i in 0..count {
                let key = ((n as u64 + 1) << 32) + i as u64;
                let domain = format!("d{}.test", rng_below(&cfg, Stream::Misc, key, domains));
                let addr = (kind == HostKind::Refusing).then_some(REFUSING_ADDRESS);
                odd.push(hosts.len() as u32);
                hosts.push(extra(&format!("{prefix}{i}.{domain}"), &domain, addr, 1, kind));
            }
        }
        let by_name = hosts.iter().enumerate().map(|(i, h)| (h.name.clone(), i as u32)).collect();
        let hubs = (ordinary as usize).min(HUBS) as u32;
        Model {
            popularity: Zipf::new(ordinary as usize),
            cfg,
            addresses,
            hosts,
            by_name,
            by_rank,
            rank,
            odd,
            hubs,
            trap,
            spam,
        }
    }

    pub(crate) fn id(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    pub(crate) fn host(&self, id: u32) -> &WebHost {
        &self.hosts[id as usize]
    }

    /// The odd names linked from ordinary host `id`'s index page (it is a hub if any).
    pub(crate) fn odd_links_of(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        let rank = self.rank.get(id as usize).copied().filter(|&r| r < self.hubs);
        let hubs = self.hubs.max(1) as usize;
        rank.into_iter().flat_map(move |r| self.odd.iter().skip(r as usize).step_by(hubs).copied())
    }

    /// The seed hosts: the most popular ordinary hosts.
    pub(crate) fn seed_hosts(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_rank.iter().take(self.cfg.seeds).copied()
    }
}

fn rng_below(cfg: &WebConfig, stream: Stream, a: u64, n: u64) -> u64 {
    Rng::new(cfg.seed, stream, a, 0).below(n.max(1))
}

fn extra(name: &str, domain: &str, addr: Option<Ipv4Addr>, pages: u32, kind: HostKind) -> WebHost {
    let robots = if kind == HostKind::Trap { Robots::AllowAll } else { Robots::NotFound };
    WebHost { name: name.to_owned(), domain: domain.to_owned(), addr, pages, kind, robots, slow: false }
}

fn domain_number(domain: &str) -> u64 {
    domain.strip_prefix('d').and_then(|d| d.strip_suffix(".test")).and_then(|d| d.parse().ok()).unwrap_or(0)
}

/// Ordinary hosts with their names, domains, addresses and page counts; robots.txt and
/// slowness come in [`settle_ordinary`], once popularity is known.
fn ordinary_hosts(cfg: &WebConfig, addresses: &[Ipv4Addr], skew: &Zipf) -> Vec<WebHost> {
    let spread = 2 * cfg.hosts_per_domain.max(1) as u64 - 1;
    let (mut domain, mut left) = (0u64, 0u64);
    (0..cfg.hosts as u64)
        .map(|i| {
            if left == 0 {
                if i > 0 {
                    domain += 1;
                }
                left = 1 + rng_below(cfg, Stream::DomainSize, domain, spread);
            }
            left -= 1;
            let mut rng = Rng::new(cfg.seed, Stream::Address, i, 0);
            let pick = if cfg.even_addresses {
                rng.below(addresses.len() as u64) as usize
            } else {
                skew.sample(&mut rng)
            };
            let addr = addresses[pick];
            WebHost {
                name: format!("h{i}.d{domain}.test"),
                domain: format!("d{domain}.test"),
                addr: Some(addr),
                pages: page_count(cfg, i),
                kind: HostKind::Ordinary,
                robots: Robots::NotFound,
                slow: false,
            }
        })
        .collect()
}

/// A Pareto draw with tail index 4/3 and mean `mean_pages` (before the cap): `u^(-3/4)` is
/// written with square roots, which IEEE 754 rounds exactly, so every platform agrees.
fn page_count(cfg: &WebConfig, host: u64) -> u32 {
    let u = Rng::new(cfg.seed, Stream::Pages, host, 0).unit();
    let scale = cfg.mean_pages.max(1) as f64 / 4.0;
    let pages = (scale / (u.sqrt() * u.sqrt().sqrt())).floor();
    let cap = cfg.max_pages_per_host.clamp(1, u32::MAX as usize) as f64;
    pages.clamp(1.0, cap) as u32
}

/// A seeded shuffle of the ordinary hosts: rank → host and host → rank.
fn popularity_order(cfg: &WebConfig, n: u32) -> (Vec<u32>, Vec<u32>) {
    let mut by_rank: Vec<u32> = (0..n).collect();
    let mut rng = Rng::new(cfg.seed, Stream::Shuffle, 0, 0);
    for i in (1..by_rank.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        by_rank.swap(i, j);
    }
    let mut rank = vec![0; by_rank.len()];
    for (r, &h) in by_rank.iter().enumerate() {
        rank[h as usize] = r as u32;
    }
    (by_rank, rank)
}

/// Draws each ordinary host's robots.txt and picks the slow hosts, spread over the ranks
/// after the seeds (so some are popular enough to be reached).
fn settle_ordinary(cfg: &WebConfig, hosts: &mut [WebHost], by_rank: &[u32]) {
    let seeds = cfg.seeds.min(by_rank.len());
    for (r, &h) in by_rank.iter().enumerate() {
        let host = &mut hosts[h as usize];
        host.robots = draw_robots(&cfg.robots, &mut Rng::new(cfg.seed, Stream::Robots, h.into(), 0));
        let seed_host = r < seeds;
        if seed_host && host.robots == Robots::ServerError
            || host.pages > RobotsMix::CRAWL_DELAY_MAX_PAGES && host.robots.crawl_delay().is_some()
        {
            host.robots = Robots::AllowAll;
        }
    }
    let rest = by_rank.len() - seeds;
    let slow = cfg.slow_hosts.min(rest);
    if let Some(step) = rest.checked_div(slow) {
        for i in 0..slow {
            hosts[by_rank[seeds + i * step] as usize].slow = true;
        }
    }
}

fn draw_robots(mix: &RobotsMix, rng: &mut Rng) -> Robots {
    let weights = [mix.not_found, mix.allow_all, mix.disallow, mix.crawl_delay, mix.server_error];
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    if total == 0 {
        return Robots::NotFound;
    }
    let mut x = rng.below(total);
    let mut kind = 0;
    for (i, &w) in weights.iter().enumerate() {
        if x < u64::from(w) {
            kind = i;
            break;
        }
        x -= u64::from(w);
    }
    match kind {
        0 => Robots::NotFound,
        1 => Robots::AllowAll,
        2 => Robots::Disallow,
        3 => Robots::CrawlDelay(Duration::from_millis(500 * (1 + rng.below(2)))),
        _ => Robots::ServerError,
    }
}
