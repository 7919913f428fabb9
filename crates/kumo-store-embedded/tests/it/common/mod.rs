//! What the store's tests share: a real state built through the store's own API, copies of
//! it, and what it holds, to compare.

use std::fs;
use std::path::{Path, PathBuf};

use kumo_core::{CanonicalOptions, DedupMode, ErrorKind, Item, Request, Url};
use kumo_frontier::{Commit, Completion, FailureRecord, Frontier, PushReport};
use kumo_pipeline::ItemJournal;
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore, StoreError};

pub const BATCHES: usize = 30;
pub const PER_BATCH: usize = 100;

pub fn requests(batch: usize) -> Vec<(kumo_core::Fingerprint, Request)> {
    (0..PER_BATCH)
        .map(|i| {
            let url = format!("http://h{}.test/b{batch}/p{i}", i % 7);
            let r = Request::get(Url::parse(&url).unwrap()).with_priority((i % 3) as i32);
            (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
        })
        .collect()
}

pub fn open(dir: &Path) -> Result<EmbeddedStore, StoreError> {
    EmbeddedStore::open(dir, EmbeddedConfig::default())
}

/// A state with 3,000 requests pushed in 30 commits; with `tables`, also leases completed
/// (done and failed), items, a checkpoint and counters, all moved into table files.
pub async fn build(dir: &Path, tables: bool) {
    let store = open(dir).unwrap();
    for b in 0..BATCHES {
        store.push(requests(b)).await.unwrap();
    }
    if !tables {
        return;
    }
    let leases = store.lease(40).await.unwrap();
    assert_eq!(leases.len(), 40);
    let completions = leases
        .into_iter()
        .enumerate()
        .map(|(i, l)| match i % 4 {
            0 => Completion::Failed {
                failure: FailureRecord {
                    url: l.request.url.to_string(),
                    kind: ErrorKind::Status,
                    message: "HTTP 500".into(),
                    attempts: 3,
                    last_status: Some(500),
                    at: std::time::SystemTime::now(),
                },
                lease: l.id,
            },
            _ => Completion::Done { lease: l.id, discovered: vec![], page: None },
        })
        .collect();
    let items = (0..100).map(|i| Item::new().with("n", i)).collect();
    let counters = Box::new(|_: &PushReport| br#"{"pages":40,"failed":10}"#.to_vec());
    store
        .commit(Commit { completions, items, counters: Some(counters), ..Default::default() })
        .await
        .unwrap();
    store.checkpoint(50, Default::default()).await.unwrap();
    store.flush_tables().unwrap();
}

pub async fn built(tables: bool) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    build(&dir, tables).await;
    // A clean reopen, as a resumed crawl would: fjall trims the 64 MiB it preallocates for
    // its journal to what is used, which keeps copies cheap.
    drop(open(&dir).unwrap());
    (t, dir)
}

/// A copy of the state in `src`, so one build serves many damages (creating a database
/// costs many fsyncs).
pub fn copy_of(src: &Path) -> (tempfile::TempDir, PathBuf) {
    fn copy(src: &Path, dst: &Path) {
        fs::create_dir_all(dst).unwrap();
        for e in fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            let to = dst.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to);
            } else {
                fs::copy(e.path(), &to).unwrap();
            }
        }
    }
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    copy(src, &dir);
    (t, dir)
}

/// What a state holds, to compare a damaged one with the intact one.
pub async fn contents(store: &EmbeddedStore) -> (String, usize, usize) {
    let mut queue = Vec::new();
    store.export_queue(&mut queue).unwrap();
    let journal = store.resume_point().await.unwrap();
    (String::from_utf8(queue).unwrap(), store.stored_failures().unwrap().len(), journal.pending.len())
}
