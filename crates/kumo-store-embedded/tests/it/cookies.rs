//! The store keeps a crawl's cookies across a reopen: replaced by domain, path and name,
//! deleted by an expired one, beside the crawl state and without disturbing it.

use std::sync::Arc;

use kumo_core::{CookieStorage, StoredCookie};
use kumo_frontier::Frontier;
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};

fn cookie(domain: &str, path: &str, name: &str, value: &str, expires: Option<i64>) -> StoredCookie {
    StoredCookie {
        domain: domain.into(),
        host_only: true,
        path: path.into(),
        name: name.into(),
        value: value.into(),
        secure: false,
        http_only: true,
        expires,
    }
}

fn sorted(mut v: Vec<StoredCookie>) -> Vec<StoredCookie> {
    v.sort_by(|a, b| a.key().cmp(&b.key()));
    v
}

#[tokio::test]
async fn cookies_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let open = || Arc::new(EmbeddedStore::open(dir.path(), EmbeddedConfig::default()).expect("open"));
    let far = Some(4_000_000_000);
    let store = open();
    assert!(store.load().unwrap().is_empty());
    store
        .save(&[
            cookie("a.test", "/", "sid", "1", None),
            cookie("a.test", "/cart", "sid", "cart", None),
            cookie("b.test", "/", "pref", "dark", far),
            cookie("b.test", "/", "gone", "x", far),
        ])
        .unwrap();
    store
        .save(&[cookie("a.test", "/", "sid", "2", None), cookie("b.test", "/", "gone", "", Some(0))])
        .unwrap();
    drop(store);

    let store = open();
    assert!(!store.resumed(), "cookies alone are no crawl to resume");
    assert_eq!(
        sorted(store.load().unwrap()),
        [
            cookie("a.test", "/", "sid", "2", None),
            cookie("a.test", "/cart", "sid", "cart", None),
            cookie("b.test", "/", "pref", "dark", far),
        ],
        "replaced by key, deleted when expired, session cookies kept"
    );
    assert_eq!(store.stats().await.unwrap().queued, 0, "the crawl state is untouched");
}
