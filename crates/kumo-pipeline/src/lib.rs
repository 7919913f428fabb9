//! The item pipeline: items flow through processors in order, then into every sink.
//!
//! This crate holds the [`Sink`] interface and the sinks: JSON Lines, CSV, PostgreSQL and an
//! in-memory one; processors join it as the spider work lands.

mod collect;
mod csv;
mod jsonl;
mod pipeline;
pub mod postgres;
mod sink;

pub use collect::CollectSink;
pub use csv::CsvSink;
pub use jsonl::JsonLinesSink;
pub use pipeline::Pipeline;
pub use postgres::{ColumnSpec, PgError, PgMode, PgSinkConfig, PgType, PostgresSink};
pub use sink::{Sink, SinkError};
