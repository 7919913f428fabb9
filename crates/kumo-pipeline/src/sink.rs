//! The sink interface: where items end up.

use async_trait::async_trait;
use kumo_core::Item;

/// A sink failed to take an item.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The cause is part of the message (not a `source`), so it prints once.
    #[error("cannot write {target}: {error}")]
    Io { target: String, error: std::io::Error },
    #[error("cannot encode item: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Postgres(#[from] crate::postgres::PgError),
}

/// A destination for items. Called from one task at a time, so it needs no locking. Items come
/// in batches (all the items of the pages one frontier commit covered), so a database sink can
/// write a batch in one statement.
#[async_trait]
pub trait Sink: Send {
    /// A short name for logs and the summary (`jsonl:out.jsonl`).
    fn name(&self) -> String;

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError>;

    /// Makes everything written so far durable enough for the sink's promise.
    async fn flush(&mut self) -> Result<(), SinkError>;

    /// Counters worth showing in the summary (a processor chain's counts), if any.
    fn stats(&self) -> Option<serde_json::Value> {
        None
    }
}
