//! The pipeline module: items in, sinks out, with the seeds' module ID and counters.

use kumo_core::{Item, ModuleCounters, ModuleId, ModuleKind};

use crate::{Sink, SinkError};

/// Sends each item to every sink. With `fail_fast`, the first sink error stops the item
/// from reaching later sinks (the seeds' pipeline); otherwise every sink is tried.
pub struct Pipeline {
    id: ModuleId,
    sinks: Vec<Box<dyn Sink>>,
    fail_fast: bool,
    counters: ModuleCounters,
}

impl Pipeline {
    pub fn new(serial: u64, sinks: Vec<Box<dyn Sink>>, fail_fast: bool) -> Self {
        Pipeline {
            id: ModuleId::new(ModuleKind::Pipeline, serial),
            sinks,
            fail_fast,
            counters: ModuleCounters::default(),
        }
    }

    pub fn id(&self) -> &ModuleId {
        &self.id
    }

    pub fn counters(&self) -> &ModuleCounters {
        &self.counters
    }

    pub fn sink_names(&self) -> Vec<String> {
        self.sinks.iter().map(|s| s.name()).collect()
    }

    /// Sends a batch of items through; returns the errors met (empty on success). The
    /// counters count items.
    pub async fn send(&mut self, items: &[Item]) -> Vec<SinkError> {
        for _ in items {
            self.counters.called();
            self.counters.accepted();
        }
        let mut errors = Vec::new();
        for s in &mut self.sinks {
            if let Err(e) = s.write(items).await {
                errors.push(e);
                if self.fail_fast {
                    break;
                }
            }
        }
        for _ in items {
            self.counters.finished(errors.is_empty());
        }
        errors
    }

    pub async fn flush(&mut self) -> Vec<SinkError> {
        let mut errors = Vec::new();
        for s in &mut self.sinks {
            if let Err(e) = s.flush().await {
                errors.push(e);
            }
        }
        errors
    }
}
