//! Inspection and surgery on a stopped crawl's state: stats, export, import, failures put
//! back in the queue, all surviving a reopen.

use std::path::Path;
use std::time::SystemTime;

use kumo_core::{CanonicalOptions, DedupMode, ErrorKind, Request, Url};
use kumo_frontier::{Commit, Completion, FailureRecord, Frontier, PushReport};
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore, StoreError, read_requests};

fn open(dir: &Path) -> EmbeddedStore {
    EmbeddedStore::open(dir, EmbeddedConfig::default()).unwrap()
}

fn request(url: &str, depth: u32, priority: i32) -> (kumo_core::Fingerprint, Request) {
    let mut r = Request::get(Url::parse(url).unwrap()).with_priority(priority);
    r.depth = depth;
    (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
}

fn failure(url: &str, kind: ErrorKind) -> FailureRecord {
    FailureRecord {
        url: url.into(),
        kind,
        message: "gave up".into(),
        attempts: 3,
        last_status: None,
        at: SystemTime::now(),
    }
}

/// a.test: 3 requests (priorities 5, 0, 0), b.test: 1 (depth 2); then the two best are
/// leased and fail (a status error and a timeout), with counters saying so.
async fn crawled(dir: &Path) -> EmbeddedStore {
    let store = open(dir);
    store
        .push(vec![
            request("http://a.test/1", 1, 0),
            request("http://a.test/2", 1, 5),
            request("http://a.test/3", 1, 0),
            request("http://b.test:8080/x", 2, 0),
        ])
        .await
        .unwrap();
    let mut leases = store.lease(2).await.unwrap();
    leases.sort_by(|x, y| x.request.url.cmp(&y.request.url));
    let kinds = [ErrorKind::Status, ErrorKind::Timeout];
    let completions = leases
        .into_iter()
        .zip(kinds)
        .map(|(l, kind)| Completion::Failed { failure: failure(l.request.url.as_str(), kind), lease: l.id })
        .collect();
    let counters = Box::new(|_: &PushReport| br#"{"pages":0,"failed":2,"retries":4}"#.to_vec());
    store.commit(Commit { completions, counters: Some(counters), ..Default::default() }).await.unwrap();
    store
}

#[tokio::test]
async fn stats_count_what_is_queued() {
    let t = tempfile::tempdir().unwrap();
    let store = open(t.path());
    store
        .push(vec![
            request("http://a.test/1", 1, 0),
            request("http://a.test/2", 3, 5),
            request("http://b.test/1", 1, 0),
        ])
        .await
        .unwrap();
    store.push(vec![request("http://a.test/1", 1, 0)]).await.unwrap();
    let s = store.queue_stats(1).unwrap();
    assert_eq!((s.queued, s.hosts, s.hosts_queued, s.seen, s.failures), (3, 2, 2, 3, 0));
    assert_eq!(s.top_hosts.len(), 1, "only the top one");
    assert_eq!((s.top_hosts[0].host.as_str(), s.top_hosts[0].queued), ("a.test", 2));
    let prio: Vec<_> = s.by_priority.iter().map(|p| (p.priority, p.queued)).collect();
    assert_eq!(prio, [(5, 1), (0, 2)], "best first");
    let depth: Vec<_> = s.by_depth.iter().map(|d| (d.depth, d.queued)).collect();
    assert_eq!(depth, [(1, 2), (3, 1)]);
    assert_eq!(s.counters, None);
}

#[tokio::test]
async fn export_is_in_queue_order_with_host_and_seq() {
    let t = tempfile::tempdir().unwrap();
    let store = open(t.path());
    store
        .push(vec![
            request("http://a.test/late", 1, 0),
            request("http://b.test/x", 0, 9),
            request("http://a.test/best", 1, 3),
        ])
        .await
        .unwrap();
    let mut out = Vec::new();
    assert_eq!(store.export_queue(&mut out).unwrap(), 3);
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<_> = lines
        .iter()
        .map(|l| (l["url"].as_str().unwrap(), l["host"].as_str().unwrap(), l["seq"].as_u64().unwrap()))
        .collect();
    // Host by host (in the order they were met), best priority first, then first come.
    assert_eq!(
        got,
        [
            ("http://a.test/best", "a.test", 3),
            ("http://a.test/late", "a.test", 1),
            ("http://b.test/x", "b.test", 2)
        ]
    );
    assert_eq!(lines[0]["priority"], 3);
}

#[tokio::test]
async fn import_is_seen_checked_and_survives_reopen() {
    let t = tempfile::tempdir().unwrap();
    let store = open(t.path());
    store.push(vec![request("http://a.test/1", 0, 0)]).await.unwrap();
    // The canonical form decides what is seen: the fragment and the default port go.
    let text = "http://a.test:80/1#top\nhttp://a.test/2\n{\"url\": \"http://c.test/\", \"priority\": 2}\nhttp://a.test/2\n";
    let r = store.import(read_requests(text.as_bytes()).unwrap()).unwrap();
    assert_eq!((r.added, r.seen), (2, 2));
    drop(store);
    let store = open(t.path());
    let s = store.queue_stats(10).unwrap();
    assert_eq!((s.queued, s.seen, s.hosts), (3, 3, 2));
}

#[tokio::test]
async fn requeue_moves_failures_back_with_retries_reset() {
    let t = tempfile::tempdir().unwrap();
    let store = crawled(t.path()).await;
    assert_eq!(store.queue_stats(5).unwrap().failures_by_kind.len(), 2);
    let r = store.requeue_failures(&[ErrorKind::Connect]).unwrap();
    assert_eq!((r.requeued, r.remaining), (0, 2));

    let r = store.requeue_failures(&[ErrorKind::Status]).unwrap();
    assert_eq!((r.requeued, r.invalid, r.remaining), (1, 0, 1));
    drop(store);

    let store = open(t.path());
    let s = store.queue_stats(5).unwrap();
    assert_eq!((s.queued, s.failures, s.seen), (3, 1, 4), "back in the queue; the seen set is unchanged");
    assert_eq!(s.counters.unwrap()["failed"], 1, "the saved counters no longer count it");
    assert_eq!(store.stats().await.unwrap().failed, 1);
    let left = store.stored_failures().unwrap();
    assert_eq!(left[0].1.record.kind, ErrorKind::Timeout);

    // Leased again with a fresh retry count, like any queued request.
    let all = store.lease(10).await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|l| l.request.retries == 0));

    let r = store.requeue_failures(&[]).unwrap();
    assert_eq!((r.requeued, r.remaining), (1, 0), "all kinds");
    assert_eq!(store.queue_stats(5).unwrap().counters.unwrap()["failed"], 0);
}

#[tokio::test]
async fn inspection_never_creates_state() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("typo");
    let e = EmbeddedStore::open_existing(&missing, EmbeddedConfig::default()).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e}");
    assert!(e.to_string().contains("typo: no crawl state here"), "{e}");
    assert!(!missing.exists());

    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = EmbeddedStore::open_existing(&empty, EmbeddedConfig::default()).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e}");
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "nothing written");

    std::fs::write(empty.join("notes.txt"), "mine").unwrap();
    let e = EmbeddedStore::open_existing(&empty, EmbeddedConfig::default()).unwrap_err();
    assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
}
