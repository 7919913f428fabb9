//! What a crawl with page budgets should have fetched, judged from what it did fetch: every
//! link of a fetched page is followed unless its target cannot be (a dead name, robots.txt)
//! or its host or registrable domain has its budget's worth of pages. Budgets make a crawl's
//! pages depend on its order, so no breadth-first truth can list them; this check holds for
//! every order. A budget counts pages as they are queued, so a linked page that robots.txt
//! then refuses may have taken a place: the check counts those toward a budget too.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::WebTruth;
use super::links::{Link, allowed, for_each_link, parse_path};

/// Page budgets as a crawl was given them (`None`: no budget).
#[derive(Clone, Copy, Debug, Default)]
pub struct PageBudgets {
    /// The most pages of one host.
    pub per_host: Option<usize>,
    /// The most pages of one registrable domain.
    pub per_domain: Option<usize>,
}

/// How a crawl's pages measure against [`WebTruth::closure`].
#[derive(Debug, Default)]
pub struct Closure {
    /// Linked pages the crawl should have fetched and did not (a few examples, and the count).
    pub missed: Vec<String>,
    /// How many linked pages were missed (`missed` holds at most five).
    pub missed_count: usize,
    /// Fetched URLs that are no page of the web.
    pub strangers: Vec<String>,
    /// Hosts and domains with more pages than their budget.
    pub over_budget: Vec<String>,
    /// Hosts and domains that used up their budget.
    pub budgets_used: usize,
    /// The names the fetched pages link to (the seeds' included).
    pub linked_hosts: HashSet<String>,
}

impl Closure {
    /// Whether the crawl passes: nothing missed, no stranger, no budget overrun.
    pub fn holds(&self) -> bool {
        self.missed_count == 0 && self.strangers.is_empty() && self.over_budget.is_empty()
    }
}

impl std::fmt::Display for Closure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first = |v: &[String]| v.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        writeln!(f, "{} linked pages missed: {}", self.missed_count, first(&self.missed))?;
        writeln!(f, "{} fetched URLs of no page: {}", self.strangers.len(), first(&self.strangers))?;
        writeln!(f, "{} over budget: {}", self.over_budget.len(), first(&self.over_budget))?;
        write!(f, "{} budgets used up, {} names linked", self.budgets_used, self.linked_hosts.len())
    }
}

impl WebTruth {
    /// Judges the set of page URLs a crawl fetched (seeds included, robots.txt not) against
    /// the links of those pages and `budgets`.
    pub fn closure(&self, fetched: &HashSet<String>, budgets: PageBudgets) -> Closure {
        let model = &self.model;
        let mut out = Closure::default();
        let mut pages = HashSet::new();
        let mut per_host: HashMap<u32, usize> = HashMap::new();
        let mut per_domain: HashMap<&str, usize> = HashMap::new();
        for url in fetched {
            match self.link_of(url) {
                Some(link) => {
                    pages.insert(link);
                    *per_host.entry(link.host).or_default() += 1;
                    *per_domain.entry(&model.host(link.host).domain).or_default() += 1;
                }
                None => out.strangers.push(url.clone()),
            }
        }
        // The refused pages the fetched ones link to, by host and domain: each may have been
        // queued, and counted, before robots.txt refused it.
        let mut refused_links = HashSet::new();
        for l in &pages {
            for_each_link(model, l.host, l.page, |t| {
                let host = model.host(t.host);
                if host.kind.serves() && !allowed(host.robots, t.page) {
                    refused_links.insert(t);
                }
            });
        }
        let mut refused_host: HashMap<u32, usize> = HashMap::new();
        let mut refused_domain: HashMap<&str, usize> = HashMap::new();
        for t in &refused_links {
            *refused_host.entry(t.host).or_default() += 1;
            *refused_domain.entry(&model.host(t.host).domain).or_default() += 1;
        }
        let full = |n: usize, budget: Option<usize>| budget.is_some_and(|b| n >= b);
        let over = |n: usize, budget: Option<usize>| budget.is_some_and(|b| n > b);
        for (&host, &n) in &per_host {
            if over(n, budgets.per_host) {
                out.over_budget.push(format!("{}: {n} pages", model.host(host).name));
            }
            out.budgets_used += usize::from(full(n, budgets.per_host));
        }
        for (&domain, &n) in &per_domain {
            if over(n, budgets.per_domain) {
                out.over_budget.push(format!("{domain}: {n} pages"));
            }
            out.budgets_used += usize::from(full(n, budgets.per_domain));
        }
        let count = |fetched: Option<&usize>, refused: Option<&usize>| {
            fetched.copied().unwrap_or(0) + refused.copied().unwrap_or(0)
        };
        let excused = |link: Link| {
            let host = model.host(link.host);
            let domain = host.domain.as_str();
            !host.kind.serves()
                || !allowed(host.robots, link.page)
                || full(count(per_host.get(&link.host), refused_host.get(&link.host)), budgets.per_host)
                || full(count(per_domain.get(domain), refused_domain.get(domain)), budgets.per_domain)
        };
        let mut missed = BTreeSet::new();
        let seeds = model.seed_hosts().map(|host| Link { host, page: 0 });
        let linked = pages.iter().flat_map(|l| {
            let mut links = Vec::new();
            for_each_link(model, l.host, l.page, |t| links.push(t));
            links
        });
        let mut linked_hosts = HashSet::new();
        for link in seeds.chain(linked) {
            linked_hosts.insert(link.host);
            if !pages.contains(&link) && !excused(link) && missed.insert(link) {
                out.missed_count += 1;
            }
        }
        out.missed = missed.into_iter().take(5).map(|l| self.page_url(l)).collect();
        out.linked_hosts = linked_hosts.into_iter().map(|h| model.host(h).name.clone()).collect();
        out
    }

    /// The page `url` (`http://HOST:PORT/PATH`) names, if the web serves it.
    fn link_of(&self, url: &str) -> Option<Link> {
        let rest = url.strip_prefix("http://")?;
        let (authority, path) = rest.split_at(rest.find('/')?);
        let name = authority.split(':').next()?;
        let host = self.model.id(name)?;
        let page = parse_path(&self.model, host, path)?;
        Some(Link { host, page })
    }
}
