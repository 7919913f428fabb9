//! `kumo state check`: whether a state directory is sound, by the checks a crawl makes when
//! it opens one, without changing it.
//!
//! Opening a state changes it: fjall recovers its journal (cutting a torn tail), the item log
//! is cut back to its committed end and files the pipeline consumed are deleted. So the check
//! holds the directory's lock (no crawl is writing it meanwhile), copies the state into a
//! temporary directory beside it, and opens the copy with every check: the marker, fjall's
//! files, the walk of its journal, every table block read, the pipeline's checkpoints and the
//! checksums of every item not yet written out. The original is only read.
//!
//! There is no `repair`: cutting a journal at its damage would roll the crawl back to an
//! earlier commit, but the item log files that later checkpoints let go are deleted already,
//! so the outputs could not be rebuilt from that point without losing items.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{EmbeddedConfig, EmbeddedStore, StateLock, StoreError, dir};

/// What a sound state holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateReport {
    /// Requests waiting (leases that were out when the crawl stopped included).
    pub queued: usize,
    /// Requests that failed for good.
    pub failures: usize,
    /// Distinct requests ever queued.
    pub seen: usize,
    /// Items committed but not yet confirmed written by the outputs.
    pub items_pending: usize,
}

/// Checks the state in `dir` without changing it; `Ok` when a crawl would open it.
pub fn check_state(path: &Path) -> Result<StateReport, StoreError> {
    dir::require_existing(path)?;
    let _lock = StateLock::acquire(path)?;
    // Beside the state (the same file system, usually room for a copy), else the system's.
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| StoreError::Io { path, error }
    };
    let scratch = tempfile::Builder::new()
        .prefix(".kumo-state-check-")
        .tempdir_in(parent)
        .or_else(|_| tempfile::Builder::new().prefix("kumo-state-check-").tempdir())
        .map_err(io(parent))?;
    let copy = scratch.path().join("state");
    copy_tree(path, &copy)?;
    let report = open_and_read(&copy).map_err(|e| e.rebase(&copy, path));
    drop(scratch);
    report
}

/// Opens the copy as a crawl would and reads what the crawl would read first.
fn open_and_read(copy: &Path) -> Result<StateReport, StoreError> {
    let store = EmbeddedStore::open_existing(copy, EmbeddedConfig::default())?;
    let upto = crate::journal::consumed_upto(&store.sp)?;
    store.journal_after(upto)?; // every pending item's checksum, as the resume reads them
    store.folded_checkpoints()?;
    let stats = store.queue_stats(0)?;
    Ok(StateReport {
        queued: stats.queued,
        failures: stats.failures,
        seen: stats.seen,
        items_pending: stats.journal_pending,
    })
}

/// Copies the directory `from` to `to`, which must not exist.
fn copy_tree(from: &Path, to: &Path) -> Result<(), StoreError> {
    let io = |path: PathBuf| move |error| StoreError::Io { path, error };
    fs::create_dir(to).map_err(io(to.into()))?;
    for entry in fs::read_dir(from).map_err(io(from.into()))? {
        let entry = entry.map_err(io(from.into()))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().map_err(io(src.clone()))?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            fs::copy(&src, &dst).map_err(io(src))?;
        }
    }
    Ok(())
}
