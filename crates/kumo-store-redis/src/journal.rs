//! Each worker's item journal in Redis: the items of the pages it committed, appended by the
//! commit that acknowledges them, and its outputs' checkpoints. A worker restarted under the
//! same name resumes its outputs from them, so every item reaches its outputs exactly once.

use async_trait::async_trait;
use kumo_core::Item;
use kumo_pipeline::{
    ItemJournal, JournalError, PipelineCheckpoint, PipelineResume, ResumePoint, SinkCheckpoint,
};

use crate::RedisFrontier;
use crate::call::{array, bytes, int};

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
        if let Some(folded) = pipeline.as_ref().filter(|_| checkpoints > 1) {
            let mut a = self.args("compact_checkpoints");
            a.s(&self.cfg.worker).n(checkpoints).b(&serde_json::to_vec(&as_checkpoint(folded)).map_err(err)?);
            self.call(&a).await.map_err(err)?;
        }
        Ok(ResumePoint { pipeline, upto, pending })
    }

    async fn checkpoint(&self, upto: u64, checkpoint: PipelineCheckpoint) -> Result<(), JournalError> {
        let mut a = self.args("checkpoint");
        a.s(&self.cfg.worker).n(upto).b(&serde_json::to_vec(&checkpoint).map_err(err)?);
        self.call(&a).await.map_err(err)?;
        Ok(())
    }
}
