//! The HTTP cache with the RFC 9111 rules, against the test site: fresh answers are replayed,
//! stale ones revalidated with the validators exactly as the server sent them, a 304 refreshes
//! the kept lifetime (scrapy#3778), `no-store` is never kept, and a changed page replaces the
//! kept one.

use std::sync::Arc;

use kumo_core::{Request, Url};
use kumo_downloader::{CacheRules, Downloader, DownloaderConfig, HttpCache};
use kumo_testsite::{Fixture, ServerBuilder, TestServer};

fn page(body: &str, headers: &[(&str, &str)]) -> Fixture {
    let mut f = Fixture::html(body);
    for (n, v) in headers {
        f = f.with_header(n, v);
    }
    f
}

async fn get(d: &Downloader, server: &TestServer, path: &str) -> (u16, String) {
    let r = d.fetch(Request::get(Url::parse(&server.url(path)).unwrap())).await.unwrap();
    (r.status.as_u16(), String::from_utf8_lossy(&r.body).into_owned())
}

/// The requests the server saw for `path`.
fn hits(server: &TestServer, path: &str) -> Vec<kumo_testsite::Hit> {
    server.hits().into_iter().filter(|h| h.target == path).collect()
}

#[tokio::test]
async fn the_sites_own_rules_decide_what_is_replayed() {
    const LM: &str = "Tue, 03 Mar 2026 10:00:00 GMT";
    let server = ServerBuilder::new()
        .fixture("/fresh", page("fresh", &[("cache-control", "max-age=600")]))
        .fixture("/no-store", page("private", &[("cache-control", "no-store")]))
        .fixture_sequence(
            "/stale",
            vec![
                page("kept", &[("cache-control", "max-age=0"), ("etag", "W/\"v1\"")]),
                // The revalidation's 304 says the page now keeps for ten minutes.
                page("kept", &[("cache-control", "max-age=600"), ("etag", "W/\"v1\"")]),
            ],
        )
        .fixture("/last-modified", page("dated", &[("cache-control", "no-cache"), ("last-modified", LM)]))
        .fixture_sequence(
            "/changed",
            vec![
                page("one", &[("cache-control", "max-age=0"), ("etag", "\"a\"")]),
                page("two", &[("cache-control", "max-age=600"), ("etag", "\"b\"")]),
            ],
        )
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(HttpCache::open(dir.path(), CacheRules::Http).unwrap());
    let cfg = DownloaderConfig { http_cache: Some(Arc::clone(&cache)), ..DownloaderConfig::default() };
    let d = Downloader::new(1, cfg).unwrap();

    for _ in 0..3 {
        assert_eq!(get(&d, &server, "/fresh").await, (200, "fresh".into()));
    }
    assert_eq!(hits(&server, "/fresh").len(), 1, "fresh for ten minutes: asked once");

    for _ in 0..2 {
        assert_eq!(get(&d, &server, "/no-store").await, (200, "private".into()));
    }
    assert_eq!(hits(&server, "/no-store").len(), 2, "no-store is never kept");

    for _ in 0..3 {
        assert_eq!(get(&d, &server, "/stale").await, (200, "kept".into()));
    }
    let stale = hits(&server, "/stale");
    assert_eq!(stale.len(), 2, "revalidated once, then fresh from the 304's max-age");
    assert_eq!(stale[0].if_none_match, None);
    assert_eq!(stale[1].if_none_match.as_deref(), Some("W/\"v1\""), "the ETag as sent, weak mark and all");

    for _ in 0..2 {
        assert_eq!(get(&d, &server, "/last-modified").await, (200, "dated".into()));
    }
    let dated = hits(&server, "/last-modified");
    assert_eq!(dated.len(), 2, "no-cache: revalidated every time");
    assert_eq!(dated[1].if_modified_since.as_deref(), Some(LM), "Last-Modified repeated byte for byte");

    assert_eq!(get(&d, &server, "/changed").await, (200, "one".into()));
    assert_eq!(get(&d, &server, "/changed").await, (200, "two".into()), "a new ETag: the new page");
    assert_eq!(get(&d, &server, "/changed").await, (200, "two".into()), "and it is kept");
    assert_eq!(hits(&server, "/changed").len(), 2);

    assert_eq!(cache.revalidated(), 2, "/stale once, /last-modified once");
    assert_eq!(cache.hits(), 2 + 1 + 1, "/fresh twice, /stale and /changed once each");
}
