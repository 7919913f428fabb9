//! What a pipeline commits at a checkpoint and gets back when it resumes after a crash.
//!
//! The engine commits a [`PipelineCheckpoint`] atomically with "journal consumed up to N";
//! on restart it folds every committed checkpoint, in commit order, into a [`PipelineResume`]
//! ([`PipelineResume::push`]), opens the pipeline with it and replays the journal after N.
//! A checkpoint taken but not committed must end the run: what it carried (state entries
//! added since the previous one) is handed out once.

use serde::{Deserialize, Serialize};

/// One entry of state a processor keeps (a dedup key), tagged with the processor's index in its chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateEntry {
    /// The index of the processor that keeps it, in its chain. A
    /// [`ProcessingSink`](crate::ProcessingSink) also keeps its inner sinks' checkpoints as
    /// entries, tagged down from `u32::MAX`.
    pub processor: u32,
    /// The entry as its processor encoded it (a de-duplicator's 16-byte key).
    pub data: Vec<u8>,
}

/// What proves, when a crawl resumes, that the file at a file sink's path is the one it wrote,
/// before the file is cut back to its committed offset: a hash of the bytes just before the
/// offset, and the file's identity for a checkpoint with no bytes to hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileProof {
    /// How many bytes before the offset `tail_xxh3` covers: at most 4 KiB, fewer when the
    /// offset is smaller.
    pub tail_len: u32,
    /// xxh3-64 of those bytes.
    pub tail_xxh3: u64,
    /// Device and inode of the file (Unix).
    pub file_id: Option<(u64, u64)>,
}

/// What one sink commits at a checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinkCheckpoint {
    /// Bytes of output holding whole, committed items (file sinks). None for sinks that cannot
    /// be truncated (stdout) or need not be (upserting database sinks).
    pub offset: Option<u64>,
    /// State entries added since the previous checkpoint (a ProcessingSink's chain).
    pub state: Vec<StateEntry>,
    /// With `offset`: what proves on resume that the file is this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileProof>,
}

/// Everything committed for one sink, handed back on resume: the last offset and its proof,
/// and all state entries of all checkpoints in commit order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinkResume {
    /// The last committed offset; `None` for a sink that keeps none.
    pub offset: Option<u64>,
    /// Every state entry committed, in commit order.
    pub state: Vec<StateEntry>,
    /// The proof committed with the last offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileProof>,
}

/// A pipeline's checkpoint: its own chain's new state entries, and one SinkCheckpoint per
/// sink, in sink order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelineCheckpoint {
    /// State entries the pipeline's own chain added since the previous checkpoint.
    pub processors: Vec<StateEntry>,
    /// One checkpoint per sink, in sink order.
    pub sinks: Vec<SinkCheckpoint>,
}

/// What a pipeline resumes from. `sinks[i]` belongs to sink i; a missing entry means that sink
/// starts fresh.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelineResume {
    /// Every state entry the pipeline's own chain committed, in commit order.
    pub processors: Vec<StateEntry>,
    /// What was committed for each sink, in sink order.
    pub sinks: Vec<SinkResume>,
}

impl SinkResume {
    /// Adds the next committed checkpoint: its offset replaces the last one, its state
    /// entries follow the earlier ones.
    pub fn push(&mut self, checkpoint: SinkCheckpoint) {
        self.offset = checkpoint.offset;
        self.file = checkpoint.file;
        self.state.extend(checkpoint.state);
    }
}

impl PipelineResume {
    /// Adds the next committed checkpoint, sink by sink.
    pub fn push(&mut self, checkpoint: PipelineCheckpoint) {
        self.processors.extend(checkpoint.processors);
        if self.sinks.len() < checkpoint.sinks.len() {
            self.sinks.resize_with(checkpoint.sinks.len(), SinkResume::default);
        }
        for (resume, sink) in self.sinks.iter_mut().zip(checkpoint.sinks) {
            resume.push(sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(processor: u32, byte: u8) -> StateEntry {
        StateEntry { processor, data: vec![byte] }
    }

    #[test]
    fn push_keeps_the_last_offset_and_every_entry_in_order() {
        let mut r = PipelineResume::default();
        r.push(PipelineCheckpoint {
            processors: vec![entry(0, 1)],
            sinks: vec![SinkCheckpoint { offset: Some(10), state: vec![entry(1, 2)], file: None }],
        });
        r.push(PipelineCheckpoint {
            processors: vec![entry(0, 3)],
            sinks: vec![
                SinkCheckpoint { offset: Some(25), state: vec![entry(1, 4)], file: None },
                SinkCheckpoint::default(),
            ],
        });
        assert_eq!(r.processors, [entry(0, 1), entry(0, 3)]);
        assert_eq!(
            r.sinks[0],
            SinkResume { offset: Some(25), state: vec![entry(1, 2), entry(1, 4)], file: None }
        );
        assert_eq!(r.sinks[1], SinkResume::default());
    }
}
