//! Rewrites a format-2 state (a keyspace per kind of state) into format 3 (the small kinds
//! under tags in one `state` keyspace, `part.rs`) when a newer kumo opens it, so a paused
//! crawl resumes across the upgrade. The seen set's keyspace is the same in both.
//!
//! Cut short anywhere, it is done again: the marker says format 2 until the copy is on disk,
//! and a half-filled `state` keyspace from an earlier try is dropped first. The old keyspaces
//! go after the marker says format 3; any a crash left behind go at the next open.

use std::fs::File;
use std::path::Path;

use fjall::{Database, KeyspaceCreateOptions, PersistMode};

use crate::part::{Part, tag};
use crate::store::{STATE, corrupt};
use crate::{StoreError, dir};

/// The format-2 keyspaces that became parts of `state`, with their tags.
const MOVED: [(&str, u8); 5] = [
    ("meta", tag::META),
    ("queue", tag::QUEUE),
    ("hosts", tag::HOSTS),
    ("failures", tag::FAILURES),
    ("pipeline", tag::PIPELINE),
];

/// Entries per write batch: bounds the memory a large queue takes to move.
const BATCH: usize = 10_000;

pub(crate) fn from_format_2(
    db: &Database,
    dir: &Path,
    opts: impl Fn() -> KeyspaceCreateOptions,
) -> Result<(), StoreError> {
    let open_error = |e| dir::open_error(dir, e);
    if let Some((name, _)) = MOVED.iter().find(|(name, _)| !db.keyspace_exists(name)) {
        return Err(corrupt(dir, format!("its {name} keyspace is missing")));
    }
    if db.keyspace_exists(STATE) {
        let half = db.keyspace(STATE, &opts).map_err(open_error)?;
        db.delete_keyspace(half).map_err(open_error)?;
    }
    let state = db.keyspace(STATE, &opts).map_err(open_error)?;
    for (name, tag) in MOVED {
        let old = db.keyspace(name, &opts).map_err(open_error)?;
        let part = Part::new(&state, tag);
        let mut b = db.batch();
        for (n, kv) in old.iter().enumerate() {
            let (k, v) = kv.into_inner().map_err(open_error)?;
            part.insert(&mut b, k, v);
            if (n + 1) % BATCH == 0 {
                std::mem::replace(&mut b, db.batch()).commit().map_err(open_error)?;
            }
        }
        b.commit().map_err(open_error)?;
    }
    db.persist(PersistMode::SyncAll).map_err(open_error)?;
    dir::mark_ready(dir)?;
    // The new marker on disk before the old keyspaces go.
    for p in [dir.join(dir::MARKER), dir.to_path_buf()] {
        File::open(&p)
            .and_then(|f| f.sync_all())
            .map_err(|error| StoreError::Io { path: p.clone(), error })?;
    }
    drop_leftovers(db).map_err(open_error)
}

/// Deletes the format-2 keyspaces a finished migration leaves behind.
pub(crate) fn drop_leftovers(db: &Database) -> fjall::Result<()> {
    for (name, _) in MOVED {
        if db.keyspace_exists(name) {
            db.delete_keyspace(db.keyspace(name, KeyspaceCreateOptions::default)?)?;
        }
    }
    Ok(())
}
