//! The item pipeline: items flow through processors in order, then into every sink.
//!
//! This crate holds the [`processors`] (validate, drop, transform, de-duplicate), the
//! [`Sink`] interface and the sinks: JSON Lines, CSV, PostgreSQL and an in-memory one, and
//! the checkpoint types that let a pipeline resume after a crash without losing or repeating
//! an item ([`PipelineCheckpoint`], [`PipelineResume`]).
//!
//! The PostgreSQL sink (the `postgres` module) needs the `postgres` feature (on by default).

#![warn(missing_docs)]

mod collect;
mod csv;
mod format;
mod holder;
mod journal;
mod json;
mod jsonl;
mod output;
mod pipeline;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod processors;
mod resume;
mod sink;

pub use collect::CollectSink;
pub use csv::CsvSink;
pub use format::FileFormat;
pub use journal::{ItemJournal, JournalError, ResumePoint};
pub use json::JsonArraySink;
pub use jsonl::JsonLinesSink;
pub use output::Existing;
pub use pipeline::Pipeline;
#[cfg(feature = "postgres")]
pub use postgres::{ColumnSpec, PgError, PgMode, PgSinkConfig, PgType, PostgresSink};
pub use processors::{ProcessOutcome, ProcessingSink, Processor, ProcessorChain, ProcessorStats};
pub use resume::{FileProof, PipelineCheckpoint, PipelineResume, SinkCheckpoint, SinkResume, StateEntry};
pub use sink::{Sink, SinkError};
