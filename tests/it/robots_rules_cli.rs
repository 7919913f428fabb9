//! robots.txt files that once voided themselves or the site (QA F9), crawled by the real
//! binary: one rule of 40 wildcards, 200 rules of 2000 wildcards, and a 20 MB file (over the
//! downloader's 10 MiB cap). In each, the plain `Disallow: /private/` still keeps the crawl
//! out of `/private/`, and the rest of the site is crawled.

use crate::common;

use bytes::Bytes;
use kumo_testsite::{Fixture, ServerBuilder, TestServer};

/// A host whose robots.txt is `robots`, and whose start page links to `links` (each a page).
async fn host(robots: String, links: &[String]) -> TestServer {
    let anchors: String = links.iter().map(|l| format!("<a href=\"{l}\">{l}</a>\n")).collect();
    let mut b = ServerBuilder::new()
        .fixture(
            "/robots.txt",
            Fixture {
                headers: vec![("content-type".into(), "text/plain".into())],
                body: Bytes::from(robots),
                ..Fixture::default()
            },
        )
        .fixture("/index.html", Fixture::html(&format!("<!DOCTYPE html><title>start</title>{anchors}")));
    for l in links {
        b = b.fixture(l, Fixture::html("<!DOCTYPE html><title>a page</title>"));
    }
    b.start().await.unwrap()
}

/// The paths `server` was asked for.
fn asked(server: &TestServer) -> Vec<String> {
    server.hits().into_iter().map(|h| h.target).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_robots_files_keep_their_plain_rules() {
    // The QA's file: the wildcard rule applies too (documented in kumo-frontier's robots.rs).
    let forty = format!("/{}$", "*a".repeat(40));
    let wild = host(
        format!("User-agent: *\nDisallow: /private/\nDisallow: {forty}\n"),
        &["/private/x.html".into(), "/public.html".into(), format!("/{}", "ba".repeat(40)), "/ab".into()],
    )
    .await;
    let mut many = "User-agent: *\nDisallow: /private/\n".to_string();
    for _ in 0..200 {
        many.push_str(&format!("Disallow: /{}$\n", "*a".repeat(2000)));
    }
    let many = host(many, &["/private/x.html".into(), "/public.html".into()]).await;
    // 20 MB: read up to 512 KiB (asked again with a Range), not refused as "unavailable".
    let mut huge = "User-agent: *\nDisallow: /private/\n".to_string();
    let filler = "# filler filler filler filler filler filler filler filler filler filler\n";
    huge.push_str(&filler.repeat(20_000_000 / filler.len()));
    huge.push_str("Disallow: /public.html\n");
    let huge = host(huge, &["/private/x.html".into(), "/public.html".into()]).await;

    let (a, b, c) = (wild.url("/index.html"), many.url("/index.html"), huge.url("/index.html"));
    let out = common::kumo(&["crawl", &a, &b, &c, "--memory", "-o", "pages.jsonl", "--no-progress"]).await;
    let err = common::stderr(&out);
    assert_eq!(common::code(&out), Some(0), "{err}");
    for server in [&wild, &many, &huge] {
        let paths = asked(server);
        assert!(!paths.iter().any(|p| p.starts_with("/private/")), "{}: {paths:?}\n{err}", server.base_url());
        assert!(paths.iter().any(|p| p == "/public.html"), "{}: {paths:?}\n{err}", server.base_url());
    }
    let wild_paths = asked(&wild);
    assert!(!wild_paths.iter().any(|p| p.ends_with("baba")), "the 40-wildcard rule holds: {wild_paths:?}");
    assert!(wild_paths.iter().any(|p| p == "/ab"), "and disallows no more: {wild_paths:?}");
    let robots = huge.hits().into_iter().filter(|h| h.target == "/robots.txt").count();
    assert_eq!(robots, 2, "the 20 MB file whole, then its first 512 KiB\n{err}");
    for s in [wild, many, huge] {
        s.shutdown().await;
    }
}
