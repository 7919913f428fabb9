//! Retries as the server sees them: what a server's numbers may do to the crawl (nothing
//! worse than a capped wait), bodies cut short, and a retried request waiting alone while its
//! host goes on.

mod common;

use std::time::{Duration, Instant};

use common::{config, crawl, status};
use kumo_testsite::{Fixture, Hit, ServerBuilder};

fn links(paths: &[&str]) -> String {
    paths.iter().map(|p| format!("<a href=\"{p}\">{p}</a>")).collect()
}

fn hits_of(hits: &[Hit], path: &str) -> Vec<Instant> {
    hits.iter().filter(|h| h.target == path).map(|h| h.at).collect()
}

/// `Retry-After: 18446744073709551615` (u64::MAX seconds) is more than any clock can add: the
/// request waits the retry cap, its host the pause cap, and nothing panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_no_clock_can_add_is_capped() {
    let huge = Fixture::status(429, "slow down").with_header("retry-after", "18446744073709551615");
    let server = ServerBuilder::new()
        .fixture_sequence("/busy", vec![huge, Fixture::html("ok")])
        .fixture("/", Fixture::html(&links(&["/busy"])))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    cfg.max_retry_after = Duration::from_millis(200);
    cfg.max_host_pause = Duration::from_millis(300);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.iter().filter(|i| status(i) == 200).count(), 2, "the busy page came through");
    assert_eq!(summary.retries, 1);
    let busy = hits_of(&server.hits(), "/busy");
    assert_eq!(busy.len(), 2);
    assert!(busy[1].duration_since(busy[0]) >= Duration::from_millis(300), "the host's pause held");
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
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
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
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
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
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
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

/// A `Retry-After` of a day pauses the host only up to the pause cap; the request itself
/// waits the retry cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_long_retry_after_pauses_the_host_up_to_the_cap() {
    let day = Fixture::status(503, "maintenance").with_header("retry-after", "86400");
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/down", "/a", "/b"])))
        .fixture_sequence("/down", vec![day, Fixture::html("back")])
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    cfg.politeness.default.parallelism = 1;
    cfg.max_retry_after = Duration::from_millis(500);
    cfg.max_host_pause = Duration::from_millis(300);
    let started = Instant::now();
    let (summary, items) = crawl(cfg).await;
    assert!(started.elapsed() < Duration::from_secs(20), "not a day: {:?}", started.elapsed());
    assert_eq!(items.len(), 4);
    assert_eq!(summary.retries, 1);
    let hits = server.hits();
    let down = hits_of(&hits, "/down")[0];
    let after: Vec<&Hit> = hits.iter().filter(|h| h.at > down).collect();
    assert!(
        after.iter().all(|h| h.at.duration_since(down) >= Duration::from_millis(300)),
        "the host was paused for the cap"
    );
    let retry = hits_of(&hits, "/down")[1];
    assert!(retry.duration_since(down) >= Duration::from_millis(500), "the request waited the retry cap");
}
