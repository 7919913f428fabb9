//! Politeness judged offline from the server's request log: every gap and overlap is read off
//! the logged intervals on one clock, so no live counter races across connections.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use super::links::{Link, allowed, parse_path};
use super::truth::Reach;
use super::{WebHit, WebTruth};

/// Examples kept per kind of violation.
const EXAMPLES: usize = 5;

/// The rules a crawl promised to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// The least gap between two request starts to one host; a host's `Crawl-delay`, when
    /// longer, holds from its robots.txt fetch on.
    pub host_delay: Duration,
    /// Requests in flight to one host, at most.
    pub per_host: usize,
    /// Requests in flight to one address, at most.
    pub per_ip: usize,
    /// The least gap between two request starts to one address.
    pub ip_delay: Duration,
    /// The crawl's depth limit: a page beyond it is a request outside the truth.
    pub max_depth: Option<u32>,
    /// How much shorter than the rule a gap may be: the crawler measures its starts on its own
    /// clock, the server sees them after the loopback's and the scheduler's jitter.
    pub tolerance: Duration,
}

impl Default for Rules {
    /// One request per host at a time, no delays, no limit per address or on depth, 2 ms of
    /// tolerance.
    fn default() -> Self {
        Rules {
            host_delay: Duration::ZERO,
            per_host: 1,
            per_ip: usize::MAX,
            ip_delay: Duration::ZERO,
            max_depth: None,
            tolerance: Duration::from_millis(2),
        }
    }
}

/// How often one rule was broken, with a few examples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Times the rule was broken.
    pub count: usize,
    /// The first few breaches, described.
    pub examples: Vec<String>,
}

impl Tally {
    fn add(&mut self, example: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(example());
        }
    }
}

/// What the request log says a crawl did wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violations {
    /// Requests judged.
    pub requests: usize,
    /// Two starts on one host closer than `host_delay` (or its Crawl-delay).
    pub host_gap: Tally,
    /// A request that arrived while `per_host` others to its host were in flight.
    pub host_overlap: Tally,
    /// Two starts on one address closer than `ip_delay`.
    pub ip_gap: Tally,
    /// A request that arrived while `per_ip` others to its address were in flight.
    pub ip_overlap: Tally,
    /// A page robots.txt forbids (a 5xx robots.txt forbids every page).
    pub disallowed: Tally,
    /// A request that arrived at an address its `Host` does not resolve to.
    pub misrouted: Tally,
    /// A request naming a host that refuses connections or fails DNS.
    pub dead_names: Tally,
    /// A request for an unknown host or path, a page beyond the depth limit or not linked
    /// from what the crawl fetched, or robots.txt of a host the crawl had no business with.
    pub outside: Tally,
    /// Requests to the trap host when [`Rules::max_depth`] is `None` (the truth then leaves
    /// the endless trap out): not violations, but a crawler's trap defences should keep this
    /// small.
    pub trap: usize,
}

impl Violations {
    /// No rule broken (trap requests are not counted).
    pub fn is_clean(&self) -> bool {
        self.kinds().iter().all(|(_, t)| t.count == 0)
    }

    fn kinds(&self) -> [(&'static str, &Tally); 8] {
        [
            ("host gaps too short", &self.host_gap),
            ("host overlaps", &self.host_overlap),
            ("address gaps too short", &self.ip_gap),
            ("address overlaps", &self.ip_overlap),
            ("disallowed", &self.disallowed),
            ("misrouted", &self.misrouted),
            ("dead names", &self.dead_names),
            ("outside the truth", &self.outside),
        ]
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} requests ({} to the trap)", self.requests, self.trap)?;
        if self.is_clean() {
            return write!(f, ": no violations");
        }
        for (label, tally) in self.kinds().into_iter().filter(|(_, t)| t.count > 0) {
            write!(f, "\n  {} {label}, e.g. {}", tally.count, tally.examples.join("; "))?;
        }
        Ok(())
    }
}

pub(crate) fn judge(truth: &WebTruth, log: &[WebHit], rules: &Rules) -> Violations {
    let reach = Reach::new(&truth.model, rules.max_depth, true);
    let mut v = Violations { requests: log.len(), ..Violations::default() };
    for hit in log {
        classify(truth, &reach, rules, hit, &mut v);
    }

    let mut by_host: HashMap<&str, Vec<&WebHit>> = HashMap::new();
    let mut by_ip: HashMap<IpAddr, Vec<&WebHit>> = HashMap::new();
    for hit in log {
        by_host.entry(&hit.host).or_default().push(hit);
        by_ip.entry(hit.local_ip).or_default().push(hit);
    }
    for (name, mut hits) in by_host {
        hits.sort_by_key(|h| (h.arrived, h.finished));
        let crawl_delay = truth.host(name).and_then(|h| h.robots.crawl_delay()).unwrap_or_default();
        let mut robots_seen = false;
        gaps(&hits, &mut v.host_gap, rules.tolerance, |prev| {
            robots_seen |= prev.path == "/robots.txt";
            if robots_seen { rules.host_delay.max(crawl_delay) } else { rules.host_delay }
        });
        overlaps(&hits, rules.per_host, &mut v.host_overlap);
    }
    for (_, mut hits) in by_ip {
        hits.sort_by_key(|h| (h.arrived, h.finished));
        gaps(&hits, &mut v.ip_gap, rules.tolerance, |_| rules.ip_delay);
        overlaps(&hits, rules.per_ip, &mut v.ip_overlap);
    }
    v
}

/// The request-by-request checks: names, addresses, robots.txt and the truth.
fn classify(truth: &WebTruth, reach: &Reach, rules: &Rules, hit: &WebHit, v: &mut Violations) {
    let model = &truth.model;
    let at = || format!("{}{} at {:?}", hit.host, hit.path, hit.arrived);
    let Some(id) = model.id(&hit.host) else {
        v.outside.add(|| format!("{} (unknown host)", at()));
        return;
    };
    let host = model.host(id);
    if !host.kind.serves() {
        v.dead_names.add(|| format!("{} ({:?})", at(), host.kind));
        return;
    }
    if host.addr.map(IpAddr::V4) != Some(hit.local_ip) {
        v.misrouted.add(|| format!("{} on {} (resolves to {:?})", at(), hit.local_ip, host.addr));
    }
    if Some(id) == model.trap && rules.max_depth.is_none() {
        v.trap += 1;
        return;
    }
    let path = hit.path.split('?').next().unwrap_or_default();
    if path == "/robots.txt" {
        if !reach.touched[id as usize] {
            v.outside.add(|| format!("{} (no page of the host within reach)", at()));
        }
        return;
    }
    match parse_path(model, id, path) {
        None => v.outside.add(|| format!("{} (no such page)", at())),
        Some(k) if !allowed(host.robots, k) => v.disallowed.add(|| format!("{} ({:?})", at(), host.robots)),
        Some(k) if !reach.fetches(model, Link { host: id, page: k }) => {
            v.outside.add(|| format!("{} (not reached within the depth)", at()));
        }
        Some(_) => {}
    }
}

/// Counts consecutive starts (`hits` sorted by arrival) closer than `required(earlier)`.
fn gaps(
    hits: &[&WebHit],
    tally: &mut Tally,
    tolerance: Duration,
    mut required: impl FnMut(&WebHit) -> Duration,
) {
    for pair in hits.windows(2) {
        let (prev, cur) = (pair[0], pair[1]);
        let need = required(prev);
        let gap = cur.arrived - prev.arrived;
        if gap + tolerance < need {
            tally.add(|| {
                format!("{}{} {gap:?} after {}{} (needs {need:?})", cur.host, cur.path, prev.host, prev.path)
            });
        }
    }
}

/// Counts requests (sorted by arrival) that arrived while `limit` others were in flight: a
/// request is in flight from its arrival until it finished, and one that finished at the
/// instant another arrived no longer counts.
fn overlaps(hits: &[&WebHit], limit: usize, tally: &mut Tally) {
    let mut finishing = BinaryHeap::new();
    for hit in hits {
        while finishing.peek().is_some_and(|&Reverse(end)| end <= hit.arrived) {
            finishing.pop();
        }
        if finishing.len() >= limit {
            let busy = finishing.len();
            tally.add(|| {
                format!(
                    "{}{} on {} at {:?} with {busy} in flight",
                    hit.host, hit.path, hit.local_ip, hit.arrived
                )
            });
        }
        finishing.push(Reverse(hit.finished));
    }
}
