//! `--http-cache DIR`: a second run answers every request from the cache (the server's log
//! proves none reached it) and writes the same records.

use crate::common;

use std::path::Path;

use common::{kumo_in, small_site, stderr};

/// The output file's lines, sorted (the order pages finish in may differ between runs).
fn sorted_lines(path: &Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_run_again_on_the_cache_asks_the_site_nothing() {
    let (server, truth) = small_site(60).await;
    let cache = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("title", "h1.product-title"));
    let cache_arg = cache.path().to_str().unwrap();
    let mut outputs = Vec::new();
    let mut hits = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shop.toml"), &spider).unwrap();
        let out = kumo_in(dir.path(), &["crawl", "shop.toml", "--http-cache", cache_arg]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        outputs.push(sorted_lines(&dir.path().join("products.jsonl")));
        hits.push(server.hit_count());
        if hits.len() == 2 {
            assert!(stderr(&out).contains("answers replayed, 0 after a 304, 0 kept"), "{}", stderr(&out));
        }
    }
    // robots.txt (a 404, kept like any answer) and every page: the first run only.
    assert_eq!(hits[0], truth.unique_urls + 1, "the first run fetched every page once");
    assert_eq!(hits[1], hits[0], "the second run sent no request");
    assert_eq!(outputs[0].len(), truth.unique_urls);
    assert_eq!(outputs[0], outputs[1], "the same items");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_crawl_on_the_cache_writes_the_same_records() {
    let (server, truth) = small_site(40).await;
    let cache = tempfile::tempdir().unwrap();
    let cache_arg = cache.path().to_str().unwrap();
    let url = server.url("/index.html");
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let args = ["crawl", &url, "-o", "pages.jsonl", "--http-cache", cache_arg, "--no-progress"];
        let out = kumo_in(dir.path(), &args).await;
        assert!(out.status.success(), "{}", stderr(&out));
        outputs.push(sorted_lines(&dir.path().join("pages.jsonl")));
    }
    assert_eq!(server.hit_count(), truth.unique_urls + 1, "pages and robots.txt, once each");
    assert_eq!(outputs[0].len(), truth.unique_urls);
    // Replayed records keep the time of the fetch they replay. (Which page found a URL first,
    // its referrer and depth, depends on the order pages finish in.)
    let fetched = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!("{} {} {} {} {}", v["url"], v["status"], v["title"], v["bytes"], v["fetched_at"])
            })
            .collect()
    };
    assert_eq!(fetched(&outputs[0]), fetched(&outputs[1]));

    // A cache that cannot be made is a usage error, before anything is crawled.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "").unwrap();
    let out = kumo_in(dir.path(), &["crawl", &url, "--http-cache", "file/sub"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot use file/sub as the HTTP cache"), "{}", stderr(&out));
}
