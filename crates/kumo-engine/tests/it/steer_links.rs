//! An analyzer's say on each link (`steers_links` / `steer_link`, where a spider's `allow` and
//! `priority` hooks run) is asked only for links the frontier does not know yet: on the
//! synthetic site most links of a page lead to pages queued before, and those are not asked
//! about. What it drops is never fetched, and the rest of the crawl is as without it.

use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kumo_core::{Request, Response};
use kumo_engine::{Analysis, Analyzer, Engine, Listener, PageAnalyzer, ScriptFailure};
use kumo_pipeline::CollectSink;
use kumo_testsite::{ServerBuilder, SiteConfig};

/// The page analyzer, with a say on each link: pages whose number ends in 7 are not
/// followed; every question is counted by URL.
#[derive(Default)]
struct Steering {
    asked: Mutex<HashMap<String, u64>>,
}

fn dropped(url: &str) -> bool {
    url.ends_with("7.html")
}

impl Analyzer for Steering {
    fn analyze(&self, response: &Response) -> Analysis {
        PageAnalyzer.analyze(response)
    }

    fn steers_links(&self) -> bool {
        true
    }

    fn steer_link(&self, _: &Response, link: &mut Request, _: &mut Vec<ScriptFailure>) -> bool {
        *self.asked.lock().unwrap().entry(link.url.to_string()).or_default() += 1;
        !dropped(link.url.as_str())
    }
}

/// Counts the links each analyzed page had past scope.
#[derive(Default)]
struct Links(AtomicU64);

impl Listener for Links {
    fn links_found(&self, _: &Request, admitted: &[Request]) {
        self.0.fetch_add(admitted.len() as u64, Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_the_frontier_knows_are_not_asked_about() {
    let site = SiteConfig { pages: 300, links_per_page: 20, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(site).start().await.expect("site");
    let steering = Arc::new(Steering::default());
    let links = Arc::new(Links::default());
    let mut cfg = common::config(&server.url("/index.html"));
    cfg.listeners.push(links.clone());
    let sink = CollectSink::new();
    let mut engine = Engine::new();
    let frontier = common::frontier(&cfg);
    engine.init_with(cfg, frontier, vec![Box::new(sink.clone())], steering.clone()).expect("init");
    engine.start().await.expect("start");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait())
        .await
        .expect("crawl finished within 60 s")
        .expect("wait");

    let asked = steering.asked.lock().unwrap().clone();
    let fetched = common::urls(&sink.snapshot());
    let admitted = links.0.load(Relaxed);
    let questions: u64 = asked.values().sum();
    assert!(summary.pages > 100, "the crawl went deep: {} pages", summary.pages);
    // Each question is about a link no commit had queued yet: a URL is asked again only by
    // pages analyzed before its first finder committed, a handful, not one per link to it
    // (asking about every link makes more questions than there are links kept).
    assert!(
        questions * 2 < admitted,
        "{questions} questions for {admitted} links past scope: links already queued were asked about"
    );
    for url in &fetched {
        if !url.ends_with("/index.html") {
            assert!(asked.contains_key(url), "{url} was fetched without being asked about");
        }
        assert!(!dropped(url), "{url} was dropped by the analyzer and fetched all the same");
    }
    assert!(asked.keys().any(|u| dropped(u)), "no link was dropped: the test proves nothing");
    assert_eq!(summary.failed, 0);
}
