//! The state directory's lock: one kumo process at a time inside a state directory.
//!
//! fjall locks its database when it opens it, but that comes too late: kumo's checks read
//! the database journal first (and would read one the owner is writing, taking its last,
//! half-written commit for damage), and `--fresh` deletes the directory before opening it.
//! So every command that reads, opens or deletes a state directory takes this lock first,
//! and holds it until it is done. It is an advisory lock (`flock`) on the directory itself,
//! so it adds no file to the directory and goes away with the process, however it ends.

use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use crate::StoreError;

/// Holds a state directory for this process until dropped.
#[derive(Debug)]
pub struct StateLock {
    dir: PathBuf,
    _handle: File,
}

impl StateLock {
    /// Locks the existing directory `dir`, or fails with [`StoreError::Locked`] when another
    /// process holds it. Never waits.
    pub fn acquire(dir: &Path) -> Result<Self, StoreError> {
        let io = |error| StoreError::Io { path: dir.into(), error };
        let handle = File::open(dir).map_err(io)?;
        match handle.try_lock() {
            Ok(()) => Ok(StateLock { dir: dir.into(), _handle: handle }),
            Err(TryLockError::WouldBlock) => Err(StoreError::Locked { path: dir.into() }),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// Creates `dir` if it is missing, then locks it.
    pub fn create(dir: &Path) -> Result<Self, StoreError> {
        fs::create_dir_all(dir).map_err(|error| StoreError::Io { path: dir.into(), error })?;
        Self::acquire(dir)
    }

    /// The directory held.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_is_refused_until_released() {
        let t = tempfile::tempdir().unwrap();
        let first = StateLock::acquire(t.path()).unwrap();
        let e = StateLock::acquire(t.path()).unwrap_err();
        assert!(matches!(e, StoreError::Locked { .. }), "{e}");
        drop(first);
        StateLock::acquire(t.path()).expect("free once released");
    }

    #[test]
    fn create_makes_the_directory_and_adds_nothing_to_it() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a/b");
        let lock = StateLock::create(&dir).unwrap();
        assert_eq!(lock.dir(), dir);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    }
}
