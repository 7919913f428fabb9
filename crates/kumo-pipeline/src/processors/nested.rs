//! How a [`ProcessingSink`](super::ProcessingSink) carries its inner sinks' checkpoints inside
//! its own.
//!
//! A processing sink gives one [`SinkCheckpoint`], with no offset of its own. Its `state`
//! holds:
//! - its chain's entries, tagged with the processor's index (0, 1, …) as the chain tags them;
//! - for inner sink `i`, at most one entry per checkpoint, tagged `u32::MAX - i`, whose data
//!   is the JSON of that sink's whole `SinkCheckpoint`: its offset, the proof of its file and
//!   its own state entries (which nest again when the inner sink is a processing sink too).
//!
//! The two tag ranges cannot meet: a chain has nowhere near `u32::MAX` processors, and it ignores
//! entries naming an index it does not have, so the whole state can be handed to it.
//!
//! On resume, inner sink `i`'s entries, in commit order, fold like a pipeline's checkpoints
//! do ([`SinkResume::push`]): the last entry's offset and proof, and every state entry in
//! order. An inner checkpoint with no state that repeats the offset last recorded is left out, since
//! folding it would change nothing: an idle sink adds nothing to what the engine keeps.

use crate::{SinkCheckpoint, SinkResume, StateEntry};

/// The tag of inner sink `i`'s entries.
pub(super) fn tag(i: usize) -> u32 {
    u32::MAX - i as u32
}

/// Which of `sinks` inner sinks a tag names, if any.
fn inner_index(tag: u32, sinks: usize) -> Option<usize> {
    let i = (u32::MAX - tag) as usize;
    (i < sinks).then_some(i)
}

/// Inner sink `i`'s checkpoint as one entry.
pub(super) fn encode(i: usize, checkpoint: &SinkCheckpoint) -> StateEntry {
    // Plain structs of integers and byte vectors: serializing them cannot fail.
    let data = serde_json::to_vec(checkpoint).expect("a SinkCheckpoint serializes");
    StateEntry { processor: tag(i), data }
}

/// Each of `sinks` inner sinks' resume, folded from `state`; `None` for a sink nothing was
/// committed for. The error says which entry is not a checkpoint.
pub(super) fn decode(state: &[StateEntry], sinks: usize) -> Result<Vec<Option<SinkResume>>, String> {
    let mut out = vec![None; sinks];
    for entry in state {
        let Some(i) = inner_index(entry.processor, sinks) else { continue };
        let checkpoint: SinkCheckpoint = serde_json::from_slice(&entry.data)
            .map_err(|e| format!("the committed checkpoint of inner sink {i} is not valid: {e}"))?;
        if let Some(slot) = out.get_mut(i) {
            slot.get_or_insert_with(SinkResume::default).push(checkpoint);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(offset: Option<u64>, keys: &[u8]) -> SinkCheckpoint {
        let state = keys.iter().map(|&k| StateEntry { processor: 0, data: vec![k] }).collect();
        SinkCheckpoint { offset, state, file: None }
    }

    #[test]
    fn entries_fold_per_sink_in_commit_order() {
        let state = vec![
            StateEntry { processor: 0, data: vec![9] }, // the outer chain's: skipped here
            encode(0, &checkpoint(Some(10), &[1])),
            encode(1, &checkpoint(Some(7), &[])),
            encode(0, &checkpoint(Some(30), &[2, 3])),
        ];
        let resumes = decode(&state, 3).unwrap();
        assert_eq!(
            resumes[0],
            Some(SinkResume { offset: Some(30), state: checkpoint(None, &[1, 2, 3]).state, file: None })
        );
        assert_eq!(resumes[1], Some(SinkResume { offset: Some(7), ..Default::default() }));
        assert_eq!(resumes[2], None);
    }

    #[test]
    fn a_bad_entry_is_an_error_naming_the_sink() {
        let state = vec![StateEntry { processor: tag(1), data: b"not json".to_vec() }];
        let err = decode(&state, 2).unwrap_err();
        assert!(err.contains("inner sink 1"), "{err}");
        // A tag past the sinks there are is not ours: ignored.
        assert_eq!(decode(&state, 1).unwrap(), vec![None]);
    }
}
