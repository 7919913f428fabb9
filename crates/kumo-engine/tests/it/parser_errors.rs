//! The parser stage's own errors — a redirect whose `Location` is no URL, a sitemap that does
//! not decode, a link that does not parse — reach `Listener::error` as well as the error
//! stream, one call each, and the summary counts them by kind.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kumo_core::{ErrorKind, Stage, Url};
use kumo_engine::{CrawlError, Engine, Listener};
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ServerBuilder};

/// Keeps every error it is told about.
#[derive(Default)]
struct Recording(Mutex<Vec<CrawlError>>);

impl Listener for Recording {
    fn error(&self, e: &CrawlError) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(e.clone());
    }
}

/// (stage, kind, path of the URL) of each error, sorted, to compare listener and stream.
fn summary_of(errors: &[CrawlError]) -> Vec<(Stage, ErrorKind, String)> {
    let mut v: Vec<_> = errors
        .iter()
        .map(|e| {
            let url = e.url.as_deref().map(|u| Url::parse(u).unwrap().path().to_string()).unwrap_or_default();
            (e.stage, e.kind, url)
        })
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_redirects_broken_sitemaps_and_bad_links_reach_the_listener_and_the_summary() {
    let not_a_sitemap = Fixture {
        headers: vec![("content-type".into(), "application/xml".into())],
        body: Bytes::from_static(b"<?xml version=\"1.0\"?><feed><entry/></feed>"),
        ..Fixture::default()
    };
    let server = ServerBuilder::new()
        // `http://[::1` is no URL: the page is read, its bad link reported.
        .fixture("/", Fixture::html(r#"<a href="/moved">moved</a><a href="http://[::1/x">bad</a>"#))
        // `http://[::1` is no URL (the IPv6 address is not closed): a bad redirect.
        .fixture("/moved", Fixture::redirect(302, "http://[::1"))
        .fixture("/sitemap.xml", not_a_sitemap)
        .start()
        .await
        .expect("site");
    let mut cfg = common::config(&server.url("/"));
    cfg.sitemaps = vec![Url::parse(&server.url("/sitemap.xml")).unwrap()];
    let heard = Arc::new(Recording::default());
    cfg.listeners.push(heard.clone());

    let mut engine = Engine::new();
    let frontier = common::frontier(&cfg);
    engine.init(cfg, frontier, vec![Box::new(CollectSink::new())]).expect("init");
    let mut stream = engine.errors().expect("the error stream");
    engine.start().await.expect("start");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait())
        .await
        .expect("crawl finished within 60 s")
        .expect("wait");
    let mut streamed = Vec::new();
    while let Ok(e) = stream.try_recv() {
        streamed.push(e);
    }

    assert_eq!(summary.pages, 3, "/, /moved and the sitemap were fetched: {summary}");
    let heard = heard.0.lock().unwrap().clone();
    let mut expected = vec![
        (Stage::Parser, ErrorKind::BadRedirect, "/moved".to_string()),
        (Stage::Parser, ErrorKind::Decode, "/sitemap.xml".to_string()),
        (Stage::Parser, ErrorKind::Content, "/".to_string()),
    ];
    expected.sort();
    assert_eq!(summary_of(&heard), expected, "listener: {heard:?}");
    assert_eq!(summary_of(&streamed), expected, "stream: {streamed:?}");
    let redirect = heard.iter().find(|e| e.kind == ErrorKind::BadRedirect).unwrap();
    assert!(redirect.message.starts_with("302 with a bad Location header"), "{redirect}");
    // The redirect that leads nowhere fails its request too.
    assert_eq!(summary.failed, 1, "{summary}");
    let sitemap = heard.iter().find(|e| e.kind == ErrorKind::Decode).unwrap();
    assert!(sitemap.message.contains("not a sitemap"), "{sitemap}");
    let link = heard.iter().find(|e| e.kind == ErrorKind::Content).unwrap();
    assert!(link.message.starts_with("unparseable link \"http://[::1/x\""), "{link}");
    let counted: Vec<(&str, u64)> = summary.errors.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    assert_eq!(
        counted,
        [("parser:bad-redirect", 1), ("parser:content", 1), ("parser:decode", 1)],
        "{summary}"
    );
}
