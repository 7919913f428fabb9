//! A processor chain in front of sinks, usable wherever one [`Sink`] is expected.

use async_trait::async_trait;
use kumo_core::Item;

use super::{ProcessorChain, nested};
use crate::{FileProof, Sink, SinkCheckpoint, SinkError, SinkResume};

/// Runs each batch through a [`ProcessorChain`], then writes what is left to every sink
/// (stopping at the first failing sink with `fail_fast`). Its processor counts show in the
/// engine's summary through [`Sink::stats`].
///
/// Its checkpoint carries its chain's new state and its inner sinks' checkpoints, nested in
/// its state entries (see `nested.rs`); `open` restores the chain and resumes every inner sink.
pub struct ProcessingSink {
    chain: ProcessorChain,
    sinks: Vec<Box<dyn Sink>>,
    fail_fast: bool,
    problems: u64,
    /// Each inner sink's offset and file proof as last checkpointed (or resumed), so that a
    /// checkpoint repeats no unchanged one.
    inner_offsets: Vec<(Option<u64>, Option<FileProof>)>,
}

impl ProcessingSink {
    /// `chain` in front of `sinks`; with `fail_fast`, a failing sink keeps the batch from the
    /// sinks after it.
    pub fn new(chain: ProcessorChain, sinks: Vec<Box<dyn Sink>>, fail_fast: bool) -> Self {
        let inner_offsets = vec![(None, None); sinks.len()];
        ProcessingSink { chain, sinks, fail_fast, problems: 0, inner_offsets }
    }

    /// Its processor chain.
    pub fn chain(&self) -> &ProcessorChain {
        &self.chain
    }
}

#[async_trait]
impl Sink for ProcessingSink {
    fn name(&self) -> String {
        let inner: Vec<String> = self.sinks.iter().map(|s| s.name()).collect();
        format!("processed[{}]", inner.join(","))
    }

    async fn open(&mut self, resume: Option<&SinkResume>) -> Result<(), SinkError> {
        let inner = match resume {
            None => vec![None; self.sinks.len()],
            Some(r) => {
                let inner = nested::decode(&r.state, self.sinks.len())
                    .map_err(|reason| SinkError::Resume { target: self.name(), reason })?;
                // The inner sinks' entries are tagged past any processor index: the chain
                // skips them.
                self.chain.restore_state(&r.state);
                inner
            }
        };
        self.inner_offsets =
            inner.iter().map(|r| r.as_ref().map_or((None, None), |r| (r.offset, r.file))).collect();
        let mut first = None;
        for (s, r) in self.sinks.iter_mut().zip(&inner) {
            if let Err(e) = s.open(r.as_ref()).await {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        let out = self.chain.apply(items.iter().cloned());
        self.problems += out.problems.len() as u64;
        if out.items.is_empty() {
            return Ok(());
        }
        let mut first = None;
        for s in &mut self.sinks {
            if let Err(e) = s.write(&out.items).await {
                first.get_or_insert(e);
                if self.fail_fast {
                    break;
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        let mut first = None;
        for s in &mut self.sinks {
            if let Err(e) = s.flush().await {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn checkpoint(&mut self) -> SinkCheckpoint {
        let mut state = self.chain.take_state();
        for (i, (s, last)) in self.sinks.iter_mut().zip(&mut self.inner_offsets).enumerate() {
            let inner = s.checkpoint();
            if inner.state.is_empty() && (inner.offset, inner.file) == *last {
                continue;
            }
            *last = (inner.offset, inner.file);
            state.push(nested::encode(i, &inner));
        }
        SinkCheckpoint { offset: None, state, file: None }
    }

    fn stats(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.chain.stats()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JsonLinesSink;
    use crate::processors::DedupByKey;

    #[tokio::test]
    async fn a_checkpoint_carries_only_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = JsonLinesSink::create(&dir.path().join("out.jsonl")).unwrap();
        let chain = ProcessorChain::new(true).with(DedupByKey::new(["k"]));
        let mut s = ProcessingSink::new(chain, vec![Box::new(file)], true);
        s.open(None).await.unwrap();
        s.write(&[Item::new().with("k", 1)]).await.unwrap();
        s.flush().await.unwrap();
        let first = s.checkpoint();
        assert_eq!(first.offset, None);
        let tags: Vec<u32> = first.state.iter().map(|e| e.processor).collect();
        assert_eq!(tags, [0, nested::tag(0)], "one key, then the file's checkpoint");
        // Nothing new: no key, and the file's offset is not repeated.
        s.write(&[Item::new().with("k", 1)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(s.checkpoint(), SinkCheckpoint::default());
    }
}
