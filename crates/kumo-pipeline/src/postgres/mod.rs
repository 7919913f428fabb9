//! PostgreSQL: each batch as multi-row INSERTs in one transaction, upserting on a key.
//!
//! The sink makes its table when it is missing, either typed columns ([`PgMode::Columns`]) or
//! whole items as `jsonb` ([`PgMode::Jsonb`]). With a key, an item whose key is already in
//! the table replaces that row, so sending a batch twice (after a crash) changes nothing.
//! Values are converted before anything is sent: an item that does not fit fails its batch
//! with an error naming the item and the field, and nothing of that batch is written.
//! PostgreSQL stores no U+0000 in `text` or `jsonb`: the sink writes U+FFFD in its place
//! (`nul.rs`) rather than have the server refuse the batch.

mod config;
mod conninfo;
mod error;
mod insert;
mod nul;
mod schema;
mod timestamp;
mod value;

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use kumo_core::Item;
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Statement};

pub use config::{ColumnSpec, PgMode, PgSinkConfig, PgType};
pub use conninfo::redact as redact_url;
pub use error::{DbCause, PgError};
use insert::InsertPlan;

use crate::{Sink, SinkError};

/// Prepared statements kept per row count; batch sizes vary, so the cache is cleared when it
/// grows past this rather than keeping one statement per size ever seen.
const MAX_CACHED_STATEMENTS: usize = 16;

/// Writes items to a PostgreSQL table over one connection (no TLS: meant for a server on the
/// same host or network).
///
/// On resume after a crash it keeps the [`Sink`] defaults: there is nothing to cut back, and
/// the replayed items are written again. Only with a key ([`PgSinkConfig::with_key`]) do they
/// replace the rows they already made, so that each item is in the table exactly once; without
/// one, items replayed after the last checkpoint are inserted twice.
pub struct PostgresSink {
    client: Client,
    /// The task that drives the connection; its result says why a dead connection died.
    driver: Option<JoinHandle<Result<(), tokio_postgres::Error>>>,
    plan: InsertPlan,
    table: String,
    statements: HashMap<usize, Statement>,
}

impl PostgresSink {
    /// Connects to `url` (`postgres://user@127.0.0.1:5432/db`; `connect_timeout=` in the
    /// URL, else 10 s, bounds the attempt), then makes the table and key index if missing.
    /// Must be called inside a Tokio runtime, which then runs the connection.
    pub async fn connect(url: &str, config: PgSinkConfig) -> Result<Self, SinkError> {
        config.validate()?;
        let (pg_config, timeout) = conninfo::parse(url)?;
        let connect_err = |e| PgError::Connect { url: conninfo::redact(url), cause: DbCause(e) };
        let (client, connection) = tokio::time::timeout(timeout, pg_config.connect(NoTls))
            .await
            .map_err(|_| PgError::ConnectTimeout { url: conninfo::redact(url), after: timeout })?
            .map_err(connect_err)?;
        let driver = tokio::spawn(connection);
        schema::prepare(&client, &config).await?;
        Ok(PostgresSink {
            client,
            driver: Some(driver),
            plan: InsertPlan::new(&config),
            table: config.table,
            statements: HashMap::new(),
        })
    }

    /// The error for a failed write; when the connection has died, its driver's error says why
    /// better than the "connection closed" the statement got.
    async fn write_error(&mut self, rows: usize, error: tokio_postgres::Error) -> SinkError {
        let mut cause = error;
        // A closed connection means the driver is ending (it may not have quite returned yet);
        // the wait for its result is bounded all the same.
        if (cause.is_closed() || self.client.is_closed())
            && let Some(driver) = self.driver.take()
            && let Ok(Ok(Err(e))) = tokio::time::timeout(Duration::from_secs(1), driver).await
        {
            cause = e;
        }
        PgError::Write { table: self.table.clone(), rows, cause: DbCause(cause) }.into()
    }

    /// The prepared INSERT for `rows` rows.
    async fn statement(&mut self, rows: usize) -> Result<Statement, tokio_postgres::Error> {
        if let Some(s) = self.statements.get(&rows) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&self.plan.sql(rows)).await?;
        if self.statements.len() >= MAX_CACHED_STATEMENTS {
            self.statements.clear();
        }
        self.statements.insert(rows, s.clone());
        Ok(s)
    }

    async fn insert(&mut self, rows: &[Vec<value::PgValue<'_>>]) -> Result<(), tokio_postgres::Error> {
        let per = self.plan.rows_per_statement();
        let mut statements = Vec::new();
        for chunk in rows.chunks(per) {
            statements.push(self.statement(chunk.len()).await?);
        }
        // One statement is atomic by itself: spare the BEGIN and COMMIT round trips.
        if let [statement] = statements.as_slice() {
            self.client.execute(statement, &params(rows)).await?;
            return Ok(());
        }
        let tx = self.client.transaction().await?;
        for (chunk, statement) in rows.chunks(per).zip(&statements) {
            tx.execute(statement, &params(chunk)).await?;
        }
        tx.commit().await
    }
}

/// The parameters of rows, in order.
fn params<'s>(rows: &'s [Vec<value::PgValue<'_>>]) -> Vec<&'s (dyn ToSql + Sync)> {
    rows.iter().flatten().map(|v| v as &(dyn ToSql + Sync)).collect()
}

#[async_trait]
impl Sink for PostgresSink {
    fn name(&self) -> String {
        format!("postgres:{}", self.table)
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        let rows = self.plan.rows(items)?;
        if rows.is_empty() {
            return Ok(());
        }
        debug_assert!(rows.iter().all(|r| r.len() == self.plan.width()));
        match self.insert(&rows).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_error(items.len(), e).await),
        }
    }

    /// Every batch is committed when `write` returns, so there is nothing left to do.
    async fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}
