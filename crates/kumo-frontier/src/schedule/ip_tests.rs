//! Tests of politeness per IP address: hosts resolved before their first lease, an address's
//! slots and gap shared by every name on it, parked hosts never starved.

use std::net::{IpAddr, Ipv4Addr};

use super::tests::{lease, push};
use super::*;
use crate::IpPolicy;

fn table(parallelism: u32, delay: Duration) -> HostTable {
    let politeness = Politeness {
        default: HostPolicy { parallelism: 100, ..Default::default() },
        rules: vec![],
        per_ip: Some(IpPolicy { parallelism, delay }),
        ..Default::default()
    };
    HostTable::new(politeness, Duration::from_secs(600), usize::MAX)
}

fn hosts(leases: &[Lease]) -> Vec<String> {
    let mut h: Vec<String> = leases.iter().map(|l| l.request.url.host_str().unwrap().to_string()).collect();
    h.sort();
    h
}

fn ip(last: u8) -> Option<IpAddr> {
    Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
}

/// Resolves every host handed out: `a.test` and `b.test` share one address, `c.test` has
/// its own.
fn resolve_all(t: &mut HostTable, now: Instant) {
    for host in t.take_unresolved(100) {
        let addr = if &*host == "c.test" { ip(3) } else { ip(1) };
        t.resolved(&host, addr, now);
    }
}

#[test]
fn a_host_is_resolved_before_its_first_lease() {
    let mut t = table(1, Duration::ZERO);
    let t0 = Instant::now();
    push(&mut t, "http://a.test/1", t0);
    assert!(lease(&mut t, t0).is_empty(), "its address is not known yet");
    assert_eq!(t.readiness(t0), Readiness::Blocked);
    assert!(t.resolving());
    let asked = t.take_unresolved(10);
    assert_eq!(asked.iter().map(|h| h.to_string()).collect::<Vec<_>>(), ["a.test"]);
    assert!(t.take_unresolved(10).is_empty(), "handed out once");
    t.resolved("a.test", ip(1), t0);
    assert!(!t.resolving());
    assert_eq!(hosts(&lease(&mut t, t0)), ["a.test"]);
    assert_eq!(t.addresses(), 1);
}

#[test]
fn names_on_one_address_share_its_slots() {
    let mut t = table(1, Duration::ZERO);
    let t0 = Instant::now();
    for h in ["a", "b", "c"] {
        push(&mut t, &format!("http://{h}.test/1"), t0);
        push(&mut t, &format!("http://{h}.test/2"), t0);
    }
    resolve_all(&mut t, t0);
    let first = lease(&mut t, t0);
    assert_eq!(first.len(), 2, "one per address: {:?}", hosts(&first));
    assert!(hosts(&first).contains(&"c.test".to_string()));
    assert!(lease(&mut t, t0).is_empty(), "both addresses are full");
    assert_eq!(t.readiness(t0), Readiness::Blocked, "only a request coming back frees one");
    // Whichever of a and b went, its address frees when it comes back.
    let shared = first.iter().find(|l| l.request.url.host_str() != Some("c.test")).unwrap();
    t.release(shared.id, t0);
    assert_eq!(lease(&mut t, t0).len(), 1, "the next name on the shared address");
}

#[test]
fn an_address_gap_spaces_the_starts_of_all_its_names() {
    let s = Duration::from_secs;
    let mut t = table(0, s(1));
    let t0 = Instant::now();
    for h in ["a", "b"] {
        push(&mut t, &format!("http://{h}.test/1"), t0);
    }
    resolve_all(&mut t, t0);
    assert_eq!(lease(&mut t, t0).len(), 1, "one start per gap");
    // The gap has the hosts' margin: 5 % of the delay, at most 20 ms.
    let gap = s(1) + Duration::from_millis(20);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + gap));
    assert!(lease(&mut t, t0 + s(1)).is_empty(), "not before the gap ends");
    assert_eq!(lease(&mut t, t0 + gap).len(), 1);
}

#[test]
fn a_host_scheduled_again_while_parked_does_not_strand_the_others() {
    let mut t = table(1, Duration::ZERO);
    let t0 = Instant::now();
    for h in ["a", "b"] {
        push(&mut t, &format!("http://{h}.test/1"), t0);
    }
    push(&mut t, "http://a.test/2", t0);
    resolve_all(&mut t, t0);
    let first = lease(&mut t, t0);
    assert_eq!(first.len(), 1);
    // Both the other host and (if a went first) a's second request wait on the address; a
    // new request re-schedules the waiting host, leaving a stale entry where it was parked.
    push(&mut t, "http://b.test/2", t0);
    assert!(lease(&mut t, t0).is_empty());
    let mut done = 0;
    let mut out = first;
    // Every request goes, one at a time, each freeing the address for the next.
    for _ in 0..10 {
        let Some(l) = out.pop() else { break };
        t.release(l.id, t0);
        done += 1;
        out = lease(&mut t, t0);
        assert!(out.len() <= 1, "one in flight to the address");
    }
    assert_eq!(done, 4, "all four requests went");
    assert_eq!(t.readiness(t0), Readiness::Empty, "nothing queued: what is out only waits to be completed");
}

#[test]
fn a_name_without_an_address_is_not_gated() {
    let mut t = table(1, Duration::ZERO);
    let t0 = Instant::now();
    push(&mut t, "http://gone.test/1", t0);
    push(&mut t, "http://gone.test/2", t0);
    for host in t.take_unresolved(10) {
        t.resolved(&host, None, t0);
    }
    assert_eq!(lease(&mut t, t0).len(), 2, "both go (and fail as dns when fetched)");
}

#[test]
fn a_resumed_host_charges_its_last_lease_to_its_address() {
    let s = Duration::from_secs;
    let mut t = table(0, s(2));
    let t0 = Instant::now();
    push(&mut t, "http://a.test/1", t0);
    let a = t.host_index("a.test").unwrap();
    // As an earlier run left it: leased just now, no delay of its own.
    t.restore_pacing(a, Duration::ZERO, None, t0, Some(t0));
    resolve_all(&mut t, t0);
    assert!(lease(&mut t, t0 + s(3)).is_empty(), "two address gaps from its last lease");
    assert_eq!(lease(&mut t, t0 + s(5)).len(), 1);
}
