//! Sitemaps seed the crawl: an index, a gzipped urlset and a plain one, given explicitly or
//! found in robots.txt. The pages they list are linked from nowhere else.

use crate::common;

use std::io::Write;

use bytes::Bytes;
use common::{config, crawl, field, status};
use kumo_core::Url;
use kumo_testsite::{Fixture, ServerBuilder, TestServer};

fn xml(body: &str) -> Fixture {
    Fixture {
        headers: vec![("content-type".into(), "application/xml".into())],
        body: Bytes::copy_from_slice(body.as_bytes()),
        ..Fixture::default()
    }
}

fn gzipped(body: &str) -> Fixture {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(body.as_bytes()).unwrap();
    Fixture {
        headers: vec![("content-type".into(), "application/gzip".into())],
        body: Bytes::from(gz.finish().unwrap()),
        ..Fixture::default()
    }
}

/// A free port on 127.0.0.1, so robots.txt can name the server's own sitemap URL.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn site(port: u16) -> TestServer {
    let base = format!("http://127.0.0.1:{port}");
    ServerBuilder::new()
        .port(port)
        .fixture("/robots.txt", Fixture::html(&format!("User-agent: *\nSitemap: {base}/sitemap_index.xml\n")))
        .fixture("/", Fixture::html("<p>no links here</p>"))
        .fixture(
            "/sitemap_index.xml",
            xml(&format!(
                r#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
                <sitemap><loc>{base}/sitemap1.xml.gz</loc></sitemap>
                <sitemap><loc>{base}/sitemap2.xml</loc><lastmod>2026-11-01</lastmod></sitemap>
                </sitemapindex>"#
            )),
        )
        .fixture(
            "/sitemap1.xml.gz",
            gzipped(&format!(
                "<urlset><url><loc>{base}/a</loc></url><url><loc>{base}/b</loc></url>\
                 <url><loc>https://elsewhere.example/x</loc></url></urlset>"
            )),
        )
        .fixture(
            "/sitemap2.xml",
            xml(&format!(
                "<urlset><url><loc>{base}/c</loc><lastmod>2026-10-31</lastmod><priority>0.9</priority></url></urlset>"
            )),
        )
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .fixture("/c", Fixture::html("c"))
        .start()
        .await
        .unwrap()
}

fn fetched_pages(items: &[kumo_core::Item]) -> Vec<String> {
    let mut v: Vec<String> = items
        .iter()
        .filter(|i| status(i) == 200)
        .map(|i| Url::parse(field(i, "url")).unwrap().path().to_string())
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_sitemap_index_seeds_the_crawl() {
    let server = site(free_port()).await;
    let mut cfg = config(&server.url("/"));
    cfg.seeds.clear();
    cfg.sitemaps = vec![Url::parse(&server.url("/sitemap_index.xml")).unwrap()];
    let (summary, items) = crawl(cfg).await;
    assert_eq!(
        fetched_pages(&items),
        ["/a", "/b", "/c", "/sitemap1.xml.gz", "/sitemap2.xml", "/sitemap_index.xml"]
    );
    assert!(summary.skipped[&kumo_core::SkipReason::Domain] >= 1, "the off-site entry is out of scope");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_sitemaps_are_followed_when_asked() {
    let server = site(free_port()).await;
    let mut cfg = config(&server.url("/"));
    cfg.robots_sitemaps = true;
    let (_, items) = crawl(cfg).await;
    assert_eq!(
        fetched_pages(&items),
        ["/", "/a", "/b", "/c", "/sitemap1.xml.gz", "/sitemap2.xml", "/sitemap_index.xml"]
    );

    let server = site(free_port()).await;
    let (_, items) = crawl(config(&server.url("/"))).await;
    assert_eq!(fetched_pages(&items), ["/"], "off by default");
}
