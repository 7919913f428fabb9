//! Checks of politeness per IP address, for the backends that keep it (memory, embedded):
//! hosts are handed out to be resolved before their first lease, and the names on one address
//! share its slots and its gap.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use super::{SuiteConfig, done, lease_all, req};
use crate::{Frontier, HostPolicy, IpPolicy, Politeness, Readiness};

const IP_DELAY: Duration = Duration::from_millis(150);

/// Runs the per-IP checks, each on a fresh backend from `make`.
pub async fn run_per_ip<F, M>(make: M)
where
    F: Frontier,
    M: Fn(SuiteConfig) -> F,
{
    let suite = |ip: IpPolicy| SuiteConfig {
        politeness: Politeness {
            default: HostPolicy { parallelism: 10, ..Default::default() },
            rules: vec![],
            per_ip: Some(ip),
            ..Default::default()
        },
        lease_ttl: Duration::from_secs(600),
    };
    names_on_one_address_share_its_slot(&make(suite(IpPolicy { parallelism: 1, delay: Duration::ZERO })))
        .await;
    an_address_spaces_its_names(&make(suite(IpPolicy { parallelism: 0, delay: IP_DELAY }))).await;
}

/// Answers every host handed out to be resolved: `c.test` on an address of its own, the
/// others on one shared address.
async fn resolve_all(f: &impl Frontier) {
    for host in f.unresolved(100).await.expect("unresolved") {
        let last = if host == "c.test" { 3 } else { 1 };
        let addr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, last));
        f.resolved(&host, Some(addr)).await.expect("resolved");
    }
}

/// No host goes before its address is known, and names on one address share its slot. Needs
/// the per-IP policy [`run_per_ip`] gives it.
pub async fn names_on_one_address_share_its_slot(f: &impl Frontier) {
    let urls = ["http://a.test/1", "http://b.test/1", "http://c.test/1", "http://a.test/2"];
    f.push(urls.iter().map(|u| req(u, 0)).collect()).await.expect("push");
    assert!(lease_all(f).await.is_empty(), "no host goes before its address is known");
    resolve_all(f).await;
    assert!(f.unresolved(100).await.expect("unresolved").is_empty(), "each host is handed out once");
    let first = lease_all(f).await;
    assert_eq!(first.len(), 2, "one per address at --per-ip 1");
    assert!(first.iter().any(|l| l.request.url.host_str() == Some("c.test")));
    assert_eq!(f.readiness().await.expect("readiness"), Readiness::Blocked, "the shared address is full");
    let shared = first.iter().find(|l| l.request.url.host_str() != Some("c.test")).expect("a or b");
    let mut left = 2;
    let mut out = shared.id;
    // Each completion frees the shared address for the next of its names' requests.
    for _ in 0..4 {
        done(f, out).await;
        let next = lease_all(f).await;
        if left == 0 {
            assert!(next.is_empty());
            break;
        }
        assert_eq!(next.len(), 1, "one at a time on the shared address");
        out = next[0].id;
        left -= 1;
    }
    assert_eq!(left, 0, "a.test's and b.test's requests all went");
}

/// Names on one address wait out its gap. Needs the per-IP policy [`run_per_ip`] gives it.
pub async fn an_address_spaces_its_names(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://b.test/1", 0)]).await.expect("push");
    resolve_all(f).await;
    let start = Instant::now();
    let first = lease_all(f).await;
    assert_eq!(first.len(), 1, "one start per gap");
    let Readiness::At(at) = f.readiness().await.expect("readiness") else {
        panic!("the address waits for its gap")
    };
    assert!(at >= start + IP_DELAY, "the gap is the ip delay at least");
    // Bounded: the gap is 150 ms (and its margin); ten waits are ample.
    for _ in 0..10 {
        tokio::time::sleep_until(at.into()).await;
        if !lease_all(f).await.is_empty() {
            assert!(start.elapsed() >= IP_DELAY, "not before the gap ended");
            return;
        }
    }
    panic!("the second name never went");
}
