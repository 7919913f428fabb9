//! After a failed write the store takes no more writes.
//!
//! A batch that fjall reports as failed (ENOSPC, EIO, a read-only remount) may still be in its
//! journal and come back when the state is opened again: its outcome is unknown. The item log
//! must then keep that commit's bytes as they are, because the batch may record them as
//! committed; the next append would write over them, and a resume would find the log and the
//! database disagreeing (a torn record, or another page's items in a committed place: one page
//! lost and another written twice). So the first failed write halts the store: every later
//! write is refused with the first error's cause, the process stops, and the state opens as
//! either side of that one commit, both of which are whole.

use std::path::Path;
use std::sync::OnceLock;

use fjall::OwnedWriteBatch;
use kumo_frontier::FrontierError;

/// The first failed write's cause, once there is one.
#[derive(Debug, Default)]
pub(crate) struct Halt(OnceLock<String>);

impl Halt {
    /// `Err` once a write has failed: nothing more may be written.
    pub fn check(&self) -> Result<(), FrontierError> {
        match self.0.get() {
            None => Ok(()),
            Some(cause) => Err(FrontierError::Storage(format!(
                "the crawl state takes no more writes after a failed one ({cause}); it resumes from its last whole commit once the cause is fixed"
            ))),
        }
    }

    /// Records `cause` as the reason writes stopped (the first one stays).
    pub fn fail(&self, cause: impl std::fmt::Display) -> FrontierError {
        let cause = cause.to_string();
        let _ = self.0.set(cause.clone());
        FrontierError::Storage(cause)
    }

    /// Commits `b` unless writes have stopped; a failure stops them. `dir` is the state
    /// directory, whose free space the message gives.
    pub fn commit(&self, b: OwnedWriteBatch, dir: &Path) -> Result<(), FrontierError> {
        self.check()?;
        b.commit().map_err(|e| self.fail(cause(&e, dir)))
    }
}

/// What a failed write tells the operator: the system's reason, and the free space, since a
/// full disk is the usual cause and fjall's own message for it is only "Poisoned" when the
/// write that failed was one of its flushes.
pub(crate) fn cause(e: &fjall::Error, dir: &Path) -> String {
    let what = match e {
        fjall::Error::Io(io) => io.to_string(),
        fjall::Error::Poisoned => "the database failed one of its own writes earlier".into(),
        e => e.to_string(),
    };
    match free_bytes(dir) {
        Some(free) => format!("state storage: {what}; {} has {free} bytes free", dir.display()),
        None => format!("state storage: {what}"),
    }
}

fn free_bytes(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}
