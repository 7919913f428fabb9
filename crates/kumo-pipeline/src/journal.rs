//! The item journal a durable backend keeps: items are committed to it atomically with the
//! crawl's progress, and the pipeline consumes it, committing checkpoints as it goes. After a
//! crash the pipeline reopens at the last checkpoint and the items after it are replayed, so
//! every item reaches every sink exactly once.

use async_trait::async_trait;
use kumo_core::Item;

use crate::{PipelineCheckpoint, PipelineResume};

/// The journal's storage failed.
#[derive(Debug, thiserror::Error)]
#[error("item journal: {0}")]
pub struct JournalError(pub String);

/// Where the pipeline resumes.
#[derive(Debug, Default)]
pub struct ResumePoint {
    /// Every checkpoint committed so far, folded; `None` when the outputs start fresh.
    pub pipeline: Option<PipelineResume>,
    /// Items up to this journal number are in the outputs as the checkpoint says.
    pub upto: u64,
    /// The items committed after `upto`, in order, to replay.
    pub pending: Vec<(u64, Item)>,
}

/// A durable item journal (the embedded store implements it).
#[async_trait]
pub trait ItemJournal: Send + Sync {
    /// Where the pipeline resumes: the committed checkpoints, folded, and the items to replay.
    async fn resume_point(&self) -> Result<ResumePoint, JournalError>;

    /// Commits a checkpoint taken after the items up to `upto` were written and flushed.
    async fn checkpoint(&self, upto: u64, checkpoint: PipelineCheckpoint) -> Result<(), JournalError>;
}
