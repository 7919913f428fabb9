//! The state directory: a marker file that says which kumo format it holds, and the database.
//!
//! A directory is used only if it is new, empty, or carries a marker of this format; anything
//! else is refused with a clear error rather than overwritten or silently started over.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StoreError;

/// The marker file's name.
pub const MARKER: &str = "KUMO_STATE";
/// The on-disk format this build reads and writes.
pub const FORMAT: u32 = 1;
const DB: &str = "db";

#[derive(Serialize, Deserialize)]
struct Marker {
    format: u32,
    written_by: String,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io { path: path.to_path_buf(), error }
}

/// Checks (or creates) the directory and returns the database path, and whether it is new.
pub(crate) fn prepare(dir: &Path) -> Result<(PathBuf, bool), StoreError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    let marker = dir.join(MARKER);
    let db = dir.join(DB);
    match fs::read(&marker) {
        Ok(bytes) => {
            check_marker(dir, &bytes)?;
            if !db.is_dir() {
                return Err(StoreError::Corrupt {
                    path: dir.into(),
                    detail: "its database folder is missing".into(),
                });
            }
            Ok((db, false))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
                return Err(StoreError::Foreign { path: dir.into() });
            }
            write_marker(dir)?;
            Ok((db, true))
        }
        Err(e) => Err(io(&marker)(e)),
    }
}

fn check_marker(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let m: Marker = serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        path: dir.into(),
        detail: format!("its {MARKER} file is unreadable: {e}"),
    })?;
    if m.format != FORMAT {
        return Err(StoreError::Incompatible {
            path: dir.into(),
            found: format!("format {} by {}", m.format, m.written_by),
            expected: FORMAT,
        });
    }
    Ok(())
}

/// Written to a temporary name and renamed, so a crash never leaves half a marker.
fn write_marker(dir: &Path) -> Result<(), StoreError> {
    let m = Marker { format: FORMAT, written_by: format!("kumo {}", env!("CARGO_PKG_VERSION")) };
    let tmp = dir.join(format!("{MARKER}.tmp"));
    fs::write(&tmp, serde_json::to_vec_pretty(&m)?).map_err(io(&tmp))?;
    fs::rename(&tmp, dir.join(MARKER)).map_err(io(dir))
}

/// Deletes a state directory, refusing one that is not kumo's.
pub fn discard(dir: &Path) -> Result<(), StoreError> {
    if !dir.exists() {
        return Ok(());
    }
    let is_kumo = dir.join(MARKER).is_file();
    let is_empty = fs::read_dir(dir).map_err(io(dir))?.next().is_none();
    if !is_kumo && !is_empty {
        return Err(StoreError::Foreign { path: dir.into() });
    }
    fs::remove_dir_all(dir).map_err(io(dir))
}

/// Maps a database open failure to what it means for the user.
pub(crate) fn open_error(dir: &Path, e: fjall::Error) -> StoreError {
    match e {
        fjall::Error::Locked => StoreError::Locked { path: dir.into() },
        fjall::Error::InvalidVersion(v) => StoreError::Incompatible {
            path: dir.into(),
            found: format!("database version {v:?}"),
            expected: FORMAT,
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
        let (_, new) = prepare(&dir).unwrap();
        assert!(new);
        fs::create_dir(dir.join(DB)).unwrap();
        let (_, new) = prepare(&dir).unwrap();
        assert!(!new);
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
