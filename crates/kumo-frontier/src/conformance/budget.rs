//! Checks of page budgets, for the backends that keep them (memory, embedded): a host and a
//! registrable domain queue their budget and no more, the rest reported, not marked seen.

use std::time::Duration;

use super::{SuiteConfig, done, lease_all, req};
use crate::{Budget, Frontier, HostPolicy, Politeness};

/// Runs the budget checks, each on a fresh backend from `make`.
pub async fn run_budgets<F, M>(make: M)
where
    F: Frontier,
    M: Fn(SuiteConfig) -> F,
{
    let suite = |per_host, per_domain| SuiteConfig {
        politeness: Politeness {
            default: HostPolicy { parallelism: 100, ..Default::default() },
            budget: Budget { per_host, per_domain },
            ..Default::default()
        },
        lease_ttl: Duration::from_secs(600),
    };
    a_host_queues_its_budget(&make(suite(2, 0))).await;
    a_domain_queues_its_budget(&make(suite(0, 3))).await;
}

/// A host queues its budget and no more; the rest is reported, not marked seen. Needs the
/// budget [`run_budgets`] gives it.
pub async fn a_host_queues_its_budget(f: &impl Frontier) {
    let urls =
        ["http://a.test/1", "http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1"];
    let r = f.push(urls.iter().map(|u| req(u, 0)).collect()).await.expect("push");
    assert_eq!((r.added, r.seen, r.budget), (3, 1, 1), "a.test takes 2, its third is over budget");
    for l in lease_all(f).await {
        done(f, l.id).await;
    }
    let again = f.push(vec![req("http://a.test/3", 0), req("http://a.test/1", 0)]).await.expect("push");
    assert_eq!(
        (again.added, again.seen, again.budget),
        (0, 1, 1),
        "over budget, not seen: counted as budget again"
    );
    let s = f.stats().await.expect("stats");
    assert_eq!((s.hosts_over_budget, s.domains_over_budget), (1, 0));
}

/// A registrable domain's hosts together queue its budget and no more. Needs the budget
/// [`run_budgets`] gives it.
pub async fn a_domain_queues_its_budget(f: &impl Frontier) {
    let urls = [
        "http://a.farm.test/",
        "http://b.farm.test/",
        "http://c.farm.test/",
        "http://d.farm.test/",
        "http://www.other.test/",
    ];
    let r = f.push(urls.iter().map(|u| req(u, 0)).collect()).await.expect("push");
    assert_eq!((r.added, r.budget), (4, 1), "farm.test's hosts take 3 together");
    assert_eq!(f.stats().await.expect("stats").domains_over_budget, 1);
}
