//! Retries as the server sees them: what a server's numbers may do to the crawl (nothing
//! worse than a capped wait), bodies cut short or trickled, a retried request waiting alone
//! while its host goes on, and which answers pause the whole host (a 429, 503s from several
//! URLs; each URL once).

use crate::common;

use std::time::{Duration, Instant};

use common::{config, crawl, crawl_keeping_frontier, status};
use kumo_engine::CrawlConfig;
use kumo_frontier::Frontier;
use kumo_testsite::{Fixture, Hit, ServerBuilder, TestServer};

fn links(paths: &[&str]) -> String {
    paths.iter().map(|p| format!("<a href=\"{p}\">{p}</a>")).collect()
}

/// The crawl of `server` from `/`, robots.txt not asked (the fixtures serve none).
fn site_config(server: &TestServer) -> CrawlConfig {
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    cfg
}

fn hits_of(hits: &[Hit], path: &str) -> Vec<Instant> {
    hits.iter().filter(|h| h.target == path).map(|h| h.at).collect()
}

/// `Retry-After: 18446744073709551615` (u64::MAX seconds) is more than any clock can add, and
/// more than `max_retry_after`: not believed, so the request retries on its back-off, its host
/// pauses only for that back-off, and nothing panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_no_clock_can_add_is_not_believed() {
    let huge = Fixture::status(429, "slow down").with_header("retry-after", "18446744073709551615");
    let server = ServerBuilder::new()
        .fixture_sequence("/busy", vec![huge, Fixture::html("ok")])
        .fixture("/", Fixture::html(&links(&["/busy"])))
        .start()
        .await
        .unwrap();
    let mut cfg = site_config(&server);
    cfg.max_retry_after = Duration::from_secs(5);
    cfg.max_host_pause = Duration::from_secs(30);
    cfg.retry_backoff = Duration::from_millis(200);
    let started = Instant::now();
    let (summary, items) = crawl(cfg).await;
    assert!(started.elapsed() < Duration::from_secs(5), "no cap was waited out: {:?}", started.elapsed());
    assert_eq!(items.iter().filter(|i| status(i) == 200).count(), 2, "the busy page came through");
    assert_eq!(summary.retries, 1);
    let busy = hits_of(&server.hits(), "/busy");
    assert_eq!(busy.len(), 2);
    assert!(busy[1].duration_since(busy[0]) >= Duration::from_millis(100), "the back-off held (with jitter)");
}

/// A body cut short (a reset mid-body, or a Content-Length longer than what comes before the
/// connection closes) is a network failure: retried, and called a broken body, not a decoding
/// error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_short_is_retried() {
    let body = "z".repeat(5000);
    let reset = Fixture::html(&body).trickle(250, Duration::from_millis(10)).reset_after(1000);
    let short = Fixture::html(&body)
        .with_header("content-length", "5000")
        .trickle(250, Duration::from_millis(10))
        .reset_after(1000);
    let server = ServerBuilder::new()
        .fixture_sequence("/reset", vec![reset, Fixture::html("ok")])
        .fixture_sequence("/short", vec![short, Fixture::html("ok")])
        .fixture("/", Fixture::html(&links(&["/reset", "/short"])))
        .start()
        .await
        .unwrap();
    let cfg = site_config(&server);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.iter().filter(|i| status(i) == 200).count(), 3, "both pages on their second try");
    assert_eq!((summary.retries, summary.failed), (2, 0));
    assert_eq!(summary.errors.get("downloader:body"), Some(&2), "{:?}", summary.errors);
    assert!(!summary.errors.contains_key("downloader:decode"), "{:?}", summary.errors);
}

/// A retried request waits out its back-off alone: its host serves the other requests
/// meanwhile. One host, one request at a time, a page that fails once among twelve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_waits_alone_while_its_host_goes_on() {
    let pages: Vec<String> = (0..12).map(|i| format!("/p{i}")).collect();
    let paths: Vec<&str> = pages.iter().map(String::as_str).collect();
    let mut b = ServerBuilder::new().fixture("/", Fixture::html(&links(&paths)));
    for p in &paths {
        b = b.fixture(p, Fixture::html(p));
    }
    b = b.fixture_sequence("/p2", vec![Fixture::status(500, "flaky"), Fixture::html("p2")]);
    let server = b.start().await.unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 1;
    // At least 1 s with the jitter: far longer than the other eleven pages take.
    cfg.retry_backoff = Duration::from_secs(2);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 13);
    assert_eq!(summary.retries, 1);
    let hits = server.hits();
    let flaky = hits_of(&hits, "/p2");
    assert_eq!(flaky.len(), 2);
    assert!(flaky[1].duration_since(flaky[0]) >= Duration::from_secs(1), "the retry waited its back-off");
    let last = hits.last().unwrap();
    assert_eq!(last.target, "/p2", "every other page came before the retry, not after it");
    let others_done = hits.iter().rev().nth(1).unwrap().at;
    assert!(others_done < flaky[1], "the host was not held");
}

/// A bare 429 (no Retry-After) still pauses its host for the request's back-off: no other page
/// of the host is asked for meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_429_pauses_its_host_for_the_back_off() {
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/busy", "/a", "/b"])))
        .fixture_sequence("/busy", vec![Fixture::status(429, "slow down"), Fixture::html("busy")])
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 1;
    cfg.retry_backoff = Duration::from_millis(400);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 4);
    assert_eq!(summary.retries, 1);
    let hits = server.hits();
    let refused = hits_of(&hits, "/busy")[0];
    let after: Vec<_> = hits.iter().filter(|h| h.at > refused).collect();
    assert!(!after.is_empty());
    for h in after {
        assert!(
            h.at.duration_since(refused) >= Duration::from_millis(400),
            "{} came during the pause",
            h.target
        );
    }
}

/// A day's `Retry-After` on one URL delays that URL alone: the host's fifty other pages all
/// come before its retry, the crawl ends in seconds (a pause of the host would last 60 s),
/// and the host is never paused, not even when the retries answer the same; a day is longer than
/// the crawl believes, so the URL retries on its back-off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_long_retry_after_delays_only_its_url() {
    let day = || Fixture::status(503, "maintenance").with_header("retry-after", "86400");
    let pages: Vec<String> = (0..50).map(|i| format!("/p{i}")).collect();
    let paths: Vec<&str> = std::iter::once("/down").chain(pages.iter().map(String::as_str)).collect();
    let mut b = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&paths)))
        .fixture_sequence("/down", vec![day(), day(), Fixture::html("back")]);
    for p in &pages {
        b = b.fixture(p, Fixture::html(p));
    }
    let server = b.start().await.unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 2;
    cfg.max_retry_after = Duration::from_secs(30);
    cfg.max_host_pause = Duration::from_secs(60);
    // Long enough for the fifty pages to come first on a busy machine.
    cfg.retry_backoff = Duration::from_secs(2);
    let started = Instant::now();
    let (summary, items, frontier) = crawl_keeping_frontier(cfg).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "the crawl waited out a pause: {took:?}");
    assert_eq!(items.len(), 52);
    assert_eq!(summary.retries, 2);
    let hits = server.hits();
    let down = hits_of(&hits, "/down");
    assert_eq!(down.len(), 3);
    assert!(down[1].duration_since(down[0]) < Duration::from_secs(5), "the URL waited its back-off only");
    for p in &pages {
        let at = hits_of(&hits, p);
        assert!(at.len() == 1 && at[0] < down[1], "{p} came once, before the retry: {at:?}");
    }
    let hosts = frontier.hosts().await.unwrap();
    assert!(hosts.iter().all(|h| h.paused_for.is_none()), "the host was paused: {hosts:?}");
}

/// 503s with a `Retry-After` from three different URLs of a host speak for the host: it is
/// paused from the third on, for the shortest wait they asked for; the first two did not
/// pause it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_afters_from_three_urls_pause_the_host() {
    let down = |secs: &str, path: &str| {
        vec![Fixture::status(503, "busy").with_header("retry-after", secs), Fixture::html(path)]
    };
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/d1", "/d2", "/d3", "/a", "/b"])))
        .fixture_sequence("/d1", down("60", "/d1"))
        .fixture_sequence("/d2", down("3", "/d2"))
        .fixture_sequence("/d3", down("86400", "/d3"))
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 1;
    cfg.max_retry_after = Duration::from_secs(1);
    cfg.max_host_pause = Duration::from_secs(20);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 6);
    assert_eq!(summary.retries, 3);
    let hits = server.hits();
    let (d1, d2, d3) = (hits_of(&hits, "/d1"), hits_of(&hits, "/d2"), hits_of(&hits, "/d3"));
    assert!(d2[0] < d1[1] && d3[0] < d1[1], "one or two URLs' 503s did not pause the host");
    let after: Vec<&Hit> = hits.iter().filter(|h| h.at > d3[0]).collect();
    assert_eq!(after.len(), 5, "three retries, /a and /b");
    let first = after.iter().map(|h| h.at.duration_since(d3[0])).min().unwrap();
    assert!(first >= Duration::from_secs(3), "the host was paused for the shortest wait: {first:?}");
    assert!(first < Duration::from_secs(15), "not for the longest (20 s, the cap): {first:?}");
}

/// A 429 speaks for its host: it pauses the host, but one URL does so once. When its retry
/// meets a 429 again, only the URL waits: the host's other pages come before its next try.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_pauses_its_host_once_per_url() {
    let busy = || Fixture::status(429, "slow down").with_header("retry-after", "3");
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/busy", "/a", "/b", "/c"])))
        .fixture_sequence("/busy", vec![busy(), busy(), Fixture::html("busy")])
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .fixture("/c", Fixture::html("c"))
        .start()
        .await
        .unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 1;
    cfg.max_retry_after = Duration::from_secs(3);
    cfg.max_host_pause = Duration::from_secs(3);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 5);
    assert_eq!(summary.retries, 2);
    let hits = server.hits();
    let busy = hits_of(&hits, "/busy");
    assert_eq!(busy.len(), 3);
    assert!(
        hits.iter()
            .filter(|h| h.at > busy[0])
            .all(|h| h.at.duration_since(busy[0]) >= Duration::from_secs(3)),
        "the first 429 paused the host"
    );
    for p in ["/a", "/b", "/c"] {
        assert!(
            hits_of(&hits, p)[0] < busy[2],
            "{p} came before the third try: the second 429 paused nothing"
        );
    }
    assert!(busy[2].duration_since(busy[1]) >= Duration::from_secs(1), "the URL waited its own Retry-After");
}

/// Bodies that trickle (a byte every half second) do not hold their host: each is cut one
/// window after its head, tried again once, and fails as a timeout, while the host's normal
/// pages all come. Without the minimum rate, ten trickles over four slots would hold the host
/// for 10 × 3 tries × the 10 s timeout / 4 = 75 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_bodies_free_their_host_slots() {
    let trickles: Vec<String> = (0..10).map(|i| format!("/t{i}")).collect();
    let pages: Vec<String> = (0..40).map(|i| format!("/p{i}")).collect();
    // The trickles first: they take every slot before a normal page can.
    let paths: Vec<&str> = trickles.iter().chain(&pages).map(String::as_str).collect();
    let mut b = ServerBuilder::new().fixture("/", Fixture::html(&links(&paths)));
    for t in &trickles {
        b = b.fixture(t, Fixture::html(&"z".repeat(500)).trickle(1, Duration::from_millis(500)));
    }
    for p in &pages {
        b = b.fixture(p, Fixture::html(p));
    }
    let server = b.start().await.unwrap();
    let mut cfg = site_config(&server);
    cfg.politeness.default.parallelism = 4;
    cfg.downloader.min_body_rate = 100;
    cfg.downloader.min_body_window = Duration::from_secs(1);
    let started = Instant::now();
    let (summary, items, frontier) = crawl_keeping_frontier(cfg).await;
    let took = started.elapsed();
    // 20 tries of about a second over 4 slots: some 5 s.
    assert!(took < Duration::from_secs(20), "the trickles held the host: {took:?}");
    assert_eq!(items.iter().filter(|i| status(i) == 200).count(), 41, "every normal page came");
    let hits = server.hits();
    for t in &trickles {
        assert_eq!(hits_of(&hits, t).len(), 2, "{t}: tried again once, not twice");
    }
    assert_eq!(summary.failed, 10);
    assert_eq!(summary.errors.get("downloader:timeout"), Some(&20), "{:?}", summary.errors);
    let failures = frontier.failures().await.unwrap();
    assert_eq!(failures.len(), 10);
    for f in &failures {
        assert_eq!(f.kind, kumo_core::ErrorKind::Timeout, "{}: {}", f.url, f.message);
        assert!(f.message.contains("slower than 100 bytes/s"), "{}", f.message);
        assert_eq!(f.attempts, 2, "{}", f.url);
    }
}
