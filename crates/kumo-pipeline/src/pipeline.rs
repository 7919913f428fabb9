//! The pipeline module: items in, processors in order, sinks out, with the seeds' module ID
//! and counters.

use kumo_core::{Item, ModuleCounters, ModuleId, ModuleKind};

use crate::{PipelineCheckpoint, PipelineResume, ProcessorChain, Sink, SinkError};

/// Runs each item through the processors, then sends it to every sink. With `fail_fast`, the
/// first sink error stops the item from reaching later sinks (the seeds' pipeline); otherwise
/// every sink is tried. (The processors' own fail-fast is the chain's.)
///
/// To resume after a crash: [`open`](Pipeline::open) before the first item, and after each
/// successful [`flush`](Pipeline::flush) commit what [`checkpoint`](Pipeline::checkpoint)
/// returns together with the input consumed so far (see [`PipelineResume`]).
pub struct Pipeline {
    id: ModuleId,
    processors: ProcessorChain,
    sinks: Vec<Box<dyn Sink>>,
    fail_fast: bool,
    counters: ModuleCounters,
}

impl Pipeline {
    /// Pipeline module `serial` (ID `P{serial}`), writing to `sinks` in order, with no
    /// processors.
    pub fn new(serial: u64, sinks: Vec<Box<dyn Sink>>, fail_fast: bool) -> Self {
        Pipeline {
            id: ModuleId::new(ModuleKind::Pipeline, serial),
            processors: ProcessorChain::default(),
            sinks,
            fail_fast,
            counters: ModuleCounters::default(),
        }
    }

    /// Runs `processors` before the sinks.
    pub fn with_processors(mut self, processors: ProcessorChain) -> Self {
        self.processors = processors;
        self
    }

    /// Per-processor counts: this pipeline's chain, then any its sinks report (a
    /// [`ProcessingSink`](crate::ProcessingSink)'s chain). Empty when there are none.
    pub fn processor_stats(&self) -> Vec<serde_json::Value> {
        let own = self.processors.stats().into_iter().filter_map(|s| serde_json::to_value(s).ok());
        let from_sinks = self.sinks.iter().filter_map(|s| s.stats()).flat_map(|v| match v {
            serde_json::Value::Array(a) => a,
            other => vec![other],
        });
        own.chain(from_sinks).collect()
    }

    /// Its module ID (`P1`...).
    pub fn id(&self) -> &ModuleId {
        &self.id
    }

    /// Its counters; each item of a batch counts as one call.
    pub fn counters(&self) -> &ModuleCounters {
        &self.counters
    }

    /// Each sink's [`Sink::name`], in order.
    pub fn sink_names(&self) -> Vec<String> {
        self.sinks.iter().map(|s| s.name()).collect()
    }

    /// Sends a batch of items through the processors and on to the sinks; returns the sink
    /// errors met (empty on success). The counters count items; an item a processor dropped
    /// or found invalid counts as completed.
    pub async fn send(&mut self, items: &[Item]) -> Vec<SinkError> {
        for _ in items {
            self.counters.called();
            self.counters.accepted();
        }
        let processed;
        let kept = if self.processors.is_empty() {
            items
        } else {
            processed = self.processors.apply(items.iter().cloned()).items;
            &processed[..]
        };
        let mut errors = Vec::new();
        if !kept.is_empty() {
            for s in &mut self.sinks {
                if let Err(e) = s.write(kept).await {
                    errors.push(e);
                    if self.fail_fast {
                        break;
                    }
                }
            }
        }
        for _ in items {
            self.counters.finished(errors.is_empty());
        }
        errors
    }

    /// Flushes every sink, even after one fails; returns the errors met (empty on success).
    pub async fn flush(&mut self) -> Vec<SinkError> {
        let mut errors = Vec::new();
        for s in &mut self.sinks {
            if let Err(e) = s.flush().await {
                errors.push(e);
            }
        }
        errors
    }

    /// Opens every sink (fresh, or resumed at `resume`) and restores the pipeline's own
    /// processors. Returns the errors met (empty on success).
    pub async fn open(&mut self, resume: Option<&PipelineResume>) -> Vec<SinkError> {
        if let Some(r) = resume {
            self.processors.restore_state(&r.processors);
        }
        let mut errors = Vec::new();
        for (i, s) in self.sinks.iter_mut().enumerate() {
            if let Err(e) = s.open(resume.and_then(|r| r.sinks.get(i))).await {
                errors.push(e);
            }
        }
        errors
    }

    /// After a successful `flush`: the checkpoint to commit.
    pub fn checkpoint(&mut self) -> PipelineCheckpoint {
        PipelineCheckpoint {
            processors: self.processors.take_state(),
            sinks: self.sinks.iter_mut().map(|s| s.checkpoint()).collect(),
        }
    }
}
