//! The resolver's parts without a name server: the cache's slots and bound, the TTL bounds,
//! the settings it refuses, and answers that need no query (overrides, IP literals).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cache::{Answer, Cache, Failure, Found};
use super::*;

fn found(last: u8, expires: Instant) -> Answer {
    Answer { outcome: Ok(Arc::from([IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))])), expires }
}

/// The slot `host` gets; panics on a standing answer.
fn slot(cache: &Cache, host: &str, now: Instant) -> cache::Flight {
    match cache.find(host, now) {
        Found::Flight(slot) => slot,
        Found::Fresh(answer) => panic!("{host}: a standing answer {answer:?}"),
    }
}

#[test]
fn a_slot_is_shared_until_filled_then_answers_until_it_expires() {
    let cache = Cache::new(8);
    let now = Instant::now();
    let first = slot(&cache, "a.test", now);
    let second = slot(&cache, "a.test", now);
    assert!(Arc::ptr_eq(&first, &second), "a lookup under way is joined, not repeated");
    first.set(found(2, now + Duration::from_secs(10))).unwrap();

    let Found::Fresh(answer) = cache.find("a.test", now + Duration::from_secs(9)) else {
        panic!("the answer stands within its time");
    };
    assert_eq!(answer.outcome.unwrap()[0], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
    // At its expiry, a new slot replaces it; whoever holds the old one still reads it.
    let renewed = slot(&cache, "a.test", now + Duration::from_secs(10));
    assert!(!Arc::ptr_eq(&renewed, &first) && renewed.get().is_none());
    assert!(first.get().is_some());
    assert_eq!(cache.len(), 1);
}

#[test]
fn a_full_cache_drops_expired_and_abandoned_slots_first_then_the_soonest_to_expire() {
    let cache = Cache::new(8);
    let now = Instant::now();
    let in_flight = slot(&cache, "busy.test", now);
    drop(slot(&cache, "abandoned.test", now));
    slot(&cache, "expired.test", now).set(found(1, now + Duration::from_secs(1))).unwrap();
    for i in 0..5u8 {
        let expires = now + Duration::from_secs(100 + u64::from(i));
        slot(&cache, &format!("n{i}.test"), now).set(found(i, expires)).unwrap();
    }
    assert_eq!(cache.len(), 8);

    // Full: the sweep frees an eighth (one slot) and more where it costs nothing.
    let later = now + Duration::from_secs(50);
    let _new = slot(&cache, "new.test", later);
    assert_eq!(cache.len(), 7, "busy, n0..n4, new");
    for i in 0..5u8 {
        assert!(matches!(cache.find(&format!("n{i}.test"), later), Found::Fresh(_)), "n{i} kept");
    }
    assert!(Arc::ptr_eq(&slot(&cache, "busy.test", later), &in_flight), "a lookup under way is kept");

    // Full again with answers that all stand: the one closest to expiry goes.
    let _more = slot(&cache, "more.test", later);
    assert_eq!(cache.len(), 8);
    let _last = slot(&cache, "last.test", later);
    assert_eq!(cache.len(), 8);
    assert!(matches!(cache.find("n0.test", later), Found::Flight(_)), "n0 expired soonest: dropped");
}

#[test]
fn a_failure_is_kept_like_an_answer() {
    let cache = Cache::new(4);
    let now = Instant::now();
    let failure = Failure { kind: DnsErrorKind::Timeout, detail: Arc::from("slow") };
    let answer = Answer { outcome: Err(failure), expires: now + Duration::from_secs(30) };
    slot(&cache, "slow.test", now).set(answer).unwrap();
    let Found::Fresh(kept) = cache.find("slow.test", now + Duration::from_secs(29)) else {
        panic!("the failure stands for its back-off");
    };
    assert_eq!(kept.outcome.unwrap_err().kind, DnsErrorKind::Timeout);
    assert!(matches!(cache.find("slow.test", now + Duration::from_secs(30)), Found::Flight(_)));
}

#[test]
fn ttls_are_kept_within_their_bounds() {
    let cfg = DnsConfig::default();
    let secs = Duration::from_secs;
    assert_eq!(keep_found(&cfg, secs(10)), secs(300), "the floor");
    assert_eq!(keep_found(&cfg, secs(3600)), secs(3600));
    assert_eq!(keep_found(&cfg, secs(86_400)), secs(6 * 3600), "the ceiling");
    assert_eq!(keep_missing(&cfg, Some(5)), secs(60));
    assert_eq!(keep_missing(&cfg, Some(600)), secs(600), "the SOA's negative TTL");
    assert_eq!(keep_missing(&cfg, Some(u32::MAX)), secs(3600));
    assert_eq!(keep_missing(&cfg, None), secs(60), "no SOA: the least");
}

#[test]
fn settings_it_cannot_work_with_are_refused() {
    let refused = |cfg: DnsConfig| DnsResolver::new(cfg).unwrap_err().to_string();
    let base = || DnsConfig { servers: vec![SocketAddr::from(([127, 0, 0, 1], 53))], ..DnsConfig::default() };
    assert!(refused(DnsConfig { timeout: Duration::ZERO, ..base() }).contains("timeouts"));
    let cfg = DnsConfig { min_ttl: Duration::from_secs(7200), max_ttl: Duration::from_secs(3600), ..base() };
    assert!(refused(cfg).contains("least TTL"));
    let cfg =
        DnsConfig { negative_min_ttl: Duration::from_secs(2), negative_max_ttl: Duration::ZERO, ..base() };
    assert!(refused(cfg).contains("negative"));
    assert!(refused(DnsConfig { max_in_flight: 0, ..base() }).contains("in flight"));
    assert!(refused(DnsConfig { max_in_flight: usize::MAX, ..base() }).contains("in flight"));
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    assert!(refused(DnsConfig { overrides: vec![(".".into(), ip)], ..base() }).contains("override"));
}

#[test]
fn host_names_are_keyed_in_lower_case_without_the_root_dot() {
    assert_eq!(normal("Shop.Kumo.TEST."), "shop.kumo.test");
    assert_eq!(normal("shop.kumo.test"), "shop.kumo.test");
}

/// Built from the system's configuration (resolv.conf), overrides and IP literals are answered
/// without a query: nothing here leaves the machine.
#[tokio::test]
async fn overrides_and_ip_literals_need_no_query() {
    let pinned = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9));
    let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10));
    let cfg = DnsConfig {
        overrides: vec![("Pinned.Test.".into(), pinned), ("pinned.test".into(), other)],
        ..DnsConfig::default()
    };
    let resolver = DnsResolver::new(cfg).expect("the system's DNS configuration");
    assert_eq!(&*resolver.lookup("PINNED.test").await.unwrap(), [pinned, other]);
    assert_eq!(&*resolver.lookup("127.0.0.5").await.unwrap(), [IpAddr::V4(Ipv4Addr::new(127, 0, 0, 5))]);
    assert_eq!(&*resolver.lookup("[::1]").await.unwrap(), [IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])]);

    // As reqwest's resolver: port 0, for reqwest to fill in.
    let name: reqwest::dns::Name = "pinned.test".parse().unwrap();
    let addrs: Vec<SocketAddr> = Resolve::resolve(&resolver, name).await.unwrap().collect();
    assert_eq!(addrs, [SocketAddr::new(pinned, 0), SocketAddr::new(other, 0)]);

    let figures = resolver.snapshot();
    assert_eq!((figures.lookups, figures.overridden, figures.queries), (2, 2, 0), "{figures:?}");
    assert_eq!((figures.entries, figures.in_flight), (0, 0));
}
