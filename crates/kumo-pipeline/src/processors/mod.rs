//! Item processors: the steps an item goes through, in order, before it reaches the sinks
//! (validate, drop, transform, de-duplicate).
//!
//! A [`Processor`] looks at one item and keeps it (possibly changed), drops it (a decision:
//! a duplicate, an unwanted value) or finds it invalid (a problem: a required field is
//! missing). A [`ProcessorChain`] runs processors in order and counts each one's outcomes;
//! the [`Pipeline`](crate::Pipeline) runs its chain before its sinks, and
//! [`ProcessingSink`] puts a chain in front of sinks wherever a plain [`Sink`](crate::Sink)
//! is expected (the engine's pipeline takes sinks).
//!
//! A processor that keeps state (a de-duplicator's keys) hands out what it added since the
//! last checkpoint ([`Processor::take_state`]) and takes it all back when a crawl resumes
//! ([`Processor::restore_state`]), so an item seen before a crash is still known after it.
//!
//! ```
//! use kumo_core::Item;
//! use kumo_pipeline::processors::{DedupByKey, ProcessorChain, Require};
//!
//! let chain = ProcessorChain::new(true)
//!     .with(Require::new(["text"]))
//!     .with(DedupByKey::new(["text"]));
//! let items = vec![
//!     Item::new().with("text", "a"),
//!     Item::new().with("text", "a"),
//!     Item::new().with("other", 1),
//! ];
//! let out = chain.apply(items);
//! assert_eq!(out.items.len(), 1);
//! assert_eq!(out.problems.len(), 1); // the item without `text`
//! ```

mod chain;
mod dedup;
mod filter;
mod nested;
mod require;
mod sink;
mod transform;

use kumo_core::Item;

pub use chain::{ChainOutput, ProcessorChain, ProcessorStats};
pub use dedup::DedupByKey;
pub use filter::{DropIf, Match};
pub use require::Require;
pub use sink::ProcessingSink;
pub use transform::{OnlyModel, Remove, Rename, Set};

/// What a processor decided about one item.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcessOutcome {
    /// Pass the item (possibly changed) on.
    Keep(Item),
    /// Leave the item out on purpose (a duplicate, an unwanted value); not a problem.
    Drop(String),
    /// The item is broken (a required field is missing); reported as a problem.
    Invalid(String),
}

/// One step of the item pipeline. Called from one task at a time, but shared, so state it
/// keeps (a seen set) uses interior mutability.
pub trait Processor: Send + Sync {
    /// A short name for the summary (`dedup(text)`).
    fn name(&self) -> String;

    /// Decides about one item: keep it (maybe changed), drop it, or find it invalid.
    fn process(&self, item: Item) -> ProcessOutcome;

    /// State entries added since the last call (for checkpoints). Stateless processors keep the default.
    fn take_state(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }

    /// Restores entries taken in earlier runs, before any item is processed.
    fn restore_state(&self, entries: &[&[u8]]) {
        let _ = entries;
    }
}

/// The dotted-path-free value of `field`, treating `null` as absent.
pub(crate) fn present<'a>(item: &'a Item, field: &str) -> Option<&'a serde_json::Value> {
    match item.get(field) {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) if s.is_empty() => None,
        Some(v) => Some(v),
    }
}
