//! Damaged, foreign or locked state directories are refused with an error that names the
//! directory and says what to do (`--fresh`), and the damaged files are left as they were:
//! kumo never silently starts over.
//!
//! Each test builds a real state (thousands of requests pushed, some leased and completed,
//! items journaled, a pipeline checkpoint, counters), forces it into table files, damages
//! it and opens it again.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kumo_frontier::Frontier;
use kumo_pipeline::ItemJournal;
use kumo_store_embedded::{EmbeddedStore, StoreError, check_state, dir};

use crate::common;
use common::*;

/// Every file under `dir` with its size.
fn files(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.insert(e.path(), e.metadata().unwrap().len());
        }
    }
    out
}

/// Table files, largest first.
fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut t: Vec<_> =
        files(dir).into_iter().filter(|(p, _)| p.parent().is_some_and(|d| d.ends_with("tables"))).collect();
    t.sort_by_key(|(p, n)| (std::cmp::Reverse(*n), p.clone()));
    t.into_iter().map(|(p, _)| p).collect()
}

fn truncate(p: &Path, len: u64) {
    fs::OpenOptions::new().write(true).open(p).unwrap().set_len(len).unwrap();
}

fn flip_middle(p: &Path) {
    let mut b = fs::read(p).unwrap();
    let m = b.len() / 2;
    for x in &mut b[m..m + 8] {
        *x ^= 0xa5;
    }
    fs::write(p, b).unwrap();
}

/// Opens `dir`, expects it refused, and checks the message and that `kept` files are still
/// there with the same size.
fn refused(dir: &Path, kept: &[&Path]) -> StoreError {
    let sizes: Vec<_> = kept.iter().map(|p| fs::metadata(p).map(|m| m.len()).ok()).collect();
    let e = match open(dir) {
        Ok(s) => panic!("{} opened: {} queued", dir.display(), s.queue_stats(1).unwrap().queued),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(msg.contains(&dir.display().to_string()), "names the directory: {msg}");
    if !matches!(e, StoreError::Foreign { .. } | StoreError::Locked { .. }) {
        assert!(msg.contains("--fresh"), "says what to do: {msg}");
    }
    for (p, size) in kept.iter().zip(sizes) {
        let now = fs::metadata(p).map(|m| m.len()).ok();
        assert_eq!(now, size, "{} was deleted or rewritten", p.display());
    }
    e
}

#[tokio::test]
async fn a_truncated_table_is_refused() {
    let (_t, probe) = built(true).await;
    let count = tables(&probe).len();
    assert!(count >= 2, "both keyspaces have a table: {count}");
    // Each table in turn, on a fresh state: every keyspace's damage is found on open.
    for i in 0..count {
        let (_t, dir) = copy_of(&probe);
        let table = &tables(&dir)[i];
        let len = fs::metadata(table).unwrap().len();
        truncate(table, len / 2);
        let e = refused(&dir, &[table]);
        assert!(matches!(e, StoreError::Corrupt { .. }), "{}: {e}", table.display());
    }
}

#[tokio::test]
async fn a_table_with_flipped_bytes_is_refused_or_unread() {
    let (_t, probe) = built(true).await;
    let intact = contents(&open(&probe).unwrap()).await;
    for i in 0..tables(&probe).len() {
        let (_t, dir) = copy_of(&probe);
        let table = &tables(&dir)[i];
        let len = fs::metadata(table).unwrap().len();
        flip_middle(table);
        match open(&dir) {
            Err(e) => {
                drop(e);
                let e = refused(&dir, &[table]);
                assert!(matches!(e, StoreError::Corrupt { .. }), "{}: {e}", table.display());
            }
            // Every data block is read on open (checksummed), but a table's Bloom filter is
            // read only by point lookups, which kumo makes on two small keyspaces, at open.
            // A flip that lands in a filter kumo never reads loses nothing: the state must be
            // exactly the intact one.
            Ok(store) => {
                assert!(i >= 2, "the queue and seen tables (largest) are always refused");
                assert_eq!(contents(&store).await, intact, "{} opened but lost data", table.display());
                assert_eq!(fs::metadata(table).unwrap().len(), len);
            }
        }
    }
}

#[tokio::test]
async fn a_damaged_marker_is_refused() {
    let (_t, probe) = built(true).await;
    for damage in [&b""[..], b"{\"format\": 1", b"\x00\x01garbage\xff"] {
        let (_t, dir) = copy_of(&probe);
        let marker = dir.join(dir::MARKER);
        fs::write(&marker, damage).unwrap();
        let e = refused(&dir, &[&marker]);
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("KUMO_STATE"), "{e}");
    }
}

#[tokio::test]
async fn a_marker_from_a_future_kumo_is_refused() {
    let (_t, dir) = built(true).await;
    let marker = dir.join(dir::MARKER);
    fs::write(&marker, r#"{"format": 7, "written_by": "kumo 3.0.0"}"#).unwrap();
    let before = files(&dir);
    let e = refused(&dir, &[&marker]);
    assert!(matches!(e, StoreError::Incompatible { .. }), "{e}");
    assert!(e.to_string().contains("format 7 by kumo 3.0.0"), "{e}");
    assert_eq!(files(&dir), before, "refused before the database is touched");
}

#[tokio::test]
async fn fjalls_version_file_removed_or_truncated_is_refused() {
    let (_t, probe) = built(true).await;
    let (_t2, dir) = copy_of(&probe);
    let version = dir.join("db/version");
    fs::remove_file(&version).unwrap();
    let before = files(&dir);
    let e = refused(&dir, &[]);
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("version file is missing"), "{e}");
    // Without the check fjall would try to create a new database inside the old one.
    assert_eq!(files(&dir), before);

    for len in [0, 2] {
        let (_t, dir) = copy_of(&probe);
        let version = dir.join("db/version");
        truncate(&version, len);
        let e = refused(&dir, &[&version]);
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("version file is unreadable"), "{e}");
    }
}

#[tokio::test]
async fn a_keyspace_without_its_current_file_is_refused_not_deleted() {
    // fjall takes such a keyspace for a half-created one and deletes it; for keyspace 0 (its
    // catalogue) it deletes every keyspace and starts over.
    let (_t, probe) = built(true).await;
    let mut keyspaces: Vec<_> =
        fs::read_dir(probe.join("db/keyspaces")).unwrap().map(|e| e.unwrap().file_name()).collect();
    keyspaces.sort();
    assert_eq!(keyspaces.len(), 3, "fjall's catalogue and kumo's two keyspaces");
    for name in keyspaces {
        let (_t, dir) = copy_of(&probe);
        let ks = dir.join("db/keyspaces").join(&name);
        fs::remove_file(ks.join("current")).unwrap();
        let before = files(&dir);
        let e = refused(&dir, &[]);
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("has no current file"), "{e}");
        assert_eq!(files(&dir), before, "nothing deleted");
    }
}

#[tokio::test]
async fn a_keyspace_removed_or_the_journal_removed_is_refused() {
    // Without the checks: a missing keyspace is created empty, and without a journal file the
    // tables stay on disk but nothing in them is visible. Both are silent starts over.
    let (_t, probe) = built(true).await;
    let (_t2, dir) = copy_of(&probe);
    fs::remove_dir_all(dir.join("db/keyspaces/2")).unwrap();
    let keyspaces = || fs::read_dir(dir.join("db/keyspaces")).unwrap().count();
    let (before, tables_before) = (keyspaces(), tables(&dir));
    let e = refused(&dir, &tables_before.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    assert!(e.to_string().contains("keyspace is missing"), "{e}");
    assert_eq!(keyspaces(), before, "no keyspace created in its place");

    let (_t3, dir) = copy_of(&probe);
    for f in files(&dir.join("db")).into_keys().filter(|p| p.extension().is_some_and(|x| x == "jnl")) {
        fs::remove_file(f).unwrap();
    }
    let before = files(&dir);
    let e = refused(&dir, &[]);
    assert!(e.to_string().contains("journal file is missing"), "{e}");
    assert_eq!(files(&dir), before);
}

#[tokio::test]
async fn a_foreign_directory_is_refused_and_never_discarded() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("photos");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("cat.jpg"), b"not a crawl").unwrap();
    fs::create_dir(dir.join("db")).unwrap();
    let e = refused(&dir, &[&dir.join("cat.jpg")]);
    assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
    let e = dir::discard(&dir).unwrap_err();
    assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
    assert!(dir.join("cat.jpg").is_file() && dir.join("db").is_dir(), "nothing deleted");
    assert!(!dir.join(dir::MARKER).exists(), "no marker written");
}

#[tokio::test]
async fn a_state_in_use_is_refused_as_locked() {
    let (_t, dir) = built(true).await;
    let first = open(&dir).unwrap();
    let e = refused(&dir, &[]);
    assert!(matches!(e, StoreError::Locked { .. }), "{e}");
    drop(first);
    let again = open(&dir).expect("free again once the first store is dropped");
    assert_eq!(again.stats().await.unwrap().queued, BATCHES * PER_BATCH - 40);
}

/// After fjall's journal recovery: every queued request decodes and the counts agree. Only
/// pushes were committed, so queued == seen, in whole commits.
async fn assert_consistent(store: &EmbeddedStore) -> usize {
    let stats = store.queue_stats(100).unwrap();
    let mut out = Vec::new();
    let exported = store.export_queue(&mut out).unwrap();
    assert_eq!(exported, stats.queued);
    assert_eq!(store.stats().await.unwrap().queued, stats.queued);
    assert_eq!(stats.seen, stats.queued);
    assert_eq!(stats.queued % PER_BATCH, 0, "whole commits only: {}", stats.queued);
    assert_eq!(stats.hosts, 7);
    stats.queued
}

#[tokio::test]
async fn a_torn_journal_tail_is_dropped_whole_commits_at_a_time() {
    // What a crash in the middle of a write leaves. fjall drops the torn batch and truncates
    // the journal there: correct crash recovery, and every commit is one batch, so the state
    // is the one after some earlier commit.
    let (_t, probe) = built(false).await;
    let used = journal_used(&probe);
    for cut in [used / 3, used * 2 / 3, used - 5] {
        let (_t, dir) = copy_of(&probe);
        truncate(&dir.join("db/0.jnl"), cut);
        let store = open(&dir).expect("a torn tail is crash recovery");
        let queued = assert_consistent(&store).await;
        assert!(queued < BATCHES * PER_BATCH, "the torn commit is gone");
    }
}

#[tokio::test]
async fn bytes_flipped_mid_journal_are_refused_not_cut_off() {
    // fjall 3.1 on its own reads an undecodable journal entry as the journal's end, truncates
    // the file there and opens, silently losing every later commit. kumo checks the journal
    // first: whole commits after the damage mean damage, not a torn tail, and are refused
    // with the journal left as it was. (A flip inside a batch's payload fails fjall's own
    // checksum instead; either way the state is refused, never cut short.)
    let (_t, probe) = built(false).await;
    let used = journal_used(&probe);
    for at in [used / 10, used / 2, used * 9 / 10] {
        let (_t, dir) = copy_of(&probe);
        let jnl = dir.join("db/0.jnl");
        let mut b = fs::read(&jnl).unwrap();
        for x in &mut b[at as usize..at as usize + 8] {
            *x ^= 0xff;
        }
        fs::write(&jnl, b).unwrap();
        let e = refused(&dir, &[&jnl]);
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
        eprintln!("damaged at {at} of {used}: {e}");
    }
}

/// Bytes of the active journal in use (fjall trims it to that on open).
fn journal_used(dir: &Path) -> u64 {
    let used = fs::metadata(dir.join("db/0.jnl")).unwrap().len();
    assert!(used > 100_000 && used < 1_000_000, "holds every commit: {used}");
    used
}

#[tokio::test]
async fn a_state_whose_creation_was_cut_short_is_finished() {
    // Killed while the database and its keyspaces were being created (it takes a while:
    // each keyspace costs fsyncs): nothing was committed, so it is created, not refused.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("state");
    fs::create_dir(&dir).unwrap();
    let marker = format!(r#"{{"format": {}, "written_by": "kumo 0.1.0", "ready": false}}"#, dir::FORMAT);
    fs::write(dir.join(dir::MARKER), marker).unwrap();
    {
        let db = fjall::Database::builder(dir.join("db")).open().unwrap();
        db.keyspace("state", fjall::KeyspaceCreateOptions::default).unwrap();
    }
    // And a keyspace folder fjall had only begun (no `current` file yet).
    fs::create_dir_all(dir.join("db/keyspaces/2/tables")).unwrap();
    let store = open(&dir).expect("creation finished");
    assert!(!store.resumed());
    store.push(requests(0)).await.unwrap();
    drop(store);
    let marker = fs::read_to_string(dir.join(dir::MARKER)).unwrap();
    assert!(marker.contains("\"ready\": true"), "{marker}");
    let store = open(&dir).unwrap();
    assert!(store.resumed());
    assert_eq!(store.queue_stats(1).unwrap().queued, PER_BATCH);

    // Only the marker's temporary file: its first write was cut short.
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("KUMO_STATE.tmp"), "{").unwrap();
    drop(open(t.path()).expect("a new state"));
}

#[tokio::test]
async fn a_damaged_item_log_is_refused() {
    let (_t, probe) = built(true).await;
    let log = |dir: &Path| dir.join("items").join(format!("{:020}.log", 1));
    assert_eq!(contents(&open(&probe).unwrap()).await.2, 50, "the items after the checkpoint wait");

    // A flipped byte in an item not yet written out: the resume refuses to replay it.
    let (_t1, dir) = copy_of(&probe);
    let mut bytes = fs::read(log(&dir)).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x20;
    fs::write(log(&dir), &bytes).unwrap();
    let e = open(&dir).unwrap().resume_point().await.unwrap_err().to_string();
    assert!(e.contains("checksum") && e.contains("--fresh"), "{e}");

    // Cut shorter than its committed end.
    let (_t2, dir) = copy_of(&probe);
    fs::File::options().write(true).open(log(&dir)).unwrap().set_len(n as u64 - 10).unwrap();
    let e = refused(&dir, &[&log(&dir)]);
    assert!(e.to_string().contains("shorter than committed"), "{e}");

    // The whole folder gone.
    let (_t3, dir) = copy_of(&probe);
    fs::remove_dir_all(dir.join("items")).unwrap();
    let e = refused(&dir, &[]);
    assert!(e.to_string().contains("item log folder is missing"), "{e}");
}

/// Every file under `dir` with its whole content.
fn contents_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files(dir).into_keys().map(|p| (p.clone(), fs::read(&p).unwrap())).collect()
}

#[tokio::test]
async fn check_reports_a_sound_state_and_refuses_a_damaged_one_without_changing_either() {
    let (_t, probe) = built(false).await;
    let used = journal_used(&probe);

    let before = contents_of(&probe);
    let report = check_state(&probe).expect("sound");
    assert_eq!((report.queued, report.seen, report.failures), (BATCHES * PER_BATCH, BATCHES * PER_BATCH, 0));
    assert_eq!(contents_of(&probe), before, "checking changed nothing");

    // Damage in the middle: refused, naming the state (not the scratch copy), nothing changed.
    // 256 bytes always span an entry's header, which the journal check reads (a flip inside
    // a value alone is fjall's checksum's to find).
    let (_t1, dir) = copy_of(&probe);
    let jnl = dir.join("db/0.jnl");
    let mut b = fs::read(&jnl).unwrap();
    for x in &mut b[used as usize / 2..used as usize / 2 + 256] {
        *x ^= 0xff;
    }
    fs::write(&jnl, b).unwrap();
    let before = contents_of(&dir);
    let e = check_state(&dir).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{}: the state directory is damaged", dir.display())), "{msg}");
    assert!(msg.contains("0.jnl is damaged at byte") && !msg.contains("kumo-state-check"), "{msg}");
    assert_eq!(contents_of(&dir), before, "the damaged state is left exactly as it was");
    let siblings: Vec<_> = fs::read_dir(dir.parent().unwrap()).unwrap().collect();
    assert_eq!(siblings.len(), 1, "the scratch copy is gone");

    // A torn tail is what a crash leaves: sound, and the check does not trim it (an open does).
    let (_t2, dir) = copy_of(&probe);
    truncate(&dir.join("db/0.jnl"), used - 5);
    let before = contents_of(&dir);
    let report = check_state(&dir).expect("a torn tail is crash recovery");
    assert!(report.queued < BATCHES * PER_BATCH, "the torn commit is not counted");
    assert_eq!(contents_of(&dir), before);
}

#[tokio::test]
async fn check_refuses_a_state_in_use_and_a_damaged_item_log() {
    let (_t, probe) = built(true).await;
    let store = open(&probe).unwrap();
    let e = check_state(&probe).unwrap_err();
    assert!(matches!(e, StoreError::Locked { .. }), "{e}");
    drop(store);
    assert_eq!(check_state(&probe).unwrap().items_pending, 50);

    let (_t1, dir) = copy_of(&probe);
    let log = dir.join("items").join(format!("{:020}.log", 1));
    let mut bytes = fs::read(&log).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x20;
    fs::write(&log, &bytes).unwrap();
    let e = check_state(&dir).unwrap_err().to_string();
    assert!(e.contains("checksum") && e.contains(&dir.display().to_string()), "{e}");
    assert!(!e.contains("kumo-state-check"), "names the state, not the copy: {e}");

    let e = check_state(&dir.join("nothing-here")).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e}");
}
