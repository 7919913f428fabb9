//! The crawl's cookie jar: one for all its downloaders (a cookie set through one proxy is sent
//! through the others), kept in the engine's cookie storage so a later engine on the same
//! storage sends it too; a storage that cannot save is counted in the summary.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use common::{config, frontier};
use kumo_core::{CookieStorage, CookieStorageError, MemoryCookieStorage, StoredCookie};
use kumo_engine::Engine;
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ForwardProxy, ServerBuilder, TestServer};

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// `/` sets `sid=1` and links to `/1` … `/n`.
async fn site(n: usize) -> TestServer {
    let links: String = (1..=n).map(|i| format!("<a href=\"/{i}\">{i}</a>")).collect();
    let mut b =
        ServerBuilder::new().fixture("/", Fixture::html(&links).with_header("set-cookie", "sid=1; Path=/"));
    for i in 1..=n {
        b = b.fixture(&format!("/{i}"), Fixture::html("page"));
    }
    b.fixture("/later", Fixture::html("later")).start().await.unwrap()
}

async fn run(cfg: kumo_engine::CrawlConfig, storage: Arc<dyn CookieStorage>) -> kumo_engine::Summary {
    let mut engine = Engine::new().with_cookie_storage(storage);
    engine.init(cfg.clone(), frontier(&cfg), vec![Box::new(CollectSink::new())]).unwrap();
    engine.start().await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(60), engine.wait()).await.unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_downloaders_share_one_jar_kept_in_the_storage() {
    let server = site(20).await;
    let (p1, p2) = (ForwardProxy::start(ip(20)).await.unwrap(), ForwardProxy::start(ip(21)).await.unwrap());
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    cfg.proxies = vec![p1.url(), p2.url()];
    let storage = Arc::new(MemoryCookieStorage::new());
    let summary = run(cfg, storage.clone()).await;
    assert_eq!(summary.by_status[&200], 21);
    assert!(p1.relayed() > 0 && p2.relayed() > 0, "both proxies carried requests");
    let hits = server.hits();
    assert!(
        hits.iter().filter(|h| h.target != "/").all(|h| h.cookie.as_deref() == Some("sid=1")),
        "every page after / carried its cookie, whichever downloader sent it"
    );
    let kept = storage.load().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!((kept[0].name.as_str(), kept[0].value.as_str(), kept[0].expires), ("sid", "1", None));

    // A new engine (a restart) on the same storage sends the cookie from its first request.
    let mut cfg = config(&server.url("/later"));
    cfg.robots.obey = false;
    run(cfg, storage).await;
    let later = server.hits().into_iter().find(|h| h.target == "/later").unwrap();
    assert_eq!(later.cookie.as_deref(), Some("sid=1"));
}

/// A cookie storage whose disk is gone: it loads nothing and every save fails.
struct Unsaveable;

impl CookieStorage for Unsaveable {
    fn load(&self) -> Result<Vec<StoredCookie>, CookieStorageError> {
        Ok(Vec::new())
    }

    fn save(&self, _: &[StoredCookie]) -> Result<(), CookieStorageError> {
        Err(CookieStorageError::Storage("disk gone".into()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_that_cannot_be_saved_are_counted_and_still_sent() {
    let server = site(3).await;
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    let summary = run(cfg, Arc::new(Unsaveable)).await;
    assert_eq!(summary.by_status[&200], 4);
    assert_eq!(summary.errors.get("downloader:storage"), Some(&1), "{summary}");
    let hits = server.hits();
    assert!(
        hits.iter().filter(|h| h.target != "/").all(|h| h.cookie.as_deref() == Some("sid=1")),
        "the jar in memory still sends it"
    );
}
