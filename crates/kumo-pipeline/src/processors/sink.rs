//! A processor chain in front of sinks, usable wherever one [`Sink`] is expected.

use async_trait::async_trait;
use kumo_core::Item;

use super::ProcessorChain;
use crate::{Sink, SinkError};

/// Runs each batch through a [`ProcessorChain`], then writes what is left to every sink
/// (stopping at the first failing sink with `fail_fast`). Its processor counts show in the
/// engine's summary through [`Sink::stats`].
pub struct ProcessingSink {
    chain: ProcessorChain,
    sinks: Vec<Box<dyn Sink>>,
    fail_fast: bool,
    problems: u64,
}

impl ProcessingSink {
    pub fn new(chain: ProcessorChain, sinks: Vec<Box<dyn Sink>>, fail_fast: bool) -> Self {
        ProcessingSink { chain, sinks, fail_fast, problems: 0 }
    }

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

    fn stats(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.chain.stats()).ok()
    }
}
