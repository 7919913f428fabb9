//! Checks of fjall's files before fjall opens an existing state.
//!
//! fjall "recovers" some damage by starting parts of the database over, and deletes files
//! on the way (tested in `tests/corrupt.rs`):
//!
//! - a keyspace folder without its `current` file is taken for a half-created keyspace and
//!   deleted: for keyspace `0` (fjall's own catalogue) every keyspace is then deleted as
//!   unreferenced and the crawl silently starts over;
//! - without the `version` file it tries to create a new database in the old one;
//! - without any journal file the tables stay on disk but nothing in them is visible;
//! - a folder with a non-numeric name in `keyspaces/`, or a folder among a keyspace's
//!   tables, makes it panic.
//!
//! So these are refused here, before fjall touches anything.

use std::fs;
use std::path::Path;

use crate::StoreError;

/// fjall's file names (fjall 3 `file.rs`, lsm-tree 3 `file.rs`).
const VERSION: &str = "version";
const KEYSPACES: &str = "keyspaces";
const CURRENT: &str = "current";
const TABLES: &str = "tables";
const JOURNAL_EXT: &str = "jnl";

/// Checks the database folder `db` of the existing state directory `dir`.
pub(crate) fn check(dir: &Path, db: &Path) -> Result<(), StoreError> {
    let damaged = |detail: String| StoreError::Corrupt { path: dir.into(), detail };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| StoreError::Io { path, error }
    };
    if !db.join(VERSION).is_file() {
        return Err(damaged(format!("the database's {VERSION} file is missing")));
    }
    let mut journals = 0;
    for e in fs::read_dir(db).map_err(io(db))? {
        let e = e.map_err(io(db))?;
        if e.path().extension().is_some_and(|x| x == JOURNAL_EXT) {
            journals += 1;
        }
    }
    if journals == 0 {
        return Err(damaged("the database's journal file is missing".into()));
    }
    crate::wal_check::check(dir, db)?;
    let keyspaces = db.join(KEYSPACES);
    if !keyspaces.join("0").is_dir() {
        return Err(damaged("the database's keyspace catalogue (keyspaces/0) is missing".into()));
    }
    for e in fs::read_dir(&keyspaces).map_err(io(&keyspaces))? {
        let e = e.map_err(io(&keyspaces))?;
        if !e.file_type().map_err(io(&e.path()))?.is_dir() {
            continue; // fjall skips stray files
        }
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.parse::<u64>().is_err() {
            return Err(damaged(format!("keyspaces/{name} is not a keyspace folder")));
        }
        if !e.path().join(CURRENT).is_file() {
            return Err(damaged(format!("keyspaces/{name} has no {CURRENT} file")));
        }
        let tables = e.path().join(TABLES);
        if tables.is_dir() {
            for t in fs::read_dir(&tables).map_err(io(&tables))? {
                let t = t.map_err(io(&tables))?;
                if t.file_type().map_err(io(&t.path()))?.is_dir() {
                    return Err(damaged(format!(
                        "keyspaces/{name}/{TABLES} holds a folder, {}",
                        t.file_name().to_string_lossy()
                    )));
                }
            }
        }
    }
    Ok(())
}
