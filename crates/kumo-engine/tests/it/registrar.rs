//! Several downloaders, one per proxy, chosen by score: a failing proxy ends up with the
//! fewest requests, and a downloader can be unregistered while the crawl runs. Proxies per
//! limit rule: a host whose rule names a proxy is fetched only through it. Several analyzers,
//! chosen by score for each page: a slow or failing one ends up with the fewest pages.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use common::{config, frontier};
use kumo_core::{CounterSnapshot, Item, Response};
use kumo_engine::{
    Analysis, Analyzer, CrawlConfig, Engine, EngineError, ModuleLoad, PageAnalyzer, RegistrarError,
    ScriptFailure, Summary,
};
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

/// The default analyzer, slowed down: it sleeps a little on every page (in the parser task
/// that called it, as a heavy analysis would hold it).
struct Slow;

impl Analyzer for Slow {
    fn analyze(&self, resp: &Response) -> Analysis {
        std::thread::sleep(Duration::from_millis(20));
        PageAnalyzer.analyze(resp)
    }
}

/// The default analyzer whose script hook fails on every page.
struct Failing;

impl Analyzer for Failing {
    fn analyze(&self, resp: &Response) -> Analysis {
        let mut analysis = PageAnalyzer.analyze(resp);
        analysis.script_errors.push(ScriptFailure { hook: "item", message: "boom".into() });
        analysis
    }
}

/// Crawls `cfg` with `analyzers` registered; the summary and the records.
async fn crawl_with(cfg: CrawlConfig, analyzers: Vec<Arc<dyn Analyzer>>) -> (Summary, Vec<Item>) {
    let sink = CollectSink::new();
    let mut engine = Engine::new();
    engine.init_with_analyzers(cfg.clone(), frontier(&cfg), vec![Box::new(sink.clone())], analyzers).unwrap();
    engine.start().await.unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    (summary, sink.snapshot())
}

/// The counters of the two analyzers of `summary`, checked to be `A1` and `A2` with a score.
fn two_analyzers(summary: &Summary) -> (CounterSnapshot, CounterSnapshot) {
    let a = &summary.modules.analyzers;
    let ids: Vec<String> = a.iter().map(|m| m.id.to_string()).collect();
    assert_eq!(ids, ["A1", "A2"], "one line per registered analyzer, not per parser task");
    assert!(
        a.iter().all(|m| m.extra["score"].is_u64()),
        "{:?}",
        a.iter().map(|m| &m.extra).collect::<Vec<_>>()
    );
    (a[0].counts, a[1].counts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_analyzer_gets_fewer_pages() {
    let site = SiteConfig { pages: 100, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    // The slow one first: it wins every tie, so it loses pages only by its score.
    let (summary, items) =
        crawl_with(config(&server.url("/index.html")), vec![Arc::new(Slow), Arc::new(PageAnalyzer)]).await;

    assert_eq!(items.len(), truth.unique_urls, "every page analyzed, none twice");
    let (slow, fast) = two_analyzers(&summary);
    assert_eq!(slow.called + fast.called, summary.pages, "each page counted on one analyzer");
    assert_eq!(summary.pages, truth.unique_urls as u64);
    assert!(slow.called > 0, "the slow one took its share while idle");
    assert!(fast.called > slow.called, "slow {slow:?}, fast {fast:?}");
    assert_eq!((slow.completed, fast.completed), (slow.called, fast.called), "no analysis failed");
    assert_eq!((slow.handling, fast.handling), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_analyzer_is_soon_left_alone() {
    let site = SiteConfig { pages: 100, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let cfg = config(&server.url("/index.html"));
    let parsers = cfg.parsers as u64;
    let (summary, items) = crawl_with(cfg, vec![Arc::new(Failing), Arc::new(PageAnalyzer)]).await;

    let (failing, good) = two_analyzers(&summary);
    assert_eq!(failing.called + good.called, summary.pages, "each page counted on one analyzer");
    assert_eq!(summary.pages, truth.unique_urls as u64, "a failed page's links are followed all the same");
    // Only the pages picked before its first failure was recorded: one a parser task at most.
    assert!((1..=parsers).contains(&failing.called), "failing {failing:?}, good {good:?}");
    assert_eq!(failing.completed, 0, "every analysis of it failed");
    assert_eq!(good.completed, good.called);
    assert_eq!(summary.failed, failing.called, "its pages failed as script errors");
    assert_eq!(summary.script_errors["item"], failing.called);
    assert_eq!(items.len() as u64, good.called, "a failed page's records are not written");
    let score = |i: usize| summary.modules.analyzers[i].extra["score"].as_u64().unwrap();
    assert!(score(0) > score(1), "its errors weigh on its score: {} vs {}", score(0), score(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analyzers_score_can_be_replaced_and_an_empty_list_is_refused() {
    let site = SiteConfig { pages: 60, ..Default::default() };
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let cfg = config(&server.url("/index.html"));
    let mut engine = Engine::new();
    let refused = engine.init_with_analyzers(cfg.clone(), frontier(&cfg), Vec::new(), Vec::new());
    assert!(matches!(refused, Err(EngineError::NoAnalyzer)), "{refused:?}");

    // Pages taken so far: each page goes to the analyzer that took the fewest, in turn.
    let mut engine = Engine::new().with_analyzer_score(Arc::new(|l: &ModuleLoad| l.counts.called));
    let analyzers: Vec<Arc<dyn Analyzer>> = vec![Arc::new(PageAnalyzer), Arc::new(PageAnalyzer)];
    let sinks: Vec<Box<dyn kumo_pipeline::Sink>> = vec![Box::new(CollectSink::new())];
    engine.init_with_analyzers(cfg.clone(), frontier(&cfg), sinks, analyzers).unwrap();
    engine.start().await.unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    let (first, second) = two_analyzers(&summary);
    assert_eq!(first.called + second.called, summary.pages);
    // Two parser tasks picking at once may both take the same one: never more apart than that.
    assert!(first.called.abs_diff(second.called) <= cfg.parsers as u64, "{first:?} {second:?}");
    for (m, counts) in summary.modules.analyzers.iter().zip([first, second]) {
        assert_eq!(m.extra["score"], counts.called, "the summary shows the score in use");
    }
}
