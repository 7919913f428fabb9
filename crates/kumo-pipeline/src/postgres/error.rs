//! The PostgreSQL sink's errors, each naming what it was doing and to which table or server.

use std::error::Error as _;
use std::fmt;
use std::time::Duration;

/// A PostgreSQL sink failed. URLs in messages never carry a password.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("PostgreSQL sink for table {table}: {reason}")]
    Config { table: String, reason: String },
    #[error("invalid PostgreSQL URL {url}: {cause}")]
    Url { url: String, cause: DbCause },
    #[error("cannot connect to PostgreSQL at {url}: {cause}")]
    Connect { url: String, cause: DbCause },
    #[error("cannot connect to PostgreSQL at {url}: no answer within {}s", after.as_secs_f32())]
    ConnectTimeout { url: String, after: Duration },
    #[error("cannot create table {table}: {cause}")]
    Schema { table: String, cause: DbCause },
    #[error("table {table} exists but lacks the columns {missing:?}")]
    TableShape { table: String, missing: Vec<String> },
    /// Nothing of the batch was written.
    #[error("table {table}: item {index} of the batch ({item}): field `{field}`: {reason}")]
    Convert { table: String, index: usize, item: String, field: String, reason: String },
    /// Nothing of the batch was written (it is one transaction).
    #[error("cannot write {rows} items to table {table}: {cause}")]
    Write { table: String, rows: usize, cause: DbCause },
}

/// A tokio-postgres error, printed with its cause: tokio-postgres prints only the kind
/// ("db error"), which hides the server's message.
pub struct DbCause(pub tokio_postgres::Error);

impl DbCause {
    /// The SQLSTATE code, when the server sent an error.
    pub fn code(&self) -> Option<&str> {
        self.0.as_db_error().map(|db| db.code().code())
    }
}

impl fmt::Display for DbCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(db) = self.0.as_db_error() {
            return write!(f, "{db} (SQLSTATE {})", db.code().code());
        }
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl fmt::Debug for DbCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
