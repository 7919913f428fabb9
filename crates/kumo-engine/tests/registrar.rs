//! Several downloaders, one per proxy, chosen by score: a failing proxy ends up with the
//! fewest requests, and a downloader can be unregistered while the crawl runs. Proxies per
//! limit rule: a host whose rule names a proxy is fetched only through it.

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{config, frontier};
use kumo_engine::{Engine, RegistrarError};
use kumo_frontier::{HostPolicy, HostRule};
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ForwardProxy, ServerBuilder, SiteConfig, TestServer};

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_proxy_gets_the_fewest_requests() {
    let site = SiteConfig { pages: 200, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let (p1, p2) = (ForwardProxy::start(ip(5)).await.unwrap(), ForwardProxy::start(ip(6)).await.unwrap());
    let mut cfg = config(&server.url("/index.html"));
    // Nothing listens on port 1: every request through this proxy fails to connect.
    cfg.proxies = vec![p1.url(), p2.url(), "http://127.0.0.1:1".into()];
    cfg.max_retries = 5;
    let (summary, items) = common::crawl(cfg).await;

    assert_eq!(items.len(), truth.unique_urls, "every page fetched through the working proxies");
    let d = &summary.modules.downloaders;
    assert_eq!(d.len(), 3);
    assert_eq!(d[0].id.to_string(), format!("D1|{}", p1.addr()));
    let failing = d[2].counts.called;
    assert!(
        failing < d[0].counts.called && failing < d[1].counts.called,
        "called: {:?}",
        d.iter().map(|m| m.counts.called).collect::<Vec<_>>()
    );
    assert!(failing <= 5, "the failing proxy was soon left alone ({failing} requests)");
    assert_eq!(p1.relayed() + p2.relayed(), server.hit_count(), "all traffic went through the proxies");
    assert!(p1.relayed() > 0 && p2.relayed() > 0, "the load was shared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloaders_can_be_unregistered_while_the_crawl_runs() {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 400, ..Default::default() })
        .start()
        .await
        .unwrap();
    let (p1, p2) = (ForwardProxy::start(ip(7)).await.unwrap(), ForwardProxy::start(ip(8)).await.unwrap());
    let mut cfg = config(&server.url("/index.html"));
    cfg.proxies = vec![p1.url(), p2.url()];
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(CollectSink::new())]).unwrap();
    let registrar = engine.registrar().unwrap();
    engine.start().await.unwrap();
    for _ in 0..200 {
        if server.hit_count() >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let d1 = registrar.active_ids()[0].clone();
    registrar.unregister(&d1).unwrap();
    let at_removal = p1.relayed();
    let d2 = registrar.active_ids()[0].clone();
    assert!(matches!(registrar.unregister(&d2), Err(RegistrarError::Last(_))), "the last one stays");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    // What D1 had in hand when it left may still finish; nothing new is given to it.
    assert!(p1.relayed() <= at_removal + cfg.concurrency, "D1 got no new work");
    assert!(p2.relayed() > p1.relayed());
    let d = &summary.modules.downloaders;
    assert_eq!(d.len(), 2, "the retired downloader stays in the summary");
    assert_eq!(d[0].extra["active"], false);
}

/// A small site: `/` links to `/1` … `/4`.
async fn small_site(ip_last: u8) -> TestServer {
    let links: String = (1..=4).map(|i| format!("<a href=\"/{i}\">{i}</a>")).collect();
    let mut b = ServerBuilder::new().ip(ip(ip_last)).fixture("/", Fixture::html(&links));
    for i in 1..=4 {
        b = b.fixture(&format!("/{i}"), Fixture::html("page"));
    }
    b.start().await.unwrap()
}

/// Every target a proxy relayed, checked to be on `server`; returns how many.
fn relayed_only_to(proxy: &ForwardProxy, server: &TestServer) -> usize {
    let targets = proxy.relayed_targets();
    let base = format!("{}/", server.base_url());
    assert!(targets.iter().all(|t| t.starts_with(&base)), "{} relayed {targets:?}", proxy.url());
    targets.len()
}

/// A rule naming a proxy sends its host's requests (robots.txt included) through it, and only
/// those; the other host is fetched direct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_proxy_carries_only_its_hosts_requests() {
    let (a, b) = (small_site(9).await, small_site(10).await);
    let proxy = ForwardProxy::start(ip(11)).await.unwrap();
    let mut cfg = config(&a.url("/"));
    cfg.seeds.push(b.url("/").parse().unwrap());
    let rule = HostRule::new(&a.addr().to_string(), HostPolicy::default()).unwrap().with_proxy(&proxy.url());
    cfg.politeness.rules = vec![rule];
    let (summary, items) = common::crawl(cfg).await;

    assert_eq!(items.len(), 10, "both sites crawled");
    assert_eq!(a.hit_count(), 6, "robots.txt and five pages");
    assert_eq!(relayed_only_to(&proxy, &a), a.hit_count(), "the proxy relayed exactly a's requests");
    assert_eq!(b.hit_count(), 6, "b fetched direct");
    let d = &summary.modules.downloaders;
    let ids: Vec<String> = d.iter().map(|m| m.id.to_string()).collect();
    assert_eq!(ids, ["D1".to_string(), format!("D2|{}", proxy.addr())], "one downloader per distinct proxy");
    assert_eq!(d[1].extra["rules_only"], true);
    assert_eq!(d[1].extra["proxy"], proxy.url());
}

/// With crawl-wide proxies too: a host without a proxy rule goes through those, a host with
/// one only through its rule's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_proxies_and_crawl_proxies_stay_apart() {
    let (a, b) = (small_site(12).await, small_site(13).await);
    let (general, ruled) =
        (ForwardProxy::start(ip(14)).await.unwrap(), ForwardProxy::start(ip(15)).await.unwrap());
    let mut cfg = config(&a.url("/"));
    cfg.seeds.push(b.url("/").parse().unwrap());
    cfg.proxies = vec![general.url()];
    let rule = HostRule::regex(&format!("^127\\.0\\.0\\.12:{}$", a.addr().port()), HostPolicy::default())
        .unwrap()
        .with_proxy(&ruled.url());
    cfg.politeness.rules = vec![rule];
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(CollectSink::new())]).unwrap();
    let registrar = engine.registrar().unwrap();
    let ids = registrar.active_ids();
    assert!(
        matches!(registrar.unregister(&ids[1]), Err(RegistrarError::LastForRule(..))),
        "the rule's only downloader stays"
    );
    engine.start().await.unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();

    assert_eq!(summary.by_status[&200], 10);
    assert_eq!(relayed_only_to(&ruled, &a), a.hit_count(), "a only through its rule's proxy");
    assert_eq!(relayed_only_to(&general, &b), b.hit_count(), "b through the crawl's proxy");
    assert_eq!((a.hit_count(), b.hit_count()), (6, 6));
}
