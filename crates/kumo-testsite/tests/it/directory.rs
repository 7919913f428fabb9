//! Directory mode against the quotes-site snapshot, checked against its ground truth.

use crate::common;

use kumo_testsite::ServerBuilder;

use std::path::PathBuf;

/// The test data: `$KUMO_TESTDATA`, else the repository's `testdata/`.
fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")))
}

async fn quotes() -> kumo_testsite::TestServer {
    ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap()
}

#[tokio::test]
async fn directories_redirect_to_the_slash_form_and_serve_their_index() {
    let server = quotes().await;
    let addr = server.addr();

    let r = common::get(addr, "/author/Albert-Einstein").await;
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some("/author/Albert-Einstein/"));
    let r = common::get(addr, "/login?next=%2F").await;
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some("/login/?next=%2F"));

    let r = common::get(addr, "/author/Albert-Einstein/").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html"));
    assert!(r.text().contains("Albert Einstein"));
    assert_eq!(common::get(addr, "/").await.status, 200);
    assert_eq!(common::get(addr, "/index.html").await.status, 200);

    let css = common::get(addr, "/static/main.css").await;
    assert_eq!(css.status, 200);
    assert_eq!(css.header("content-type"), Some("text/css"));

    for missing in ["/nope/", "/nope", "/index.html/", "/static/", "/page/11/"] {
        assert_eq!(common::get(addr, missing).await.status, 404, "{missing}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn paths_that_climb_out_of_the_root_are_refused() {
    let server = quotes().await;
    for evil in [
        "/../etc/passwd",
        "/static/../../quotes-site.ground-truth.json",
        "/%2e%2e/quotes-site.ground-truth.json",
        "/static%2F..%2F..%2Fquotes-site.urls.txt",
    ] {
        let r = common::get(server.addr(), evil).await;
        assert!(r.status == 403 || r.status == 404, "{evil}: {}", r.status);
        assert!(!r.text().contains("html_pages_200"), "{evil}");
    }
}

#[tokio::test]
async fn a_crawl_from_the_root_matches_the_quotes_site_ground_truth() {
    let server = quotes().await;
    let crawl = common::crawl(server.addr(), "/", 1_000).await;
    let ok = crawl.status.values().filter(|&&s| s == 200).count();
    let moved = crawl.status.values().filter(|&&s| s == 301).count();
    assert_eq!((ok, moved), (214, 51));
    assert_eq!(crawl.status.len(), 265, "nothing but 200s and 301s");

    let expected = std::fs::read_to_string(testdata().join("quotes-site.urls.txt")).unwrap();
    let mut expected: Vec<String> = expected.lines().map(|p| server.url(p)).collect();
    expected.sort();
    let mut found: Vec<String> =
        crawl.status.iter().filter(|(_, s)| **s == 200).map(|(u, _)| u.clone()).collect();
    found.sort();
    assert_eq!(found, expected);
}

#[tokio::test]
async fn a_missing_root_fails_to_start() {
    let err = ServerBuilder::new().directory("/definitely/not/here").start().await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
