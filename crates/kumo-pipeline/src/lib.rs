//! The item pipeline: items flow through processors in order, then into every sink.
//!
//! This crate holds the [`processors`] (validate, drop, transform, de-duplicate), the
//! [`Sink`] interface and the sinks: JSON Lines, CSV, PostgreSQL and an in-memory one.

mod collect;
mod csv;
mod jsonl;
mod pipeline;
pub mod postgres;
pub mod processors;
mod sink;

pub use collect::CollectSink;
pub use csv::CsvSink;
pub use jsonl::JsonLinesSink;
pub use pipeline::Pipeline;
pub use postgres::{ColumnSpec, PgError, PgMode, PgSinkConfig, PgType, PostgresSink};
pub use processors::{ProcessOutcome, ProcessingSink, Processor, ProcessorChain, ProcessorStats};
pub use sink::{Sink, SinkError};
