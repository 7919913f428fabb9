//! The sink interface: where items end up.

use async_trait::async_trait;
use kumo_core::Item;

use crate::{SinkCheckpoint, SinkResume};

/// A sink failed to take an item.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The cause is part of the message (not a `source`), so it prints once.
    #[error("cannot write {target}: {error}")]
    Io {
        /// The output: a file's path, or the name a writer was given.
        target: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// An item could not be encoded as JSON.
    #[error("cannot encode item: {0}")]
    Encode(#[from] serde_json::Error),
    /// The PostgreSQL sink failed.
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(#[from] crate::postgres::PgError),
    /// A file is shorter than its committed checkpoint: someone changed or replaced it, and
    /// appending to it would lose or corrupt items.
    #[error(
        "cannot resume {target}: the checkpoint committed {committed} bytes but the file holds only \
         {found}; the output file was changed or replaced since. kumo leaves it alone: put the \
         crawl's own file back to resume, or start the crawl over with --fresh"
    )]
    ResumeBeyondEnd {
        /// The file's path.
        target: String,
        /// The length the checkpoint committed, in bytes.
        committed: u64,
        /// The file's length, in bytes.
        found: u64,
    },
    /// The file at a resumed output's path is not the one the crawl wrote: cutting it back
    /// to the committed length would destroy someone else's data.
    #[error(
        "cannot resume {target}: it is not the file this crawl wrote ({reason}). Resuming cuts an \
         output back to the {committed} bytes its crawl committed, which would destroy what this \
         file holds, so kumo leaves it alone: put the crawl's own file back to resume, or start \
         the crawl over with --fresh (with -O to replace this file, or another output to keep it)"
    )]
    NotOurs {
        /// The file's path.
        target: String,
        /// The length the checkpoint committed, in bytes.
        committed: u64,
        /// What shows that the file is another one.
        reason: String,
    },
    /// A new crawl's output file already holds data: replacing it needs an explicit yes.
    #[error(
        "{target} already holds {found} bytes that this crawl did not write, and kumo replaces \
         a file only when told to: write elsewhere, move the file away, or allow replacing it \
         (-O {target} on the command line, overwrite = true in a spider file's output)"
    )]
    Exists {
        /// The file's path.
        target: String,
        /// The file's length, in bytes.
        found: u64,
    },
    /// Another sink, in this process or another, is writing the file: two writers would
    /// mix or lose each other's items.
    #[error(
        "{target} is being written by another crawl{}; wait for it to end, or write elsewhere",
        holder.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    Locked {
        /// The file's path.
        target: String,
        /// The process holding the lock, where `/proc` tells (Linux).
        holder: Option<String>,
    },
    /// Other reasons a sink cannot resume where its checkpoint says.
    #[error("cannot resume {target}: {reason}")]
    Resume {
        /// The output, or the sink's name.
        target: String,
        /// Why it cannot.
        reason: String,
    },
}

/// A destination for items. Called from one task at a time, so it needs no locking. Items come
/// in batches (all the items of the pages one frontier commit covered), so a database sink can
/// write a batch in one statement.
#[async_trait]
pub trait Sink: Send {
    /// A short name for logs and the summary (`jsonl:out.jsonl`).
    fn name(&self) -> String;

    /// Takes a batch of items, in order. They may wait in a buffer until
    /// [`flush`](Sink::flush).
    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError>;

    /// Makes everything written so far durable enough for the sink's promise.
    async fn flush(&mut self) -> Result<(), SinkError>;

    /// Called once before the first write. `None`: start the output fresh (a file sink that
    /// must not replace an existing file refuses one holding data). `Some`: resume at a
    /// committed checkpoint (a file sink checks that the file is the one it wrote, then cuts
    /// it back to `offset`; processors restore their state).
    async fn open(&mut self, resume: Option<&SinkResume>) -> Result<(), SinkError> {
        let _ = resume;
        Ok(())
    }

    /// Called right after a successful `flush`: what to commit now so a restart resumes
    /// exactly here.
    fn checkpoint(&mut self) -> SinkCheckpoint {
        SinkCheckpoint::default()
    }

    /// Counters worth showing in the summary (a processor chain's counts), if any.
    fn stats(&self) -> Option<serde_json::Value> {
        None
    }
}
