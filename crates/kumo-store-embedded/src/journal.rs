//! The item journal and the pipeline's checkpoints.
//!
//! The item log (`item_log.rs`) holds items by number until a checkpoint says the sinks have
//! them. `pipeline` holds `upto` (the last item number a checkpoint covers) and each
//! committed checkpoint under `cp` + its number; on resume they are folded in order (sink
//! offsets: the last one wins; processor state: every entry). A checkpoint and its `upto`
//! are one atomic write; the log files it covers are deleted after it.

use async_trait::async_trait;
use kumo_core::Item;
use kumo_pipeline::{ItemJournal, JournalError, PipelineCheckpoint, PipelineResume, ResumePoint};

use crate::store::{EmbeddedStore, Spaces};
use crate::{StoreError, keys};

const UPTO: &str = "upto";
const CHECKPOINT: &[u8] = b"cp";

fn cp_key(n: u64) -> Vec<u8> {
    [CHECKPOINT, &keys::seq(n)[..]].concat()
}

/// The last item number a committed checkpoint covers (0 if none).
pub(crate) fn consumed_upto(sp: &Spaces) -> Result<u64, StoreError> {
    Ok(sp.pipeline.get(UPTO)?.and_then(|v| keys::parse_u64(&v)).unwrap_or(0))
}

/// The number of the last committed checkpoint (0 if none).
pub(crate) fn last_state_seq(sp: &Spaces) -> Result<u64, StoreError> {
    match sp.pipeline.prefix(CHECKPOINT).next_back() {
        Some(kv) => Ok(keys::parse_u64(&kv?.0[CHECKPOINT.len()..]).unwrap_or(0)),
        None => Ok(0),
    }
}

fn err(e: impl std::fmt::Display) -> JournalError {
    JournalError(e.to_string())
}

impl EmbeddedStore {
    /// Items committed after `upto`, in order.
    pub fn journal_after(&self, upto: u64) -> Result<Vec<(u64, Item)>, StoreError> {
        self.lock().items.read_after(upto)
    }

    pub(crate) fn folded_checkpoints(&self) -> Result<Option<PipelineResume>, StoreError> {
        let mut folded: Option<PipelineResume> = None;
        for kv in self.sp.pipeline.prefix(CHECKPOINT) {
            let (k, v) = kv?;
            let cp: PipelineCheckpoint = serde_json::from_slice(&v).map_err(|e| StoreError::Corrupt {
                path: self.dir.clone(),
                detail: format!("pipeline checkpoint {:?}: {e}", keys::parse_u64(&k[CHECKPOINT.len()..])),
            })?;
            folded.get_or_insert_with(PipelineResume::default).push(cp);
        }
        Ok(folded)
    }
}

#[async_trait]
impl ItemJournal for EmbeddedStore {
    async fn resume_point(&self) -> Result<ResumePoint, JournalError> {
        let upto = consumed_upto(&self.sp).map_err(err)?;
        Ok(ResumePoint {
            pipeline: self.folded_checkpoints().map_err(err)?,
            upto,
            pending: self.journal_after(upto).map_err(err)?,
        })
    }

    async fn checkpoint(&self, upto: u64, checkpoint: PipelineCheckpoint) -> Result<(), JournalError> {
        let sp = &self.sp;
        let mut b = self.batch();
        // Checkpoints never move backwards.
        let upto = upto.max(consumed_upto(sp).map_err(err)?);
        let value = serde_json::to_vec(&checkpoint).map_err(err)?;
        let mut inner = self.lock();
        inner.state_seq += 1;
        sp.pipeline.insert(&mut b, cp_key(inner.state_seq), value);
        sp.pipeline.insert(&mut b, UPTO, &keys::seq(upto)[..]);
        self.halt.commit(b, &self.dir).map_err(err)?;
        inner.items.drop_consumed(upto).map_err(err)
    }
}
