//! End-to-end crawls of the synthetic test site: exact page counts, depth limits, allowed
//! domains, and no request to any other host.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};

use common::{config, crawl, status, urls};
use kumo_core::SkipReason;
use kumo_engine::StopCause;
use kumo_testsite::{ServerBuilder, SiteConfig, TestServer};

/// A server on 127.0.0.2 that the synthetic site's external links point at: any request it
/// gets is a crawl that left its allowed domains.
async fn trap() -> TestServer {
    ServerBuilder::new().ip(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))).start().await.expect("trap server")
}

async fn site(pages: usize, trap: &TestServer) -> (TestServer, SiteConfig) {
    let cfg = SiteConfig { pages, external_base: Some(trap.base_url()), ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg.clone()).start().await.expect("site");
    (server, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_exactly_once_and_no_external_host() {
    let trap = trap().await;
    let (server, site_cfg) = site(400, &trap).await;
    let truth = site_cfg.ground_truth();
    let (summary, items) = crawl(config(&server.url("/index.html"))).await;

    assert_eq!(summary.stopped_by, StopCause::Drained);
    assert_eq!(items.len(), truth.unique_urls, "one record per distinct URL");
    assert_eq!(urls(&items).len(), truth.unique_urls, "no URL fetched twice");
    assert!(items.iter().all(|i| status(i) == 200));
    assert_eq!(common::page_hits(&server), truth.unique_urls, "the server saw each URL once");
    assert_eq!(trap.hit_count(), 0, "no request left the allowed domain");
    assert!(summary.skipped[&SkipReason::Domain] > 0, "external links were seen and skipped");
    assert!(summary.skipped[&SkipReason::Seen] > 0, "duplicate spellings were de-duplicated");
    assert_eq!(summary.frontier.queued + summary.frontier.leased, 0, "terminated with nothing left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stripping_the_query_variant_parameter_leaves_n_plus_one_pages() {
    let trap = trap().await;
    let (server, site_cfg) = site(300, &trap).await;
    let truth = site_cfg.ground_truth();
    let mut cfg = config(&server.url("/index.html"));
    cfg.canonical.strip_params = vec!["view".into()];
    let (_, items) = crawl(cfg).await;
    assert_eq!(items.len(), truth.documents, "exactly N+1 pages");
    assert!(items.iter().all(|i| !common::field(i, "url").contains('?')));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_depth_is_exact() {
    let trap = trap().await;
    let (server, site_cfg) = site(300, &trap).await;
    let truth = site_cfg.ground_truth();
    for depth in 1..=2u32 {
        let mut cfg = config(&server.url("/index.html"));
        cfg.scope.max_depth = depth;
        let (summary, items) = crawl(cfg).await;
        assert_eq!(items.len(), truth.urls_within_depth(depth as usize), "depth {depth}");
        assert!(items.iter().all(|i| i.get("depth").and_then(|d| d.as_u64()).unwrap_or(99) <= depth as u64));
        assert!(summary.skipped[&SkipReason::Depth] > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_domain_is_followed() {
    let trap = trap().await;
    let (server, _) = site(60, &trap).await;
    let mut cfg = config(&server.url("/index.html"));
    cfg.scope.allowed_domains = vec!["127.0.0.2".into()];
    let (_, items) = crawl(cfg).await;
    let external: Vec<_> =
        items.iter().filter(|i| common::field(i, "url").starts_with(&trap.base_url())).collect();
    assert!(!external.is_empty(), "links to the allowed domain were followed");
    assert_eq!(external.len(), common::page_hits(&trap), "each external URL fetched once");
    assert!(external.iter().all(|i| status(i) == 404), "the trap serves nothing");
}
