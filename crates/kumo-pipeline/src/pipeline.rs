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

    /// Sends `item` through; returns the errors met (empty on success).
    pub fn send(&mut self, item: &Item) -> Vec<SinkError> {
        self.counters.called();
        self.counters.accepted();
        let mut errors = Vec::new();
        for s in &mut self.sinks {
            if let Err(e) = s.write(item) {
                errors.push(e);
                if self.fail_fast {
                    break;
                }
            }
        }
        self.counters.finished(errors.is_empty());
        errors
    }

    pub fn flush(&mut self) -> Vec<SinkError> {
        self.sinks.iter_mut().filter_map(|s| s.flush().err()).collect()
    }
}
