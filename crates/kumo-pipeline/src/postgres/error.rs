//! The PostgreSQL sink's errors, each naming what it was doing and to which table or server.

use std::error::Error as _;
use std::fmt;
use std::time::Duration;

/// A PostgreSQL sink failed. URLs in messages never carry a password.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The configuration was refused before connecting (a bad name, no columns, a key field
    /// that is not a column...).
    #[error("PostgreSQL sink for table {table}: {reason}")]
    Config {
        /// The table it names.
        table: String,
        /// What is wrong.
        reason: String,
    },
    /// The connection URL does not parse.
    #[error("invalid PostgreSQL URL {url}: {cause}")]
    Url {
        /// The URL, its password hidden.
        url: String,
        /// Why it does not parse.
        cause: DbCause,
    },
    /// The connection failed.
    #[error("cannot connect to PostgreSQL at {url}: {cause}")]
    Connect {
        /// The URL, its password hidden.
        url: String,
        /// Why it failed.
        cause: DbCause,
    },
    /// The server did not answer within the connect timeout.
    #[error("cannot connect to PostgreSQL at {url}: no answer within {}s", after.as_secs_f32())]
    ConnectTimeout {
        /// The URL, its password hidden.
        url: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// Making the table or its key index failed, or reading the table's columns did.
    #[error("cannot create table {table}: {cause}")]
    Schema {
        /// The table.
        table: String,
        /// The server's or the connection's error.
        cause: DbCause,
    },
    /// The table exists but lacks columns the sink writes.
    #[error("table {table} exists but lacks the columns {missing:?}")]
    TableShape {
        /// The table.
        table: String,
        /// The columns it lacks.
        missing: Vec<String>,
    },
    /// An item does not fit the table, or lacks a key field. Nothing of the batch was written.
    #[error("table {table}: item {index} of the batch ({item}): field `{field}`: {reason}")]
    Convert {
        /// The table.
        table: String,
        /// The item's place in the batch, from 0.
        index: usize,
        /// The item as JSON, cut to about 120 bytes.
        item: String,
        /// The field at fault.
        field: String,
        /// Why it does not fit.
        reason: String,
    },
    /// Nothing of the batch was written (it is one transaction).
    #[error("cannot write {rows} items to table {table}: {cause}")]
    Write {
        /// The table.
        table: String,
        /// How many items the batch held.
        rows: usize,
        /// The server's or the connection's error.
        cause: DbCause,
    },
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
