//! Page budgets per host and per registrable domain (`max_pages_per_host`,
//! `max_pages_per_domain`): counted as pages are queued, so a host or domain that has used
//! its budget queues nothing more. Without a budget, nothing is counted and nothing costs.

use std::sync::Arc;

use super::HostTable;
use crate::scope::registrable_domain;

/// A host's domain index when no budget is kept per domain.
pub(super) const NO_DOMAIN: u32 = u32::MAX;

impl HostTable {
    /// The domain index of a new host `key`, made on first sight (with a budget per domain).
    pub(super) fn domain_of(&mut self, key: &str) -> u32 {
        if self.budget.per_domain == 0 {
            return NO_DOMAIN;
        }
        let domain = registrable_domain(crate::bare_host(key));
        if let Some(&id) = self.domain_ids.get(domain) {
            return id;
        }
        let id = self.domain_pages.len() as u32;
        self.domain_pages.push(0);
        self.domain_ids.insert(Arc::from(domain), id);
        id
    }

    /// Whether the crawl keeps page budgets.
    pub fn has_budget(&self) -> bool {
        self.budget.is_on()
    }

    /// Counts one more page of `host_key` against its host's and domain's budgets, or says
    /// it is over one of them (nothing is counted then). Always true without budgets.
    pub fn admit(&mut self, host_key: &str, now: std::time::Instant) -> bool {
        if !self.budget.is_on() {
            return true;
        }
        // A host is made only for a page it queues: a durable backend keeps a record of every
        // host it knows.
        if self.host_ids.get(host_key, &self.hosts).is_none() && self.per_domain_full(host_key) {
            return false;
        }
        let (i, _) = self.host_for(host_key, now);
        let (per_host, per_domain) = (self.budget.per_host, self.budget.per_domain);
        let h = &self.hosts[i];
        let domain = h.domain;
        let domain_full = per_domain > 0 && self.domain_pages[domain as usize] >= per_domain;
        if (per_host > 0 && h.admitted >= per_host) || domain_full {
            return false;
        }
        self.count(i, 1);
        true
    }

    /// Whether the registrable domain of a host not yet known has used its budget.
    fn per_domain_full(&self, host_key: &str) -> bool {
        let per_domain = self.budget.per_domain;
        let domain = registrable_domain(crate::bare_host(host_key));
        per_domain > 0
            && self.domain_ids.get(domain).is_some_and(|&d| self.domain_pages[d as usize] >= per_domain)
    }

    /// Takes back a page [`HostTable::admit`] counted that was not queued after all (seen in
    /// the same batch).
    pub fn unadmit(&mut self, host_key: &str, now: std::time::Instant) {
        if self.budget.is_on() {
            let (i, _) = self.host_for(host_key, now);
            self.count(i, -1);
        }
    }

    /// Restores a host's count from an earlier run.
    pub fn restore_admitted(&mut self, i: usize, pages: u64) {
        if self.budget.is_on() && pages > 0 {
            self.hosts[i].admitted = 0;
            self.count(i, pages as i64);
        }
    }

    fn count(&mut self, i: usize, by: i64) {
        let h = &mut self.hosts[i];
        h.admitted = h.admitted.saturating_add_signed(by);
        if h.domain != NO_DOMAIN {
            let d = &mut self.domain_pages[h.domain as usize];
            *d = d.saturating_add_signed(by);
        }
        // Its count is kept with its pacing, at the next commit.
        if !h.pacing_dirty {
            h.pacing_dirty = true;
            self.paced_dirty.push(i);
        }
    }

    /// Hosts and domains that have used their budget.
    pub fn budgets_used(&self) -> (usize, usize) {
        let (per_host, per_domain) = (self.budget.per_host, self.budget.per_domain);
        let hosts =
            if per_host == 0 { 0 } else { self.hosts.iter().filter(|h| h.admitted >= per_host).count() };
        let domains =
            if per_domain == 0 { 0 } else { self.domain_pages.iter().filter(|&&n| n >= per_domain).count() };
        (hosts, domains)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::{Budget, Politeness};

    fn table(per_host: u64, per_domain: u64) -> HostTable {
        let politeness = Politeness { budget: Budget { per_host, per_domain }, ..Default::default() };
        HostTable::new(politeness, Duration::from_secs(600), usize::MAX)
    }

    #[test]
    fn a_host_queues_its_budget_and_no_more() {
        let mut t = table(2, 0);
        let now = Instant::now();
        let took: Vec<bool> = (0..4).map(|_| t.admit("a.test", now)).collect();
        assert_eq!(took, [true, true, false, false]);
        assert!(t.admit("b.test", now), "another host has its own");
        assert_eq!(t.budgets_used(), (1, 0));
        t.unadmit("a.test", now);
        assert!(t.admit("a.test", now), "a page taken back frees its place");
    }

    #[test]
    fn a_domain_shares_its_budget_among_its_hosts() {
        let mut t = table(0, 3);
        let now = Instant::now();
        let took: Vec<bool> = ["a.farm.test", "b.farm.test", "c.farm.test", "d.farm.test", "a.farm.test"]
            .iter()
            .map(|h| t.admit(h, now))
            .collect();
        assert_eq!(took, [true, true, true, false, false]);
        assert!(t.admit("www.other.test", now));
        assert_eq!(t.budgets_used(), (0, 1));
        assert!(t.host_index("d.farm.test").is_none(), "a host over budget from its first link is not made");
    }

    #[test]
    fn counts_come_back_from_an_earlier_run() {
        let mut t = table(3, 4);
        let now = Instant::now();
        let (i, _) = t.host_for("a.d.test", now);
        t.restore_admitted(i, 3);
        assert!(!t.admit("a.d.test", now), "its budget was used before the restart");
        assert!(t.admit("b.d.test", now), "its domain has one page left");
        assert!(!t.admit("c.d.test", now));
        assert_eq!(t.pacing(i).admitted, 3, "kept with its pacing");
    }

    #[test]
    fn without_a_budget_nothing_is_counted() {
        let mut t = table(0, 0);
        let now = Instant::now();
        assert!((0..100).all(|_| t.admit("a.test", now)));
        assert_eq!(t.hosts(), 0, "no host made, nothing counted");
    }
}
