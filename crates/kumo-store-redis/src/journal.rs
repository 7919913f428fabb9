//! Each worker's item journal in Redis: the items of the pages it committed, appended by the
//! commit that acknowledges them, and its outputs' checkpoints. A worker restarted under the
//! same name resumes its outputs from them, so every item reaches its outputs exactly once.

use async_trait::async_trait;
use kumo_core::Item;
use kumo_pipeline::{
    ItemJournal, JournalError, PipelineCheckpoint, PipelineResume, ResumePoint, SinkCheckpoint,
};

use crate::RedisFrontier;
use crate::call::{array, bytes, int, text};

/// Checkpoints stored before they are folded into one, while the worker runs.
const FOLD_EVERY: usize = 256;

/// This worker's checkpoints as stored in Redis, folded: what a compaction writes.
#[derive(Default)]
pub(crate) struct Folded {
    resume: Option<PipelineResume>,
    /// How many entries the list holds (`None`: unknown, so no compaction until the next
    /// resume reads it again).
    stored: Option<usize>,
}

/// One checkpoint that folds to `resume`: every state entry, each sink's last offset and proof.
fn as_checkpoint(resume: &PipelineResume) -> PipelineCheckpoint {
    PipelineCheckpoint {
        processors: resume.processors.clone(),
        sinks: resume
            .sinks
            .iter()
            .map(|s| SinkCheckpoint { offset: s.offset, state: s.state.clone(), file: s.file })
            .collect(),
    }
}

fn err(e: impl std::fmt::Display) -> JournalError {
    JournalError(e.to_string())
}

#[async_trait]
impl ItemJournal for RedisFrontier {
    async fn resume_point(&self) -> Result<ResumePoint, JournalError> {
        let mut a = self.args("resume");
        a.s(&self.cfg.worker);
        let reply = array(self.call(&a).await.map_err(err)?).map_err(err)?;
        let mut it = reply.into_iter();
        let upto = it.next().map(|v| int(&v)).transpose().map_err(err)?.unwrap_or(0);
        let upto = u64::try_from(upto).unwrap_or(0);
        let n = it.next().map(|v| int(&v)).transpose().map_err(err)?.unwrap_or(0);
        let mut pending = Vec::new();
        for (i, v) in it.by_ref().take(usize::try_from(n).unwrap_or(0)).enumerate() {
            let item: Item = serde_json::from_slice(&bytes(v).map_err(err)?).map_err(err)?;
            pending.push((upto + 1 + i as u64, item));
        }
        let mut pipeline: Option<PipelineResume> = None;
        let mut checkpoints = 0usize;
        for v in it {
            let cp: PipelineCheckpoint = serde_json::from_slice(&bytes(v).map_err(err)?).map_err(err)?;
            pipeline.get_or_insert_with(PipelineResume::default).push(cp);
            checkpoints += 1;
        }
        let stored = self.compact(pipeline.as_ref(), checkpoints).await?;
        *self.folded() = Folded { resume: pipeline.clone(), stored };
        Ok(ResumePoint { pipeline, upto, pending })
    }

    async fn checkpoint(&self, upto: u64, checkpoint: PipelineCheckpoint) -> Result<(), JournalError> {
        let mut a = self.args("checkpoint");
        a.s(&self.cfg.worker).n(upto).b(&serde_json::to_vec(&checkpoint).map_err(err)?);
        let stored = text(self.call(&a).await.map_err(err)?).map_err(err)? == "ok";
        // Folded as Redis stored it; folded into one entry every FOLD_EVERY.
        let due = {
            let mut f = self.folded();
            if stored {
                f.resume.get_or_insert_with(PipelineResume::default).push(checkpoint);
                f.stored = f.stored.map(|n| n + 1);
            }
            f.stored.filter(|&n| n >= FOLD_EVERY).and_then(|n| f.resume.clone().map(|r| (r, n)))
        };
        if let Some((resume, n)) = due {
            let stored = self.compact(Some(&resume), n).await?;
            self.folded().stored = stored;
        }
        Ok(())
    }
}

impl RedisFrontier {
    fn folded(&self) -> std::sync::MutexGuard<'_, Folded> {
        self.folded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the `n` stored checkpoints by one that folds to `resume`, if the list still
    /// holds `n`. Returns how many it holds after, when known.
    async fn compact(
        &self,
        resume: Option<&PipelineResume>,
        n: usize,
    ) -> Result<Option<usize>, JournalError> {
        let Some(resume) = resume.filter(|_| n > 1) else { return Ok(Some(n)) };
        let mut a = self.args("compact_checkpoints");
        a.s(&self.cfg.worker).n(n).b(&serde_json::to_vec(&as_checkpoint(resume)).map_err(err)?);
        let done = int(&self.call(&a).await.map_err(err)?).map_err(err)? == 1;
        Ok(done.then_some(1))
    }
}
