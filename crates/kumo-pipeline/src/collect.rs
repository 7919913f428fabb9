//! A sink that keeps items in memory, for tests, examples and embedding kumo in a program.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kumo_core::Item;

use crate::{Sink, SinkError};

/// Collects items into a shared vector; clone the handle from [`CollectSink::items`] before
/// handing the sink to the engine. It keeps no checkpoint: in memory, nothing survives a crash.
#[derive(Debug, Clone, Default)]
pub struct CollectSink {
    items: Arc<Mutex<Vec<Item>>>,
}

impl CollectSink {
    /// A sink holding no items yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The shared vector the sink appends to.
    pub fn items(&self) -> Arc<Mutex<Vec<Item>>> {
        self.items.clone()
    }

    /// A copy of everything collected so far.
    pub fn snapshot(&self) -> Vec<Item> {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[async_trait]
impl Sink for CollectSink {
    fn name(&self) -> String {
        "memory".into()
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(items);
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}
