//! A format-2 state (kumo before the small kinds of state shared one keyspace) opens in this
//! build with everything it held, rewritten to format 3, also when an earlier rewrite was cut
//! short.
//!
//! The format-2 state is made from a real one: built through the store's API, then split
//! back into a keyspace per kind, the layout format 2 had.

use std::fs;
use std::path::Path;

use fjall::KeyspaceCreateOptions;
use kumo_store_embedded::dir;

use crate::common;
use common::*;

/// The format-2 keyspace each tag of the `state` keyspace came from.
const OLD: [(u8, &str); 5] =
    [(b'm', "meta"), (b'q', "queue"), (b'h', "hosts"), (b'f', "failures"), (b'p', "pipeline")];

fn set_format(dir: &Path, format: u32) {
    let marker = format!(r#"{{"format": {format}, "written_by": "kumo 0.1.0", "ready": true}}"#);
    fs::write(dir.join(dir::MARKER), marker).unwrap();
}

/// Rewrites a format-3 state into format 2; with `half`, leaves a half-filled `state`
/// keyspace behind, as a rewrite cut short would.
fn to_format_2(dir: &Path, half: bool) {
    let db = fjall::Database::builder(dir.join("db")).open().unwrap();
    let state = db.keyspace("state", KeyspaceCreateOptions::default).unwrap();
    for (tag, name) in OLD {
        let old = db.keyspace(name, KeyspaceCreateOptions::default).unwrap();
        let mut entries = 0;
        for kv in state.prefix([tag]) {
            let (k, v) = kv.into_inner().unwrap();
            old.insert(&k[1..], v).unwrap();
            entries += 1;
        }
        assert!(entries > 0, "there is {name} state to move");
    }
    if half {
        let keys: Vec<_> = state.iter().map(|kv| kv.key().unwrap()).collect();
        for k in keys.iter().skip(keys.len() / 2) {
            state.remove(k.clone()).unwrap();
        }
        state.insert(&b"q-not-a-queue-key"[..], &b"junk"[..]).unwrap();
    } else {
        db.delete_keyspace(state).unwrap();
    }
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    drop(db);
    set_format(dir, 2);
}

fn keyspaces(dir: &Path) -> usize {
    fs::read_dir(dir.join("db/keyspaces")).unwrap().count()
}

#[tokio::test]
async fn a_format_2_state_opens_with_everything_it_held() {
    let (_t, probe) = built(true).await;
    let intact = contents(&open(&probe).unwrap()).await;
    let stats = open(&probe).unwrap().queue_stats(10).unwrap();
    assert!(intact.1 > 0 && intact.2 > 0, "failures and journaled items to carry over: {intact:?}");
    for half in [false, true] {
        let (_t, dir) = copy_of(&probe);
        to_format_2(&dir, half);
        let store = open(&dir).unwrap();
        assert!(store.resumed());
        assert_eq!(contents(&store).await, intact, "half-done rewrite before: {half}");
        assert_eq!(store.queue_stats(10).unwrap(), stats);
        drop(store);
        let marker = fs::read_to_string(dir.join(dir::MARKER)).unwrap();
        assert!(marker.contains(&format!("\"format\": {}", dir::FORMAT)), "{marker}");
        assert_eq!(keyspaces(&dir), 3, "the old keyspaces are gone: catalogue, state, seen");
        // And it opens again as a format-3 state.
        assert_eq!(contents(&open(&dir).unwrap()).await, intact);
    }
}

#[tokio::test]
async fn old_keyspaces_a_crash_left_behind_go_at_the_next_open() {
    let (_t, dir) = built(true).await;
    let intact = contents(&open(&dir).unwrap()).await;
    {
        let db = fjall::Database::builder(dir.join("db")).open().unwrap();
        let old = db.keyspace("queue", KeyspaceCreateOptions::default).unwrap();
        old.insert("stale", "copied already").unwrap();
        db.persist(fjall::PersistMode::SyncAll).unwrap();
    }
    assert_eq!(keyspaces(&dir), 4);
    assert_eq!(contents(&open(&dir).unwrap()).await, intact);
    assert_eq!(keyspaces(&dir), 3);
}

#[tokio::test]
async fn a_format_2_state_missing_a_keyspace_is_refused_unchanged() {
    let (_t, probe) = built(true).await;
    let (_t2, dir) = copy_of(&probe);
    to_format_2(&dir, false);
    {
        let db = fjall::Database::builder(dir.join("db")).open().unwrap();
        db.delete_keyspace(db.keyspace("hosts", KeyspaceCreateOptions::default).unwrap()).unwrap();
    }
    let before = keyspaces(&dir);
    let e = open(&dir).unwrap_err();
    assert!(e.to_string().contains("its hosts keyspace is missing"), "{e}");
    assert_eq!(keyspaces(&dir), before, "nothing created or deleted");
    let marker = fs::read_to_string(dir.join(dir::MARKER)).unwrap();
    assert!(marker.contains("\"format\": 2"), "still format 2: {marker}");
}
