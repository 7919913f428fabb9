//! Several downloaders, one per proxy, chosen by score: a failing proxy ends up with the
//! fewest requests, and a downloader can be unregistered while the crawl runs.

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{config, frontier};
use kumo_engine::{Engine, RegistrarError};
use kumo_pipeline::CollectSink;
use kumo_testsite::{ForwardProxy, ServerBuilder, SiteConfig};

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
