//! The engine's status machine in real runs, stopping (graceful and now), limits, the error
//! stream, redirects and failures.

use crate::common;

use std::time::Duration;

use common::{config, crawl, frontier, status};
use kumo_core::{ErrorKind, SkipReason};
use kumo_engine::{Engine, EngineError, Status, StopCause, StopMode};
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_through_a_run_and_a_restart() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 30, ..Default::default() }).start().await.unwrap();
    let mut engine = Engine::new();
    assert_eq!(engine.status(), Status::Uninitialized);
    assert!(matches!(engine.start().await, Err(EngineError::Transition(_))), "start before init");
    assert!(engine.stop(StopMode::Graceful).is_err(), "stop before init");

    let cfg = config(&server.url("/index.html"));
    let f = frontier(&cfg);
    engine.init(cfg.clone(), f.clone(), vec![Box::new(CollectSink::new())]).unwrap();
    assert_eq!(engine.status(), Status::Initialized);
    assert!(engine.stop(StopMode::Graceful).is_err(), "stop before start");
    engine.start().await.unwrap();
    assert!(matches!(engine.status(), Status::Started | Status::Stopping | Status::Stopped));
    let summary = engine.wait().await.unwrap();
    assert_eq!(engine.status(), Status::Stopped);
    assert_eq!(summary.stopped_by, StopCause::Drained);
    assert!(engine.stop(StopMode::Graceful).is_err(), "stop after stopped");

    // Started again, it resumes from the same frontier: everything is seen, nothing refetched.
    let hits = server.hit_count();
    engine.start().await.unwrap();
    let again = engine.wait().await.unwrap();
    assert_eq!(again.pages, 0);
    assert_eq!(server.hit_count(), hits);

    // Re-initialized after a stop, it runs a new crawl.
    engine
        .init(cfg, frontier(&config(&server.url("/index.html"))), vec![Box::new(CollectSink::new())])
        .unwrap();
    engine.start().await.unwrap();
    assert_eq!(engine.wait().await.unwrap().pages, summary.pages);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_settings_roll_back_to_uninitialized() {
    let mut engine = Engine::new();
    let mut cfg = config("http://127.0.0.1:1/");
    cfg.concurrency = 0;
    let err = engine.init(cfg.clone(), frontier(&cfg), vec![]).unwrap_err();
    assert!(err.to_string().contains("concurrency"), "{err}");
    assert_eq!(engine.status(), Status::Uninitialized);
    cfg.concurrency = 1;
    cfg.seeds = vec!["ftp://127.0.0.1/".parse().unwrap()];
    let err = engine.init(cfg.clone(), frontier(&cfg), vec![]).unwrap_err();
    assert!(err.to_string().contains("not http or https"), "{err}");
}

/// A site whose every page is slow, so a stop lands while requests are in flight.
async fn slow_site() -> kumo_testsite::TestServer {
    let mut b = ServerBuilder::new();
    let mut index = String::from("<html><body>");
    for i in 0..40 {
        index.push_str(&format!("<a href=\"/p/{i}\">{i}</a>"));
        let body = "x".repeat(2000);
        b = b.fixture(&format!("/p/{i}"), Fixture::html(&body).trickle(500, Duration::from_millis(40)));
    }
    b.fixture("/", Fixture::html(&index)).start().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_stop_finishes_what_is_in_flight() {
    let server = slow_site().await;
    let mut cfg = config(&server.url("/"));
    cfg.concurrency = 4;
    let sink = CollectSink::new();
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(sink.clone())]).unwrap();
    engine.start().await.unwrap();
    // Bounded wait for the crawl to get going.
    for _ in 0..100 {
        if server.hit_count() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    engine.stop(StopMode::Graceful).unwrap();
    assert_eq!(engine.status(), Status::Stopping);
    let summary = tokio::time::timeout(Duration::from_secs(30), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.stopped_by, StopCause::Stopped);
    assert_eq!(summary.frontier.leased, 0, "in-flight requests were completed");
    assert!(summary.frontier.queued > 0, "the rest stayed queued");
    assert_eq!(sink.snapshot().len() as u64, summary.pages);
    assert_eq!(common::page_hits(&server) as u64, summary.pages, "every request sent was recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_now_abandons_what_is_in_flight() {
    let server = slow_site().await;
    let mut cfg = config(&server.url("/"));
    cfg.concurrency = 4;
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(CollectSink::new())]).unwrap();
    engine.start().await.unwrap();
    for _ in 0..100 {
        if server.hit_count() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    engine.stop(StopMode::Now).unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(5), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.stopped_by, StopCause::StoppedNow);
    assert!(summary.frontier.leased > 0, "abandoned leases are still owned by the frontier");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_is_exact() {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 200, ..Default::default() })
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/index.html"));
    cfg.max_pages = 37;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(summary.stopped_by, StopCause::MaxPages);
    assert_eq!(items.len(), 37);
    assert_eq!(common::page_hits(&server), 37);
}

/// `max_items` is exact: the items of the pages in flight at the limit are held, not written,
/// and the engine started again writes them first, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_items_is_exact_and_a_restart_writes_what_was_held() {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 200, ..Default::default() })
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/index.html"));
    cfg.max_items = 10;
    let sink = CollectSink::new();
    let items = sink.items();
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(sink)]).unwrap();
    engine.start().await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    assert_eq!((first.stopped_by, first.items), (StopCause::MaxItems, 10));
    assert_eq!(items.lock().unwrap().len(), 10);
    assert!(first.items_held > 0, "16 requests in flight at the limit found more");

    // A memory frontier keeps no counters: the run counts its own ten again.
    engine.start().await.unwrap();
    let second = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    assert_eq!(second.stopped_by, StopCause::MaxItems);
    let urls: Vec<String> = items.lock().unwrap().iter().map(|i| i.get("url").unwrap().to_string()).collect();
    let unique: std::collections::BTreeSet<&String> = urls.iter().collect();
    assert_eq!((urls.len(), unique.len()), (20, 20), "ten more, none twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_duration_stops_gracefully() {
    let server = slow_site().await;
    let mut cfg = config(&server.url("/"));
    cfg.concurrency = 2;
    cfg.max_duration = Some(Duration::from_millis(300));
    let (summary, _) = crawl(cfg).await;
    assert_eq!(summary.stopped_by, StopCause::MaxDuration);
    assert_eq!(summary.frontier.leased, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_error_stream_never_blocks_the_crawl() {
    // Forty links to a port where nothing listens: forty connect errors, a buffer of two.
    let mut index = String::new();
    for i in 0..40 {
        index.push_str(&format!("<a href=\"http://127.0.0.1:1/{i}\">x</a>"));
    }
    let server = ServerBuilder::new().fixture("/", Fixture::html(&index)).start().await.unwrap();
    let mut cfg = config(&server.url("/"));
    // Page fetches' connect errors, not robots.txt's (which would disallow the dead host).
    cfg.robots.obey = false;
    cfg.max_retries = 1;
    cfg.error_buffer = 2;
    let (summary, _) = crawl(cfg).await;
    assert_eq!(summary.failed, 40);
    assert_eq!(summary.retries, 40);
    assert_eq!(summary.errors["downloader:connect"], 80);
    assert_eq!(summary.errors_dropped, 78, "two kept for the (absent) reader, the rest counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_hop_by_hop_up_to_the_limit() {
    let mut b = ServerBuilder::new();
    for i in 0..20 {
        b = b.fixture(&format!("/r/{i}"), Fixture::redirect(302, &format!("/r/{}", i + 1)));
    }
    let server = b
        .fixture("/", Fixture::html("<a href=/loop/a>a</a><a href=/r/0>r</a><a href=/away>x</a>"))
        .fixture("/loop/a", Fixture::redirect(301, "/loop/b"))
        .fixture("/loop/b", Fixture::redirect(301, "/loop/a"))
        .fixture("/away", Fixture::redirect(301, "mailto:someone@example.com"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.scope.max_redirects = 5;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(server.hits().iter().filter(|h| h.target.starts_with("/r/")).count(), 6, "/r/0 and five hops");
    // The chain cut at the limit fails its last hop's request (see redirect_failures.rs).
    assert!(!summary.skipped.contains_key(&SkipReason::TooManyRedirects), "{summary}");
    assert_eq!(summary.failed, 1, "{summary}");
    assert_eq!(
        server.hits().iter().filter(|h| h.target.starts_with("/loop/")).count(),
        2,
        "a loop ends when it comes back to a seen URL"
    );
    assert_eq!(summary.skipped[&SkipReason::Scheme], 1, "a redirect to a non-http scheme is skipped");
    let hop = items.iter().find(|i| common::field(i, "url").ends_with("/r/1")).unwrap();
    assert!(common::field(hop, "redirected_from").ends_with("/r/0"));
    assert_eq!(status(hop), 302);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_a_typed_failure() {
    let big = "y".repeat(200_000);
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html("<a href=/big>big</a><a href=/small>s</a>"))
        .fixture("/big", Fixture::html(&big))
        .fixture("/small", Fixture::html("ok"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.downloader.max_body_bytes = 100_000;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 2, "the root and /small");
    assert_eq!(summary.failed, 1);
    assert_eq!(summary.errors["downloader:too-large"], 1, "too large is not retried");
    assert_eq!(ErrorKind::TooLarge.as_str(), "too-large");
}

/// An output that refuses the records of one page.
struct Refusing;

#[async_trait::async_trait]
impl kumo_pipeline::Sink for Refusing {
    fn name(&self) -> String {
        "refusing".into()
    }

    async fn write(&mut self, items: &[kumo_core::Item]) -> Result<(), kumo_pipeline::SinkError> {
        match items.iter().any(|i| i.get("url").and_then(|u| u.as_str()).is_some_and(|u| u.ends_with("/bad")))
        {
            true => Err(kumo_pipeline::SinkError::Resume { target: "refusing".into(), reason: "no".into() }),
            false => Ok(()),
        }
    }

    async fn flush(&mut self) -> Result<(), kumo_pipeline::SinkError> {
        Ok(())
    }
}

/// A record an output refuses is never lost in silence: the crawl stops there, and the summary
/// says why and how many items were not confirmed written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_an_output_refuses_stops_the_crawl_and_is_in_the_summary() {
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html("<a href=/bad>b</a>"))
        .fixture("/bad", Fixture::html("bad"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    let mut engine = Engine::new();
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(Refusing)]).unwrap();
    engine.start().await.unwrap();
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.stopped_by, kumo_engine::StopCause::OutputError);
    assert!(summary.items_unwritten >= 1, "the refused page's record: {summary}");
    assert!(summary.stop_error.as_deref().is_some_and(|e| e.contains("no")), "{:?}", summary.stop_error);
    assert!(summary.to_string().contains("stopped by:"), "{summary}");
}
