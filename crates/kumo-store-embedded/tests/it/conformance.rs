//! The embedded store passes the same conformance suite as the in-memory frontier, with
//! spilling forced (one request in memory per level) and without, and survives reopening.

use kumo_frontier::conformance::{SuiteConfig, run_all, run_budgets, run_per_ip, survives_reopen};
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};

fn open(dir: &std::path::Path, c: SuiteConfig, spill_at: usize) -> EmbeddedStore {
    let cfg =
        EmbeddedConfig { politeness: c.politeness, lease_ttl: c.lease_ttl, spill_at, ..Default::default() };
    EmbeddedStore::open(dir, cfg).expect("open")
}

/// A fresh store for each check, in its own folder under `root`.
fn fresh(root: &std::path::Path, spill_at: usize) -> impl Fn(SuiteConfig) -> EmbeddedStore + '_ {
    let n = std::sync::atomic::AtomicUsize::new(0);
    move |c| open(&root.join(n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()), c, spill_at)
}

#[tokio::test]
async fn embedded_store_conforms() {
    let root = tempfile::tempdir().unwrap();
    run_all(fresh(root.path(), 256)).await;
}

#[tokio::test]
async fn embedded_store_conforms_while_spilling() {
    let root = tempfile::tempdir().unwrap();
    run_all(fresh(root.path(), 1)).await;
}

#[tokio::test]
async fn embedded_store_keeps_politeness_per_ip() {
    let root = tempfile::tempdir().unwrap();
    run_per_ip(fresh(root.path(), 1)).await;
}

#[tokio::test]
async fn embedded_store_keeps_page_budgets() {
    let root = tempfile::tempdir().unwrap();
    run_budgets(fresh(root.path(), 1)).await;
}

/// A host's pages queued against its budget are kept: after a restart, the budget still holds.
#[tokio::test]
async fn page_budgets_hold_across_a_restart() {
    use kumo_core::{CanonicalOptions, DedupMode, Request, Url};
    use kumo_frontier::{Budget, Frontier, Politeness};

    let root = tempfile::tempdir().unwrap();
    let c = SuiteConfig {
        politeness: Politeness { budget: Budget { per_host: 3, per_domain: 5 }, ..Default::default() },
        lease_ttl: std::time::Duration::from_secs(600),
    };
    let req = |u: &str| {
        let r = Request::get(Url::parse(u).unwrap());
        (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
    };
    {
        let s = open(root.path(), c.clone(), 1);
        let r = s.push(vec![req("http://a.d.test/1"), req("http://a.d.test/2")]).await.unwrap();
        assert_eq!(r.added, 2);
    }
    let s = open(root.path(), c, 1);
    let r = s.push((3..6).map(|i| req(&format!("http://a.d.test/{i}"))).collect()).await.unwrap();
    assert_eq!((r.added, r.budget), (1, 2), "one page left of a.d.test's 3, counted before the restart");
    let r = s.push((1..4).map(|i| req(&format!("http://b.d.test/{i}"))).collect()).await.unwrap();
    assert_eq!((r.added, r.budget), (2, 1), "d.test has 2 of its 5 left");
}

#[tokio::test]
async fn embedded_store_survives_reopen() {
    let root = tempfile::tempdir().unwrap();
    let c = SuiteConfig {
        politeness: kumo_frontier::Politeness {
            default: kumo_frontier::HostPolicy { parallelism: 1000, ..Default::default() },
            ..Default::default()
        },
        lease_ttl: std::time::Duration::from_secs(600),
    };
    survives_reopen(|| open(root.path(), c.clone(), 1)).await;
}

/// A resumed crawl runs at its own delay rule (a changed `--delay-ms` holds), while what the
/// crawl learned of a host, its Crawl-delay, survives the restart.
#[tokio::test]
async fn a_resume_takes_its_own_delay_and_keeps_crawl_delays() {
    use std::time::Duration;

    use kumo_core::{CanonicalOptions, DedupMode, Request, Url};
    use kumo_frontier::{Completion, Frontier, HostAdjustment, HostPolicy, Politeness};

    let root = tempfile::tempdir().unwrap();
    let open = |delay_ms: u64| {
        let politeness = Politeness {
            default: HostPolicy { delay: Duration::from_millis(delay_ms), ..Default::default() },
            ..Default::default()
        };
        let cfg = EmbeddedConfig { politeness, ..Default::default() };
        EmbeddedStore::open(root.path(), cfg).expect("open")
    };
    let req = |url: &str| {
        let r = Request::get(Url::parse(url).unwrap());
        (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
    };
    let delays = async |f: &EmbeddedStore| {
        let mut d: Vec<(String, Duration)> =
            f.hosts().await.unwrap().into_iter().map(|h| (h.key.to_string(), h.delay)).collect();
        d.sort();
        d
    };

    let f = open(300);
    f.push(vec![
        req("http://a.test/1"),
        req("http://a.test/2"),
        req("http://b.test/1"),
        req("http://b.test/2"),
    ])
    .await
    .unwrap();
    let leases = f.lease(10).await.unwrap();
    assert_eq!(leases.len(), 2, "one per host, then the delay");
    let done =
        leases.iter().map(|l| Completion::Done { lease: l.id, discovered: vec![], page: None }).collect();
    f.complete(done).await.unwrap();
    let crawl_delay = HostAdjustment { min_delay: Some(Duration::from_millis(500)), ..Default::default() };
    f.adjust_host("b.test", crawl_delay).await.unwrap();
    let ms = Duration::from_millis;
    assert_eq!(delays(&f).await, [("a.test".into(), ms(300)), ("b.test".into(), ms(500))]);
    drop(f);

    let f = open(0);
    assert_eq!(
        delays(&f).await,
        [("a.test".into(), ms(0)), ("b.test".into(), ms(500))],
        "the new rule for a.test, b.test's Crawl-delay kept"
    );
}

/// A run killed right after leasing a request may have sent it just before it died, with no
/// completion committed: a paced host's lease is written before its request leaves, so the
/// reopened state holds the host its delay from then, and the next run's first request cannot
/// follow the killed run's too soon.
#[tokio::test]
async fn a_reopen_holds_a_paced_host_its_delay_from_a_lease_never_completed() {
    use std::time::{Duration, Instant};

    use kumo_core::{CanonicalOptions, DedupMode, Request, Url};
    use kumo_frontier::{Frontier, HostPolicy, Politeness, Readiness};

    let root = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(400);
    let open = || {
        let politeness =
            Politeness { default: HostPolicy { delay, ..Default::default() }, ..Default::default() };
        EmbeddedStore::open(root.path(), EmbeddedConfig { politeness, ..Default::default() }).expect("open")
    };
    let req = |url: &str| {
        let r = Request::get(Url::parse(url).unwrap());
        (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
    };
    let f = open();
    f.push(vec![req("http://a.test/1")]).await.unwrap();
    assert_eq!(f.lease(10).await.unwrap().len(), 1, "the lease the killed run's request went with");
    drop(f);

    let reopened = Instant::now();
    let f = open();
    assert!(f.lease(10).await.unwrap().is_empty(), "held at once after the reopen");
    match f.readiness().await.unwrap() {
        Readiness::At(at) => assert!(at >= reopened + delay, "held {:?}, not the delay", at - reopened),
        other => panic!("the host should wait for a turn: {other:?}"),
    }
}
