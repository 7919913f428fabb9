//! The conformance suite every [`Frontier`] backend must pass (memory, embedded, Redis).
//!
//! Call [`run_all`] from a backend's tests with a factory that builds a fresh, empty backend
//! for the given settings. Each check panics with a message naming the broken property.
//! Timing checks only assert lower bounds (a delay was at least honored), never upper ones.

use std::time::{Duration, Instant, SystemTime};

use kumo_core::{CanonicalOptions, DedupMode, ErrorKind, Fingerprint, Request, Url};

mod budget;
mod inspect;
mod per_ip;
mod rate_limits;

pub use budget::{a_domain_queues_its_budget, a_host_queues_its_budget, run_budgets};
pub use inspect::{failures_are_recorded, failures_are_requeued, host_queue_shows_what_goes_next};
pub use per_ip::{an_address_spaces_its_names, names_on_one_address_share_its_slot, run_per_ip};
pub use rate_limits::{rate_limited, rate_limits_per_host};

use crate::{
    Completion, FailureRecord, Frontier, HostAdjustment, HostPolicy, HostRule, LeaseId, Politeness, Readiness,
};

/// What a backend under test must be built with.
#[derive(Debug, Clone)]
pub struct SuiteConfig {
    /// The per-host rules.
    pub politeness: Politeness,
    /// How long a lease lasts before its request comes back.
    pub lease_ttl: Duration,
}

fn req(url: &str, priority: i32) -> (Fingerprint, Request) {
    let r = Request::get(Url::parse(url).expect("test URL")).with_priority(priority);
    (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
}

fn open_policy() -> Politeness {
    Politeness { default: HostPolicy { parallelism: 1000, ..Default::default() }, ..Default::default() }
}

fn cfg(politeness: Politeness) -> SuiteConfig {
    SuiteConfig { politeness, lease_ttl: Duration::from_secs(600) }
}

/// Runs every check, each on a fresh backend from `make`.
pub async fn run_all<F, M>(make: M)
where
    F: Frontier,
    M: Fn(SuiteConfig) -> F,
{
    dedup_on_push(&make(cfg(open_policy()))).await;
    priority_order(&make(cfg(open_policy()))).await;
    ack_drains(&make(cfg(open_policy()))).await;
    retry_returns_the_request(&make(cfg(open_policy()))).await;
    defer_keeps_the_retry_count(&make(cfg(open_policy()))).await;
    a_retry_waits_alone(&make(cfg(open_policy()))).await;
    adjust_host_pauses_and_slows(&make(cfg(open_policy()))).await;
    pauses_are_listed_capped_and_lifted(&make(cfg(open_policy()))).await;
    learned_delay_goes_down_and_up(&make(cfg(Politeness {
        default: HostPolicy { parallelism: 1000, ..Default::default() },
        rules: vec![
            HostRule::new(
                "ruled.test",
                HostPolicy { parallelism: 1000, delay: RULE_DELAY, ..Default::default() },
            )
            .expect("glob"),
        ],
        ..Default::default()
    })))
    .await;
    unknown_lease_is_an_error(&make(cfg(open_policy()))).await;
    failures_are_recorded(&make(cfg(open_policy()))).await;
    failures_are_requeued(&make(cfg(open_policy()))).await;
    host_queue_shows_what_goes_next(&make(cfg(open_policy()))).await;
    discoveries_are_seen_checked(&make(cfg(open_policy()))).await;
    parallelism_per_host(&make(cfg(Politeness {
        default: HostPolicy { parallelism: 1, ..Default::default() },
        ..Default::default()
    })))
    .await;
    released_leases_free_their_slot(&make(SuiteConfig {
        politeness: Politeness {
            default: HostPolicy { parallelism: 1, ..Default::default() },
            ..Default::default()
        },
        lease_ttl: Duration::from_millis(300),
    }))
    .await;
    delay_per_host(&make(cfg(Politeness {
        default: HostPolicy { parallelism: 4, ..Default::default() },
        rules: vec![
            HostRule::new(
                "slow.test",
                HostPolicy { parallelism: 1, delay: Duration::from_millis(150), ..Default::default() },
            )
            .expect("glob"),
        ],
        ..Default::default()
    })))
    .await;
    rate_limits_per_host(&make(cfg(rate_limited()))).await;
    expired_leases_come_back(&make(SuiteConfig {
        politeness: open_policy(),
        lease_ttl: Duration::from_millis(50),
    }))
    .await;
}

async fn lease_all(f: &impl Frontier) -> Vec<crate::Lease> {
    f.lease(10_000).await.expect("lease")
}

async fn done(f: &impl Frontier, id: LeaseId) {
    f.complete(vec![Completion::Done { lease: id, discovered: vec![], page: None }]).await.expect("complete");
}

/// A URL repeated within a push, or seen in an earlier one, is queued once.
pub async fn dedup_on_push(f: &impl Frontier) {
    let r = f.push(vec![req("http://a.test/1", 0), req("http://a.test/1#frag", 0)]).await.expect("push");
    assert_eq!((r.added, r.seen), (1, 1), "a repeated URL within one push is queued once");
    let r = f.push(vec![req("http://A.test:80/1", 0), req("http://a.test/2", 0)]).await.expect("push");
    assert_eq!((r.added, r.seen), (1, 1), "a URL seen in an earlier push is not queued again");
    assert_eq!(f.stats().await.expect("stats").queued, 2);
}

/// Leases go best priority first, first come first within a priority.
pub async fn priority_order(f: &impl Frontier) {
    let prios = [0, 5, -3, 5, 10, 7];
    let batch = prios.iter().enumerate().map(|(i, p)| req(&format!("http://a.test/{i}"), *p)).collect();
    f.push(batch).await.expect("push");
    let got: Vec<(i32, String)> = lease_all(f)
        .await
        .into_iter()
        .map(|l| (l.request.priority, l.request.url.path().to_string()))
        .collect();
    let want: Vec<(i32, String)> = [(10, "/4"), (7, "/5"), (5, "/1"), (5, "/3"), (0, "/0"), (-3, "/2")]
        .iter()
        .map(|(p, s)| (*p, s.to_string()))
        .collect();
    assert_eq!(got, want, "best priority first, first-come within a level");
}

/// A leased request stays out until completed, then is gone: the frontier drains.
pub async fn ack_drains(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://b.test/1", 0)]).await.expect("push");
    let leases = lease_all(f).await;
    assert_eq!(leases.len(), 2);
    let s = f.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (0, 2), "leased requests are out, not gone");
    assert!(!s.is_drained());
    for l in leases {
        done(f, l.id).await;
    }
    assert!(f.stats().await.expect("stats").is_drained(), "acknowledged leases are gone");
    assert_eq!(f.readiness().await.expect("readiness"), Readiness::Empty);
}

/// A retried request is queued again, its retry count grown.
pub async fn retry_returns_the_request(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    f.complete(vec![Completion::Retry { lease: l.id, after: Duration::ZERO }]).await.expect("retry");
    let again = lease_all(f).await;
    assert_eq!(again.len(), 1, "a returned lease is queued again");
    assert_eq!(again[0].request.url, l.request.url);
    assert_eq!(again[0].request.retries, 1, "the retry count grows");
}

/// A retried request waits out its back-off alone: its host hands out its other requests
/// meanwhile, and the request comes back once its back-off is over.
pub async fn a_retry_waits_alone(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0)]).await.expect("push");
    let first = lease_all(f).await;
    assert_eq!(first.len(), 2);
    let by_path =
        |ls: &[crate::Lease], p: &str| ls.iter().find(|l| l.request.url.path() == p).expect("leased").id;
    f.complete(vec![Completion::Retry { lease: by_path(&first, "/1"), after: Duration::from_secs(600) }])
        .await
        .expect("retry");
    f.push(vec![req("http://a.test/3", 0)]).await.expect("push");
    let next = lease_all(f).await;
    let paths: Vec<&str> = next.iter().map(|l| l.request.url.path()).collect();
    assert_eq!(paths, ["/3"], "the host goes on while its retried request backs off");
    done(f, next[0].id).await;
    done(f, by_path(&first, "/2")).await;
    let s = f.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (1, 0), "the request backing off is still queued");
    match f.readiness().await.expect("readiness") {
        Readiness::At(at) => assert!(at >= Instant::now() + Duration::from_secs(500), "{at:?}"),
        other => panic!("the back-off decides when the host has work again, got {other:?}"),
    }
    let view = f.hosts().await.expect("hosts");
    let a = view.iter().find(|h| &*h.key == "a.test").expect("a.test listed");
    assert_eq!((a.queued, a.backing_off, a.paused_for), (1, 1, None), "backing off, not paused");

    // A short back-off ends: the request comes back, its retry count grown.
    f.push(vec![req("http://b.test/1", 0)]).await.expect("push");
    let b = lease_all(f).await.pop().expect("b.test leased");
    let start = Instant::now();
    let short = Duration::from_millis(100);
    f.complete(vec![Completion::Retry { lease: b.id, after: short }]).await.expect("retry");
    let mut again = Vec::new();
    // Bounded wait: 100 ms of back-off; give up after 5 s.
    for _ in 0..100 {
        again = lease_all(f).await;
        if !again.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(again.len(), 1, "the retried request came back");
    assert!(start.elapsed() >= short, "after its back-off");
    assert_eq!((again[0].request.url.as_str(), again[0].request.retries), ("http://b.test/1", 1));
}

/// Pauses are listed with what is left of them, capped, and lifted, for every host or for
/// the hosts named; a lifted host hands out its requests at once.
pub async fn pauses_are_listed_capped_and_lifted(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0), req("http://b.test/1", 0)])
        .await
        .expect("push");
    let day = HostAdjustment { pause: Some(Duration::from_secs(86_400)), ..Default::default() };
    f.adjust_host("a.test", day).await.expect("adjust");
    f.adjust_host("b.test", day).await.expect("adjust");
    assert!(lease_all(f).await.is_empty(), "both hosts paused");
    let paused = |view: &[crate::HostView], host: &str| {
        view.iter().find(|h| &*h.key == host).and_then(|h| h.paused_for)
    };
    let view = f.hosts().await.expect("hosts");
    for h in ["a.test", "b.test"] {
        let left = paused(&view, h).expect("paused");
        assert!(left > Duration::from_secs(86_000) && left <= Duration::from_secs(86_400), "{h}: {left:?}");
    }
    let five_min = Duration::from_secs(300);
    let cut = f.cap_pauses(None, five_min).await.expect("cap");
    assert_eq!(cut.len(), 2, "both pauses cut: {cut:?}");
    assert!(cut.iter().all(|c| c.was > Duration::from_secs(86_000) && c.now == five_min), "{cut:?}");
    let view = f.hosts().await.expect("hosts");
    assert!(paused(&view, "a.test").is_some_and(|p| p <= five_min), "capped, still paused");
    assert!(f.cap_pauses(None, five_min).await.expect("cap").is_empty(), "nothing longer left to cut");
    assert!(lease_all(f).await.is_empty(), "a capped pause still holds");

    let cut = f.cap_pauses(Some(&["a.test"]), Duration::ZERO).await.expect("lift");
    assert_eq!(cut.iter().map(|c| &*c.host).collect::<Vec<_>>(), ["a.test"], "only the host named");
    let got: Vec<String> = lease_all(f).await.into_iter().map(|l| l.request.url.to_string()).collect();
    assert_eq!(got, ["http://a.test/1", "http://a.test/2"], "a lifted host goes at once; b.test waits");
    assert_eq!(paused(&f.hosts().await.expect("hosts"), "a.test"), None);
}

/// Completing a lease twice is an error.
pub async fn unknown_lease_is_an_error(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    done(f, l.id).await;
    let second = f.complete(vec![Completion::Done { lease: l.id, discovered: vec![], page: None }]).await;
    assert!(second.is_err(), "completing a lease twice is refused");
}

/// A completion's discoveries go through the seen set.
pub async fn discoveries_are_seen_checked(f: &impl Frontier) {
    f.push(vec![req("http://a.test/", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    let found = vec![req("http://a.test/", 0), req("http://a.test/x", 0), req("http://a.test/x", 0)];
    let r = f
        .complete(vec![Completion::Done { lease: l.id, discovered: found, page: None }])
        .await
        .expect("complete");
    assert_eq!((r.added, r.seen), (1, 2), "discoveries go through the seen set");
    assert_eq!(f.stats().await.expect("stats").queued, 1);
}

/// A host at its parallelism waits for a completion. Needs parallelism 1.
pub async fn parallelism_per_host(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0), req("http://b.test/1", 0)])
        .await
        .expect("push");
    let first = lease_all(f).await;
    let hosts: Vec<_> = first.iter().map(|l| l.request.url.host_str().unwrap_or("").to_string()).collect();
    assert_eq!(first.len(), 2, "one per host at parallelism 1: {hosts:?}");
    assert_eq!(f.readiness().await.expect("readiness"), Readiness::Blocked, "a.test waits for its slot");
    let a = first.iter().find(|l| l.request.url.host_str() == Some("a.test")).expect("a.test leased");
    done(f, a.id).await;
    let second = lease_all(f).await;
    assert_eq!(second.len(), 1, "the slot frees on completion");
    assert_eq!(second[0].request.url.as_str(), "http://a.test/2");
}

/// A released lease frees its host's slot at once but stays out: it completes as usual, and
/// one never completed still comes back after its time-to-live. Run at parallelism 1 and a
/// short lease time-to-live.
pub async fn released_leases_free_their_slot(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0), req("http://a.test/3", 0)])
        .await
        .expect("push");
    let first = lease_all(f).await;
    assert_eq!(first.len(), 1, "parallelism 1");
    f.release(&[first[0].id]).await.expect("release");
    f.release(&[first[0].id]).await.expect("a second release changes nothing");
    let second = lease_all(f).await;
    assert_eq!(second.len(), 1, "the released slot is free before the lease completes");
    assert!(lease_all(f).await.is_empty(), "a second release did not free a second slot");
    assert_eq!(f.stats().await.expect("stats").leased, 2, "the released lease is still out");
    done(f, first[0].id).await;
    assert!(lease_all(f).await.is_empty(), "completing a released lease frees no slot again");
    // The second lease is released and never completed: it comes back after its time-to-live,
    // and the slot count stays right (one at a time).
    f.release(&[second[0].id]).await.expect("release");
    let third = lease_all(f).await;
    assert_eq!(third.len(), 1);
    done(f, third[0].id).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let again = lease_all(f).await;
    assert_eq!(again.len(), 1, "an expired released lease is queued again, once");
    assert_eq!(again[0].request.url, second[0].request.url);
    done(f, again[0].id).await;
    assert!(f.stats().await.expect("stats").is_drained());
}

/// A host's delay holds its next request. Needs the rules [`run_all`] gives it.
pub async fn delay_per_host(f: &impl Frontier) {
    f.push(vec![
        req("http://slow.test/1", 0),
        req("http://slow.test/2", 0),
        req("http://fast.test/1", 0),
        req("http://fast.test/2", 0),
    ])
    .await
    .expect("push");
    let start = Instant::now();
    let first = lease_all(f).await;
    assert_eq!(first.len(), 3, "slow.test gives one, fast.test both");
    for l in &first {
        done(f, l.id).await;
    }
    match f.readiness().await.expect("readiness") {
        Readiness::At(at) => assert!(at >= start + Duration::from_millis(150)),
        other => panic!("slow.test must wait for its delay, got {other:?}"),
    }
    assert!(lease_all(f).await.is_empty(), "nothing before the delay ends");
    // Bounded wait: the delay is 150 ms; give up after 5 s.
    let mut next = Vec::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        next = lease_all(f).await;
        if !next.is_empty() {
            break;
        }
    }
    assert_eq!(next.len(), 1, "slow.test's second request after the delay");
    assert!(start.elapsed() >= Duration::from_millis(150), "the delay was honored");
}

/// A lease never completed comes back after its time-to-live. Needs one under 120 ms.
pub async fn expired_leases_come_back(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    tokio::time::sleep(Duration::from_millis(120)).await;
    let again = lease_all(f).await;
    assert_eq!(again.len(), 1, "a lease never completed comes back after its time-to-live");
    assert_eq!(again[0].request.url, l.request.url);
    assert!(
        f.complete(vec![Completion::Done { lease: l.id, discovered: vec![], page: None }]).await.is_err(),
        "the expired lease can no longer be completed"
    );
    done(f, again[0].id).await;
    assert!(f.stats().await.expect("stats").is_drained());
}

/// A deferred request is queued again without counting an attempt.
pub async fn defer_keeps_the_retry_count(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    f.complete(vec![Completion::Defer { lease: l.id, after: Duration::ZERO }]).await.expect("defer");
    let again = lease_all(f).await;
    assert_eq!(again.len(), 1, "a deferred lease is queued again");
    assert_eq!(again[0].request.retries, 0, "a deferral is not an attempt");
}

/// A paused host hands out nothing until its pause ends; a raised delay holds the next request.
pub async fn adjust_host_pauses_and_slows(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0), req("http://b.test/1", 0)])
        .await
        .expect("push");
    let start = Instant::now();
    let pause = HostAdjustment { pause: Some(Duration::from_millis(150)), ..Default::default() };
    f.adjust_host("a.test", pause).await.expect("adjust");
    let slow = HostAdjustment { min_delay: Some(Duration::from_secs(600)), ..Default::default() };
    f.adjust_host("b.test", slow).await.expect("adjust");
    let first = lease_all(f).await;
    assert_eq!(first.len(), 1, "a paused host hands out nothing");
    assert_eq!(first[0].request.url.host_str(), Some("b.test"));
    let mut got = Vec::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        got.extend(lease_all(f).await);
        if got.len() >= 2 {
            break;
        }
    }
    assert!(start.elapsed() >= Duration::from_millis(150), "the pause was honored");
    assert!(got.iter().all(|l| l.request.url.host_str() == Some("a.test")), "after its pause only a.test");
    f.push(vec![req("http://b.test/2", 0)]).await.expect("push");
    assert!(lease_all(f).await.is_empty(), "b.test's raised delay holds its next request");
}

/// The delay of the `ruled.test` rule [`learned_delay_goes_down_and_up`] is run with.
const RULE_DELAY: Duration = Duration::from_millis(150);

/// The adaptive throttle's learned delay: raised, it holds the host's next request; lowered,
/// it frees it at once; it never takes a host below its rule's delay (`ruled.test`, 150 ms)
/// nor below a Crawl-delay floor; the backend reports what it learned.
pub async fn learned_delay_goes_down_and_up(f: &impl Frontier) {
    let learn = |d: Duration| HostAdjustment { learned_delay: Some(d), ..Default::default() };
    let hosts = |leases: &[crate::Lease]| -> Vec<String> {
        leases.iter().map(|l| l.request.url.host_str().unwrap_or("").to_string()).collect()
    };
    f.push((1..=3).map(|i| req(&format!("http://a.test/{i}"), 0)).collect()).await.expect("push");
    let first = lease_all(f).await;
    assert_eq!(first.len(), 3, "no delay yet: all at once");
    f.push((4..=6).map(|i| req(&format!("http://a.test/{i}"), 0)).collect()).await.expect("push");
    f.adjust_host("a.test", learn(Duration::from_secs(600))).await.expect("adjust");
    assert!(lease_all(f).await.is_empty(), "a raised learned delay holds the host");
    match f.readiness().await.expect("readiness") {
        Readiness::At(at) => assert!(at >= Instant::now() + Duration::from_secs(500)),
        other => panic!("a.test must wait for its learned delay, got {other:?}"),
    }
    f.adjust_host("a.test", learn(Duration::ZERO)).await.expect("adjust");
    assert_eq!(hosts(&lease_all(f).await), ["a.test"; 3], "a lowered learned delay frees the host at once");
    f.push(vec![req("http://a.test/7", 0)]).await.expect("push");
    f.adjust_host("a.test", learn(Duration::from_secs(600))).await.expect("adjust");
    assert!(lease_all(f).await.is_empty(), "raised again, the host waits again");

    // Never below the rule's delay: learning 1 ms leaves ruled.test at 150 ms.
    f.push(vec![req("http://ruled.test/1", 0), req("http://ruled.test/2", 0)]).await.expect("push");
    let start = Instant::now();
    assert_eq!(hosts(&lease_all(f).await), ["ruled.test"]);
    f.adjust_host("ruled.test", learn(Duration::from_millis(1))).await.expect("adjust");
    assert!(lease_all(f).await.is_empty(), "the rule's delay still holds");
    let mut second = Vec::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        second = lease_all(f).await;
        if !second.is_empty() {
            break;
        }
    }
    assert_eq!(hosts(&second), ["ruled.test"]);
    assert!(start.elapsed() >= RULE_DELAY, "the rule's delay was honored");

    // Nor below a Crawl-delay floor.
    f.push(vec![req("http://floor.test/1", 0), req("http://floor.test/2", 0)]).await.expect("push");
    f.adjust_host(
        "floor.test",
        HostAdjustment { min_delay: Some(Duration::from_secs(600)), ..Default::default() },
    )
    .await
    .expect("adjust");
    assert_eq!(hosts(&lease_all(f).await), ["floor.test"]);
    f.adjust_host("floor.test", learn(Duration::ZERO)).await.expect("adjust");
    assert!(lease_all(f).await.is_empty(), "a Crawl-delay floor outlasts a lowered learned delay");

    let mut learned = f.learned_delays().await.expect("learned delays");
    learned.sort();
    assert_eq!(
        learned,
        [
            ("a.test".to_string(), Duration::from_secs(600)),
            ("floor.test".to_string(), Duration::ZERO),
            ("ruled.test".to_string(), RULE_DELAY),
        ],
        "what was learned, clamped to the rule's delay"
    );
}

/// Persistence across a reopen, for durable backends. `open` opens the same state each time
/// (the previous instance is dropped first). Leases that were out come back, acknowledged
/// ones stay gone, discoveries, retry counts, failures, the seen set and priorities survive.
pub async fn survives_reopen<F, M>(open: M)
where
    F: Frontier,
    M: Fn() -> F,
{
    let f = open();
    let batch = vec![
        req("http://a.test/1", 5),
        req("http://a.test/2", 0),
        req("http://b.test/1", 0),
        req("http://c.test/1", 0),
    ];
    f.push(batch).await.expect("push");
    let leases = lease_all(&f).await;
    assert_eq!(leases.len(), 4);
    let by_url = |u: &str| leases.iter().find(|l| l.request.url.as_str() == u).expect("leased").id;
    let found = vec![req("http://a.test/3", 9), req("http://a.test/2", 0)];
    f.complete(vec![
        Completion::Done { lease: by_url("http://a.test/1"), discovered: found, page: None },
        Completion::Retry { lease: by_url("http://b.test/1"), after: Duration::ZERO },
        Completion::Failed {
            lease: by_url("http://c.test/1"),
            failure: FailureRecord {
                url: "http://c.test/1".into(),
                kind: ErrorKind::Timeout,
                message: "slow".into(),
                attempts: 4,
                last_status: Some(503),
                at: SystemTime::now(),
            },
        },
    ])
    .await
    .expect("complete");
    // a.test/2 stays leased and is never completed: the process "dies" here.
    drop(f);

    let f = open();
    let s = f.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased, s.failed), (3, 0, 1), "the lease that was out is queued again");
    let r = f
        .push(vec![req("http://a.test/1", 0), req("http://c.test/1", 0), req("http://d.test/1", 0)])
        .await
        .expect("push");
    assert_eq!((r.added, r.seen), (1, 2), "the seen set survived");
    let got: Vec<(String, i32, u32)> = lease_all(&f)
        .await
        .into_iter()
        .map(|l| (l.request.url.to_string(), l.request.priority, l.request.retries))
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            ("http://a.test/2".to_string(), 0, 0),
            ("http://a.test/3".to_string(), 9, 0),
            ("http://b.test/1".to_string(), 0, 1),
            ("http://d.test/1".to_string(), 0, 0)
        ],
        "discoveries and retry counts survived"
    );
    let a: Vec<&str> = got.iter().filter(|g| g.0.contains("a.test")).map(|g| g.0.as_str()).collect();
    assert_eq!(a, ["http://a.test/3", "http://a.test/2"], "priority order survived");
    let failures = f.failures().await.expect("failures");
    assert_eq!(failures.len(), 1);
    assert_eq!(
        (failures[0].kind, failures[0].attempts, failures[0].last_status),
        (ErrorKind::Timeout, 4, Some(503))
    );

    // A paused host stays paused across a reopen.
    f.adjust_host("e.test", HostAdjustment { pause: Some(Duration::from_secs(300)), ..Default::default() })
        .await
        .expect("adjust");
    f.push(vec![req("http://e.test/1", 0)]).await.expect("push");
    // And a learned delay is kept: it paces the host from the first request after a reopen.
    let learned = Duration::from_secs(300);
    f.adjust_host("g.test", HostAdjustment { learned_delay: Some(learned), ..Default::default() })
        .await
        .expect("adjust");
    drop(f);
    let f = open();
    let mut leased = lease_all(&f).await;
    leased.retain(|l| l.request.url.host_str() == Some("e.test"));
    assert!(leased.is_empty(), "a host paused for 5 minutes is still paused after a reopen");
    let kept = f.learned_delays().await.expect("learned delays");
    assert!(kept.contains(&("g.test".to_string(), learned)), "the learned delay survived: {kept:?}");
    f.push(vec![req("http://g.test/1", 0), req("http://g.test/2", 0)]).await.expect("push");
    let mut leased = lease_all(&f).await;
    leased.retain(|l| l.request.url.host_str() == Some("g.test"));
    assert_eq!(leased.len(), 1, "the learned delay spaces the host's requests after a reopen");

    // The pause can be lifted after a reopen, and the lift is kept.
    let cut = f.cap_pauses(Some(&["e.test"]), Duration::ZERO).await.expect("lift");
    assert_eq!(cut.len(), 1, "the reopened pause is a pause: {cut:?}");
    drop(f);
    let f = open();
    let mut leased = lease_all(&f).await;
    leased.retain(|l| l.request.url.host_str() == Some("e.test"));
    assert_eq!(leased.len(), 1, "a lifted pause stays lifted");

    // A retried request's back-off survives a reopen, and holds only that request.
    f.push(vec![req("http://h.test/1", 0)]).await.expect("push");
    let h1 = lease_all(&f).await.into_iter().find(|l| l.request.url.host_str() == Some("h.test"));
    let h1 = h1.expect("h.test/1 leased");
    f.complete(vec![Completion::Retry { lease: h1.id, after: Duration::from_secs(300) }])
        .await
        .expect("retry");
    f.push(vec![req("http://h.test/2", 0)]).await.expect("push");
    drop(f);
    let f = open();
    let got: Vec<String> = lease_all(&f)
        .await
        .into_iter()
        .filter(|l| l.request.url.host_str() == Some("h.test"))
        .map(|l| l.request.url.path().to_string())
        .collect();
    assert_eq!(got, ["/2"], "h.test/1 still backs off after a reopen; h.test/2 goes");
    let h = f.hosts().await.expect("hosts");
    let h = h.iter().find(|v| &*v.key == "h.test").expect("h.test listed");
    assert_eq!(h.backing_off, 1);
}
