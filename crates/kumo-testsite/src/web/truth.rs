//! The ground truth of a synthetic web: its host table, and what a correct crawl fetches, by a
//! breadth-first search over the same link function that renders the pages.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::sync::Arc;

use super::links::{Link, allowed, for_each_link, push_path};
use super::model::{HostKind, Model, WebHost};
use super::{Rules, Violations, WebConfig, WebHit};

/// What a synthetic web holds and what a correct crawl of it does. Cheap to clone.
#[derive(Clone, Debug)]
pub struct WebTruth {
    pub(crate) model: Arc<Model>,
    port: u16,
}

impl WebTruth {
    /// The truth of the web `cfg` makes, its URLs naming `port`. Needs no server: the same
    /// config gives the same truth as a running [`super::SyntheticWeb`] on that port.
    pub fn new(cfg: WebConfig, port: u16) -> WebTruth {
        WebTruth::with_model(Arc::new(Model::new(cfg)), port)
    }

    pub(crate) fn with_model(model: Arc<Model>, port: u16) -> WebTruth {
        WebTruth { model, port }
    }

    /// The config the web was made from.
    pub fn config(&self) -> &WebConfig {
        &self.model.cfg
    }

    /// The port its URLs name.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every name of the web: ordinary hosts, then the trap, the spam farm, and the names that
    /// fail (refusing, NXDOMAIN, silent).
    pub fn hosts(&self) -> &[WebHost] {
        &self.model.hosts
    }

    /// The host called `name` (exact, lower-case spelling); `None` if the web has none.
    pub fn host(&self, name: &str) -> Option<&WebHost> {
        self.model.id(name).map(|id| self.model.host(id))
    }

    /// The addresses the web listens on (refusing names point elsewhere).
    pub fn addresses(&self) -> &[Ipv4Addr] {
        &self.model.addresses
    }

    /// The names of one kind, e.g. [`HostKind::NxDomain`].
    pub fn names(&self, kind: HostKind) -> Vec<&str> {
        self.hosts().iter().filter(|h| h.kind == kind).map(|h| h.name.as_str()).collect()
    }

    /// `http://{host}:{port}{path}`; `path` should start with `/`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// The start URLs: the index pages of the most popular hosts.
    pub fn seeds(&self) -> Vec<String> {
        self.model.seed_hosts().map(|h| self.page_url(Link { host: h, page: 0 })).collect()
    }

    /// Pages the web serves, the trap's endless ones left out.
    pub fn page_count(&self) -> u64 {
        let finite = |h: &&WebHost| h.kind.serves() && h.kind != HostKind::Trap;
        self.hosts().iter().filter(finite).map(|h| u64::from(h.pages)).sum()
    }

    /// The page URLs a correct breadth-first crawl from [`WebTruth::seeds`] (depth 0) fetches
    /// within `max_depth` links, robots.txt files not counted. It skips names that fail DNS or
    /// refuse connections; obeying robots, it fetches no disallowed page (so follows none of
    /// its links) and nothing on a host whose robots.txt is a 5xx.
    ///
    /// With `max_depth: None` the trap host is left out entirely: it has no end. Judge its
    /// requests with [`Violations::trap`] instead.
    pub fn reachable(&self, max_depth: Option<u32>, obey_robots: bool) -> BTreeSet<String> {
        let reach = Reach::new(&self.model, max_depth, obey_robots);
        reach.order.iter().map(|&(link, _)| self.page_url(link)).collect()
    }

    /// How many pages [`WebTruth::reachable`] holds, without making their URLs.
    pub fn reachable_count(&self, max_depth: Option<u32>, obey_robots: bool) -> usize {
        Reach::new(&self.model, max_depth, obey_robots).order.len()
    }

    /// The robots.txt URLs a correct crawl obeying robots fetches, once each: those of the
    /// hosts that resolve, accept connections and have a page linked within `max_depth`.
    pub fn robots_fetches(&self, max_depth: Option<u32>) -> BTreeSet<String> {
        let reach = Reach::new(&self.model, max_depth, true);
        let served = |(id, h): &(usize, &WebHost)| reach.touched[*id] && h.kind.serves();
        self.hosts()
            .iter()
            .enumerate()
            .filter(served)
            .map(|(_, h)| self.url(&h.name, "/robots.txt"))
            .collect()
    }

    /// Judges a request log (from [`super::SyntheticWeb::log`], or made by hand) by `rules`.
    pub fn judge(&self, log: &[WebHit], rules: &Rules) -> Violations {
        super::judge::judge(self, log, rules)
    }

    pub(crate) fn page_url(&self, link: Link) -> String {
        let mut url = String::with_capacity(48);
        let _ = write!(url, "http://{}:{}", self.model.host(link.host).name, self.port);
        push_path(&mut url, &self.model, link.host, link.page);
        url
    }
}

/// The outcome of the breadth-first search: pages discovered, pages fetched in order.
#[derive(Debug)]
pub(crate) struct Reach {
    /// Where each host's pages start in `seen`; the trap has none (it uses `trap_seen`).
    offsets: Vec<u64>,
    /// Pages discovered within the depth (fetched or not).
    seen: Vec<bool>,
    trap_seen: HashSet<u32>,
    /// Hosts with a page discovered within the depth: a crawler asks them for robots.txt.
    pub(crate) touched: Vec<bool>,
    /// Pages fetched, with their depth, in breadth-first order (also the search's queue).
    pub(crate) order: Vec<(Link, u32)>,
    obey: bool,
    trap: Option<u32>,
    limit: u32,
}

impl Reach {
    pub(crate) fn new(model: &Model, max_depth: Option<u32>, obey: bool) -> Reach {
        let mut offsets = Vec::with_capacity(model.hosts.len() + 1);
        let mut total = 0u64;
        for host in &model.hosts {
            offsets.push(total);
            if host.kind != HostKind::Trap {
                total += u64::from(host.pages);
            }
        }
        let mut reach = Reach {
            offsets,
            seen: vec![false; total as usize],
            trap_seen: HashSet::new(),
            touched: vec![false; model.hosts.len()],
            order: Vec::new(),
            obey,
            // Without a depth limit the trap is never entered (it has no end).
            trap: model.trap,
            limit: max_depth.unwrap_or(u32::MAX),
        };
        let enter_trap = max_depth.is_some();
        for host in model.seed_hosts() {
            reach.visit(model, Link { host, page: 0 }, 0, enter_trap);
        }
        let mut head = 0;
        // Bounded: each page enters `order` at most once, and the trap only to the depth.
        while let Some(&(link, depth)) = reach.order.get(head) {
            head += 1;
            let Some(next) = depth.checked_add(1).filter(|&d| d <= reach.limit) else { continue };
            for_each_link(model, link.host, link.page, |l| reach.visit(model, l, next, enter_trap));
        }
        reach
    }

    fn visit(&mut self, model: &Model, link: Link, depth: u32, enter_trap: bool) {
        let is_trap = Some(link.host) == self.trap;
        if depth > self.limit || (is_trap && !enter_trap) || !self.mark(link, is_trap) {
            return;
        }
        self.touched[link.host as usize] = true;
        if self.fetchable(model, link) {
            self.order.push((link, depth));
        }
    }

    /// Marks `link` seen; false if it was already.
    fn mark(&mut self, link: Link, is_trap: bool) -> bool {
        if is_trap {
            return self.trap_seen.insert(link.page);
        }
        let slot = &mut self.seen[(self.offsets[link.host as usize] + u64::from(link.page)) as usize];
        !std::mem::replace(slot, true)
    }

    fn fetchable(&self, model: &Model, link: Link) -> bool {
        let host = model.host(link.host);
        host.kind.serves() && (!self.obey || allowed(host.robots, link.page))
    }

    /// Whether the crawl fetches `link`.
    pub(crate) fn fetches(&self, model: &Model, link: Link) -> bool {
        let seen = if Some(link.host) == self.trap {
            self.trap_seen.contains(&link.page)
        } else {
            link.page < model.host(link.host).pages
                && self.seen[(self.offsets[link.host as usize] + u64::from(link.page)) as usize]
        };
        seen && self.fetchable(model, link)
    }
}
