//! The synthetic site over real HTTP: a crawl finds exactly the ground truth.

use crate::common;

use std::collections::BTreeSet;

use kumo_testsite::{ServerBuilder, SiteConfig};

#[tokio::test]
async fn an_http_crawl_finds_exactly_the_ground_truth_and_never_leaves_the_host() {
    let trap = ServerBuilder::new().ip("127.0.0.2".parse().unwrap()).start().await.unwrap();
    let cfg = SiteConfig {
        pages: 150,
        page_bytes: 3_000,
        external_base: Some(trap.base_url()),
        ..SiteConfig::default()
    };
    let truth = cfg.ground_truth();
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();

    let crawl = common::crawl(server.addr(), "/index.html", 10_000).await;
    assert!(crawl.status.values().all(|&s| s == 200), "{:?}", crawl.status);
    assert_eq!(crawl.status.len(), truth.unique_urls);
    let variants = crawl.status.keys().filter(|u| u.contains("?view=print")).count();
    assert_eq!(variants, truth.query_variants);
    let mut depth_counts = vec![0; truth.depth_counts.len()];
    for &d in crawl.depth.values() {
        depth_counts[d] += 1;
    }
    assert_eq!(depth_counts, truth.depth_counts);
    let skus: BTreeSet<String> = crawl
        .bodies
        .values()
        .map(|b| {
            let html = String::from_utf8_lossy(b);
            let at = html.find("data-sku=\"").unwrap() + 10;
            html[at..at + html[at..].find('"').unwrap()].to_owned()
        })
        .collect();
    assert_eq!(skus.len(), truth.documents);

    // One request per URL, and the log names exactly the crawled URLs.
    assert_eq!(server.hit_count(), truth.unique_urls);
    let logged: BTreeSet<String> = server.hits().into_iter().map(|h| h.target).collect();
    let crawled: BTreeSet<String> =
        crawl.status.keys().map(|u| u.trim_start_matches(&server.base_url()).to_owned()).collect();
    assert_eq!(logged, crawled);

    // External links really point at the trap, which a same-host crawl never touches.
    let index = String::from_utf8(crawl.bodies[&server.url("/index.html")].clone()).unwrap();
    assert!(index.contains(&format!("href=\"{}/ext/", trap.base_url())));
    assert_eq!(trap.hit_count(), 0);
    server.shutdown().await;
    trap.shutdown().await;
}

#[tokio::test]
async fn routes_status_codes_and_methods() {
    let server = ServerBuilder::new().synthetic(SiteConfig::default()).start().await.unwrap();
    let addr = server.addr();
    let index = common::get(addr, "/index.html").await;
    assert_eq!(index.status, 200);
    assert_eq!(index.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(common::get(addr, "/").await.body, index.body);

    let page = common::get(addr, "/page/50.html").await;
    let print = common::get(addr, "/page/50.html?view=print").await;
    assert_eq!(page.status, 200);
    assert_eq!(print.body, page.body);
    assert!(page.text().contains("data-sku=\"SKU-000050\""));

    for missing in ["/robots.txt", "/page/100.html", "/page/01.html", "/page/", "/nope"] {
        let r = common::get(addr, missing).await;
        assert_eq!(r.status, 404, "{missing}");
        assert!(r.text().contains("Not Found"));
    }

    let post = common::request(addr, "POST", "/index.html").await;
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));

    let head = common::request(addr, "HEAD", "/page/3.html").await;
    assert_eq!(head.status, 200);
    let len: usize = head.header("content-length").unwrap().parse().unwrap();
    assert_eq!(len, common::get(addr, "/page/3.html").await.body.len());
    server.shutdown().await;
}

#[tokio::test]
async fn same_config_same_pages_apart_from_the_host() {
    let cfg = SiteConfig { pages: 40, seed: 1234, ..SiteConfig::default() };
    let a = ServerBuilder::new().synthetic(cfg.clone()).start().await.unwrap();
    let b = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    for path in ["/index.html", "/page/0.html", "/page/39.html"] {
        let pa = common::get(a.addr(), path).await.text();
        let pb = common::get(b.addr(), path).await.text();
        let host_a = a.addr().to_string();
        let host_b = b.addr().to_string();
        assert_eq!(pa.replace(&host_a, "HOST"), pb.replace(&host_b, "HOST"));
        let size = pa.len();
        assert!((12_000..13_000).contains(&size), "{path}: {size} bytes");
    }
}
