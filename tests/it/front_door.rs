//! Depending on `kumo` alone is enough: the Collector, the engine's settings and summary, and
//! the embedded store are reachable from its front door, and a crawl runs through them.

use std::sync::{Arc, Mutex};

use kumo::testsite::{ServerBuilder, SiteConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_crawls_through_the_front_door() {
    let site = SiteConfig { pages: 20, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let titles = Arc::new(Mutex::new(0usize));
    let seen = titles.clone();
    let collector = kumo::Collector::new().on_html("title", move |_, _| *seen.lock().unwrap() += 1).on_html(
        "a[href]",
        |a, ctx| {
            if let Some(href) = a.attr("href") {
                ctx.visit(href);
            }
        },
    );
    let seed = kumo::core::Url::parse(&server.url("/index.html")).unwrap();
    let cfg = kumo::CrawlConfig { seeds: vec![seed], ..Default::default() };
    let summary: kumo::Summary =
        kumo::spider::crawl(Arc::new(collector), cfg, Default::default(), vec![]).await.unwrap();
    assert_eq!(summary.pages as usize, truth.unique_urls);
    assert_eq!(*titles.lock().unwrap(), truth.unique_urls, "one title per page");

    let dir = tempfile::tempdir().unwrap();
    let store =
        kumo::EmbeddedStore::open(&dir.path().join("state"), kumo::EmbeddedConfig::default()).unwrap();
    assert!(!store.resumed(), "a new state");
}
