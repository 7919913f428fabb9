//! What a PostgreSQL sink writes: the table, its shape and the key that makes writes upserts.

use crate::postgres::PgError;

/// Longest identifier PostgreSQL keeps (NAMEDATALEN - 1); longer ones are cut silently,
/// which would make the sink look for columns that are not there.
const MAX_IDENT: usize = 63;

/// How a [`PostgresSink`](crate::PostgresSink) maps items to rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PgSinkConfig {
    /// One identifier (quoted as given: `a.b` is a table named `a.b` in the current schema).
    pub table: String,
    /// The table's shape: typed columns, or whole items in one `jsonb` column.
    pub mode: PgMode,
    /// Fields that identify an item. With a key, writing an item whose key is already in the
    /// table updates that row instead of adding one, so re-sending items (resuming after a
    /// crash) never duplicates them. Every item must then have every key field, not null.
    pub key: Option<Vec<String>>,
}

/// The shape of the table.
#[derive(Debug, Clone, PartialEq)]
pub enum PgMode {
    /// One typed column per field, in this order; other fields are ignored.
    Columns(Vec<ColumnSpec>),
    /// The whole item in one `jsonb` column:
    /// `(id bigserial primary key, item jsonb not null, inserted_at timestamptz default now())`.
    Jsonb,
}

/// One column of [`PgMode::Columns`]; `name` is both the item field and the column name.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSpec {
    /// The item field, and the column's name.
    pub name: String,
    /// The column's type.
    pub ty: PgType,
}

impl ColumnSpec {
    /// The column `name` of type `ty`.
    pub fn new(name: impl Into<String>, ty: PgType) -> Self {
        ColumnSpec { name: name.into(), ty }
    }
}

/// A column type and what it accepts (a missing field or `null` is SQL `NULL` in every type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgType {
    /// `text`: strings as they are, numbers and booleans as text, arrays and objects as JSON.
    Text,
    /// `bigint`: integers, numbers with no fraction, and strings that are integers (`"42"`).
    BigInt,
    /// `double precision`: numbers, and strings that are numbers.
    Double,
    /// `boolean`: booleans, and the strings `true` / `false` (any case).
    Bool,
    /// `jsonb`: any value.
    Jsonb,
    /// `timestamptz`: RFC 3339 strings (`2026-11-22T06:01:57Z`, `+01:00` offsets, a space for
    /// the `T`, or a bare date meaning midnight UTC), or numbers of seconds since 1970 (UTC).
    TimestampTz,
}

impl PgType {
    /// The SQL type name.
    pub fn sql(self) -> &'static str {
        match self {
            PgType::Text => "text",
            PgType::BigInt => "bigint",
            PgType::Double => "double precision",
            PgType::Bool => "boolean",
            PgType::Jsonb => "jsonb",
            PgType::TimestampTz => "timestamptz",
        }
    }
}

impl PgSinkConfig {
    /// A table of whole items as `jsonb`, without a key.
    pub fn jsonb(table: impl Into<String>) -> Self {
        PgSinkConfig { table: table.into(), mode: PgMode::Jsonb, key: None }
    }

    /// A table of typed columns, without a key.
    pub fn columns(table: impl Into<String>, columns: Vec<ColumnSpec>) -> Self {
        PgSinkConfig { table: table.into(), mode: PgMode::Columns(columns), key: None }
    }

    /// The same, upserting on `key`.
    pub fn with_key<S: Into<String>>(mut self, key: impl IntoIterator<Item = S>) -> Self {
        self.key = Some(key.into_iter().map(Into::into).collect());
        self
    }

    /// Checks what the server would reject or silently change, before connecting.
    pub(crate) fn validate(&self) -> Result<(), PgError> {
        let bad = |reason: String| PgError::Config { table: self.table.clone(), reason };
        check_ident("table name", &self.table).map_err(bad)?;
        if let PgMode::Columns(columns) = &self.mode {
            if columns.is_empty() {
                return Err(bad("no columns".into()));
            }
            for (i, c) in columns.iter().enumerate() {
                check_ident("column name", &c.name).map_err(bad)?;
                if columns[..i].iter().any(|o| o.name == c.name) {
                    return Err(bad(format!("column `{}` is given twice", c.name)));
                }
            }
        }
        if let Some(key) = &self.key {
            if key.is_empty() {
                return Err(bad("the key has no fields".into()));
            }
            for (i, k) in key.iter().enumerate() {
                if k.contains('\0') {
                    return Err(bad(format!("key field {k:?} contains a NUL character")));
                }
                if key[..i].contains(k) {
                    return Err(bad(format!("key field `{k}` is given twice")));
                }
                if let PgMode::Columns(columns) = &self.mode
                    && !columns.iter().any(|c| &c.name == k)
                {
                    return Err(bad(format!("key field `{k}` is not one of the columns")));
                }
            }
        }
        Ok(())
    }
}

fn check_ident(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        Err(format!("empty {what}"))
    } else if name.contains('\0') {
        Err(format!("{what} {name:?} contains a NUL character"))
    } else if name.len() > MAX_IDENT {
        Err(format!("{what} `{name}` is longer than {MAX_IDENT} bytes"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(cfg: PgSinkConfig) -> String {
        cfg.validate().err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn good_configs_pass() {
        PgSinkConfig::jsonb("items").with_key(["url"]).validate().unwrap();
        let cols = vec![ColumnSpec::new("url", PgType::Text), ColumnSpec::new("n", PgType::BigInt)];
        PgSinkConfig::columns("my \"odd\" table", cols).with_key(["url", "n"]).validate().unwrap();
    }

    #[test]
    fn bad_configs_say_why() {
        assert!(err(PgSinkConfig::jsonb("")).contains("empty table name"));
        assert!(err(PgSinkConfig::columns("t", vec![])).contains("no columns"));
        let twice = vec![ColumnSpec::new("a", PgType::Text), ColumnSpec::new("a", PgType::Bool)];
        assert!(err(PgSinkConfig::columns("t", twice)).contains("`a` is given twice"));
        let cols = vec![ColumnSpec::new("a", PgType::Text)];
        assert!(
            err(PgSinkConfig::columns("t", cols).with_key(["b"])).contains("`b` is not one of the columns")
        );
        assert!(err(PgSinkConfig::jsonb("t").with_key(Vec::<String>::new())).contains("no fields"));
        assert!(err(PgSinkConfig::jsonb("x".repeat(64))).contains("longer than 63 bytes"));
    }
}
