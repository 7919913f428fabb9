//! The item pipeline: items flow through processors in order, then into every sink.
//!
//! This crate holds the [`Sink`] interface and the JSON Lines sink; processors, CSV and
//! PostgreSQL sinks join it as the spider work lands.

mod collect;
mod jsonl;
mod pipeline;
mod sink;

pub use collect::CollectSink;
pub use jsonl::JsonLinesSink;
pub use pipeline::Pipeline;
pub use sink::{Sink, SinkError};
