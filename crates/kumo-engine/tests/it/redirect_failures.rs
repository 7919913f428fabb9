//! A redirect that leads nowhere (no Location header) or past the redirect limit fails its
//! request: the failure list names it, with the status, and the crawl goes on.

use crate::common;

use std::time::Duration;

use kumo_core::ErrorKind;
use kumo_engine::Engine;
use kumo_frontier::{Frontier, ScopeConfig};
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ServerBuilder};

#[tokio::test]
async fn a_redirect_without_location_and_a_chain_past_the_limit_are_failures() {
    let mut site = ServerBuilder::new()
        .fixture(
            "/",
            Fixture::html(r#"<a href="/nowhere">n</a><a href="/hop/0">chain</a><a href="/ok">ok</a>"#),
        )
        .fixture("/ok", Fixture::html("<p>fine</p>"))
        // A 302 that does not say where to go.
        .fixture("/nowhere", Fixture { status: 302, ..Fixture::default() });
    // /hop/0 → /hop/1 → … → /hop/5 → /hop/6: six redirects, one past the limit of five.
    for i in 0..6 {
        site = site.fixture(&format!("/hop/{i}"), Fixture::redirect(301, &format!("/hop/{}", i + 1)));
    }
    let server = site.fixture("/hop/6", Fixture::html("<p>end</p>")).start().await.expect("site");

    let mut cfg = common::config(&server.url("/"));
    cfg.scope = ScopeConfig { max_redirects: 5, ..ScopeConfig::default() };
    let frontier = common::frontier(&cfg);
    let mut engine = Engine::new();
    engine.init(cfg, frontier.clone(), vec![Box::new(CollectSink::new())]).expect("init");
    engine.start().await.expect("start");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait())
        .await
        .expect("crawl finished within 60 s")
        .expect("wait");

    // /, /ok, /nowhere and /hop/0 … /hop/5 were fetched; /hop/6 was not (the sixth redirect).
    assert_eq!(summary.pages, 9, "{summary}");
    assert_eq!(summary.failed, 2, "{summary}");
    let mut failures = frontier.failures().await.expect("failures");
    failures.sort_by(|a, b| a.url.cmp(&b.url));
    assert_eq!(failures.len(), 2, "{failures:?}");

    let chain = &failures[0];
    assert_eq!(chain.url, server.url("/hop/5"));
    assert_eq!(chain.kind, ErrorKind::BadRedirect);
    assert_eq!(chain.last_status, Some(301));
    assert!(
        chain.message.contains("after 5 redirects") && chain.message.contains("/hop/6"),
        "{}",
        chain.message
    );

    let nowhere = &failures[1];
    assert_eq!(nowhere.url, server.url("/nowhere"));
    assert_eq!(nowhere.kind, ErrorKind::BadRedirect);
    assert_eq!(nowhere.last_status, Some(302));
    assert_eq!(nowhere.message, "302 without a Location header");
    // The cut chain is a failure, not also a skip.
    assert!(summary.skipped.is_empty(), "{summary}");
}
