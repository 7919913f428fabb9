//! The state directory: a marker file that says which kumo format it holds, and the database.
//!
//! A directory is used only if it is new, empty, or carries a marker of this format; anything
//! else is refused with a clear error rather than overwritten or silently started over.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StoreError;
use crate::lock::StateLock;

/// The marker file's name.
pub const MARKER: &str = "KUMO_STATE";
/// The on-disk format this build reads and writes.
pub const FORMAT: u32 = 3;
/// The older format this build rewrites into [`FORMAT`] on open (`migrate.rs`).
pub(crate) const MIGRATES_FROM: u32 = 2;
const DB: &str = "db";

#[derive(Serialize, Deserialize)]
struct Marker {
    format: u32,
    written_by: String,
    /// False until the database and all its keyspaces exist. A crawl killed while creating
    /// its state committed nothing, so that state is finished, not refused as damaged.
    #[serde(default = "ready")]
    ready: bool,
}

/// Markers written before `ready` existed belong to states that were fully created.
fn ready() -> bool {
    true
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io { path: path.to_path_buf(), error }
}

/// A state directory ready to open.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub db: PathBuf,
    /// Nothing was ever committed in it: just created, or its creation was cut short.
    pub new: bool,
    /// The format its marker names: [`FORMAT`], or [`MIGRATES_FROM`] for a state to rewrite.
    pub format: u32,
}

/// Checks (or creates) the directory and says where its database is and what it holds.
pub(crate) fn prepare(dir: &Path) -> Result<Prepared, StoreError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    let marker = dir.join(MARKER);
    let db = dir.join(DB);
    match fs::read(&marker) {
        Ok(bytes) => {
            let m = check_marker(dir, &bytes)?;
            if !m.ready {
                return Ok(Prepared { db, new: true, format: FORMAT });
            }
            if !db.is_dir() {
                return Err(StoreError::Corrupt {
                    path: dir.into(),
                    detail: "its database folder is missing".into(),
                });
            }
            Ok(Prepared { db, new: false, format: m.format })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            // A marker never renamed into place: its first write was cut short.
            let _ = fs::remove_file(dir.join(format!("{MARKER}.tmp")));
            if fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
                return Err(StoreError::Foreign { path: dir.into() });
            }
            write_marker(dir, false)?;
            Ok(Prepared { db, new: true, format: FORMAT })
        }
        Err(e) => Err(io(&marker)(e)),
    }
}

/// Checks that `dir` holds kumo state without creating anything: for commands that inspect
/// a crawl's state, where a mistyped path must not become a new, empty state.
pub(crate) fn require_existing(dir: &Path) -> Result<(), StoreError> {
    if dir.join(MARKER).is_file() {
        return Ok(());
    }
    match fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(StoreError::Foreign { path: dir.into() }),
        Ok(false) => Err(StoreError::Missing { path: dir.into() }),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(StoreError::Missing { path: dir.into() }),
        Err(e) => Err(io(dir)(e)),
    }
}

/// Records that the database and its keyspaces are all created, in this build's format.
pub(crate) fn mark_ready(dir: &Path) -> Result<(), StoreError> {
    write_marker(dir, true)
}

/// Reads the marker and checks its format is one this build opens.
fn check_marker(dir: &Path, bytes: &[u8]) -> Result<Marker, StoreError> {
    let m: Marker = serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        path: dir.into(),
        detail: format!("its {MARKER} file is unreadable: {e}"),
    })?;
    if m.format != FORMAT && m.format != MIGRATES_FROM {
        return Err(StoreError::Incompatible {
            path: dir.into(),
            found: format!("format {} by {}", m.format, m.written_by),
            expected: FORMAT,
        });
    }
    Ok(m)
}

/// Written to a temporary name and renamed, so a crash never leaves half a marker.
fn write_marker(dir: &Path, ready: bool) -> Result<(), StoreError> {
    let m = Marker { format: FORMAT, written_by: format!("kumo {}", env!("CARGO_PKG_VERSION")), ready };
    let tmp = dir.join(format!("{MARKER}.tmp"));
    fs::write(&tmp, serde_json::to_vec_pretty(&m)?).map_err(io(&tmp))?;
    fs::rename(&tmp, dir.join(MARKER)).map_err(io(dir))
}

/// Deletes a state directory, refusing one that is not kumo's or that another process holds.
pub fn discard(dir: &Path) -> Result<(), StoreError> {
    if !dir.exists() {
        return Ok(());
    }
    let lock = StateLock::acquire(dir)?;
    clear(&lock)?;
    fs::remove_dir(dir).map_err(io(dir))
}

/// Empties the locked state directory (`--fresh`), refusing one that is not kumo's. The
/// directory itself stays, and with it the lock. The marker goes last: cut short, the
/// directory is still recognisably kumo's, and the next `--fresh` finishes the job.
pub(crate) fn clear(lock: &StateLock) -> Result<(), StoreError> {
    let dir = lock.dir();
    let is_kumo = dir.join(MARKER).is_file();
    let mut entries = Vec::new();
    for e in fs::read_dir(dir).map_err(io(dir))? {
        entries.push(e.map_err(io(dir))?);
    }
    if !is_kumo && !entries.is_empty() {
        return Err(StoreError::Foreign { path: dir.into() });
    }
    entries.sort_by_key(|e| e.file_name() == MARKER);
    for e in entries {
        let path = e.path();
        let is_dir = e.file_type().map_err(io(&path))?.is_dir();
        if is_dir { fs::remove_dir_all(&path) } else { fs::remove_file(&path) }.map_err(io(&path))?;
    }
    Ok(())
}

/// Maps a database open failure to what it means for the user.
pub(crate) fn open_error(dir: &Path, e: fjall::Error) -> StoreError {
    match e {
        fjall::Error::Locked => StoreError::Locked { path: dir.into() },
        fjall::Error::InvalidVersion(Some(v)) => StoreError::Incompatible {
            path: dir.into(),
            found: format!("database format {v}"),
            expected: FORMAT,
        },
        fjall::Error::InvalidVersion(None) => StoreError::Corrupt {
            path: dir.into(),
            detail: "the database's version file is unreadable".into(),
        },
        other => StoreError::Corrupt { path: dir.into(), detail: other.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_then_reopened() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        assert!(prepare(&dir).unwrap().new);
        assert!(prepare(&dir).unwrap().new, "creation cut short: still new");
        fs::create_dir(dir.join(DB)).unwrap();
        mark_ready(&dir).unwrap();
        let p = prepare(&dir).unwrap();
        assert!(!p.new);
        assert_eq!(p.format, FORMAT);
        fs::remove_dir(dir.join(DB)).unwrap();
        assert!(matches!(prepare(&dir), Err(StoreError::Corrupt { .. })), "created, then lost");
    }

    #[test]
    fn clear_keeps_the_locked_directory_and_refuses_a_foreign_one() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("s");
        prepare(&dir).unwrap();
        fs::create_dir_all(dir.join(DB).join("x")).unwrap();
        let lock = StateLock::acquire(&dir).unwrap();
        clear(&lock).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "emptied");
        assert!(matches!(discard(&dir), Err(StoreError::Locked { .. })), "held by the lock");
        drop(lock);
        discard(&dir).unwrap();
        assert!(!dir.exists());

        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let lock = StateLock::acquire(&dir).unwrap();
        assert!(matches!(clear(&lock), Err(StoreError::Foreign { .. })));
        assert!(dir.join("notes.txt").exists());
    }

    #[test]
    fn foreign_and_future_directories_are_refused() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("notes.txt"), "mine").unwrap();
        let e = prepare(t.path()).unwrap_err();
        assert!(matches!(e, StoreError::Foreign { .. }), "{e}");
        assert!(discard(t.path()).is_err(), "a foreign directory is never deleted");
        assert!(t.path().join("notes.txt").exists());

        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join(MARKER), r#"{"format": 99, "written_by": "kumo 9.0"}"#).unwrap();
        let e = prepare(t.path()).unwrap_err();
        assert!(e.to_string().contains("format 99 by kumo 9.0"), "{e}");
        assert!(e.to_string().contains("--fresh"), "{e}");

        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join(MARKER), r#"{"form"#).unwrap();
        let e = prepare(t.path()).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    }
}
