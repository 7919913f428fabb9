//! The sink interface: where items end up.

use async_trait::async_trait;
use kumo_core::Item;

use crate::{SinkCheckpoint, SinkResume};

/// A sink failed to take an item.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The cause is part of the message (not a `source`), so it prints once.
    #[error("cannot write {target}: {error}")]
    Io { target: String, error: std::io::Error },
    #[error("cannot encode item: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Postgres(#[from] crate::postgres::PgError),
    /// A file is shorter than its committed checkpoint: someone changed or replaced it, and
    /// appending to it would lose or corrupt items.
    #[error(
        "cannot resume {target}: the checkpoint committed {committed} bytes but the file holds only \
         {found}; the output file was changed or replaced since"
    )]
    ResumeBeyondEnd { target: String, committed: u64, found: u64 },
    /// Other reasons a sink cannot resume where its checkpoint says.
    #[error("cannot resume {target}: {reason}")]
    Resume { target: String, reason: String },
}

/// A destination for items. Called from one task at a time, so it needs no locking. Items come
/// in batches (all the items of the pages one frontier commit covered), so a database sink can
/// write a batch in one statement.
#[async_trait]
pub trait Sink: Send {
    /// A short name for logs and the summary (`jsonl:out.jsonl`).
    fn name(&self) -> String;

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError>;

    /// Makes everything written so far durable enough for the sink's promise.
    async fn flush(&mut self) -> Result<(), SinkError>;

    /// Called once before the first write. `None`: start the output fresh. `Some`: resume at
    /// a committed checkpoint (a file sink truncates its file back to `offset`; processors
    /// restore their state).
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
