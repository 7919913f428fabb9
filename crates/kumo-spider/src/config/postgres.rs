//! A site's PostgreSQL output: whole items as `jsonb`, or typed columns, and a key that makes
//! writes upserts. Column types and key fields are checked when the file is read, each mistake
//! placed at its line; the sink checks the rest (identifier lengths) when it connects.

use kumo_pipeline::{ColumnSpec, PgSinkConfig, PgType};
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};

/// Where a site's items go in PostgreSQL: `output.postgres` in a spider file.
///
/// ```toml
/// [site.output.postgres]
/// url = "postgres://kumo@127.0.0.1:5432/kumo"
/// table = "quotes"
/// key = ["text"]                # optional: an item whose key is in the table replaces its row
/// columns = [                   # optional: without it, each item in one jsonb column
///   { name = "text", type = "text" },
///   { name = "tags", type = "jsonb" },
///   { name = "tag_count", type = "bigint" },
/// ]
/// ```
///
/// Types are PostgreSQL's names: `text`, `bigint`, `double precision`, `boolean`, `jsonb`,
/// `timestamptz` (what each accepts: [`PgType`]). A typed table takes every model's items, so
/// with a key every item must have the key fields.
#[derive(Debug, Clone)]
pub struct PostgresOutput {
    /// The connection URL (`postgres://user@host:port/db`).
    pub url: String,
    /// The table, its columns (or `jsonb`) and key.
    pub sink: PgSinkConfig,
}

/// `output.postgres` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPostgres {
    /// The connection URL (`postgres://user@host:port/db`).
    pub url: String,
    /// The table the items go into, created when missing.
    pub table: String,
    /// Typed columns; without them, whole items go into one `jsonb` column.
    #[schemars(with = "Option<Vec<RawColumn>>")]
    pub columns: Option<Spanned<Vec<RawColumn>>>,
    /// The fields that identify an item: writes upsert on them.
    #[schemars(with = "Option<Vec<String>>")]
    pub key: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `{ name = "price", type = "double precision" }`
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawColumn {
    /// The column's name, and the item field it holds.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Its SQL type.
    #[serde(rename = "type")]
    #[schemars(with = "String")]
    pub ty: Spanned<String>,
}

/// The column types a spider file can name, by their SQL names.
const TYPES: [PgType; 6] =
    [PgType::Text, PgType::BigInt, PgType::Double, PgType::Bool, PgType::Jsonb, PgType::TimestampTz];

/// The type a column names, in any case (`BIGINT`, `bigint`).
fn column_type(name: &str) -> Option<PgType> {
    let name = name.trim().to_ascii_lowercase();
    TYPES.into_iter().find(|t| t.sql() == name)
}

/// Checks the `postgres` output of site `site`.
pub(super) fn output(
    lines: &Lines,
    site: &str,
    raw: RawPostgres,
) -> Result<PostgresOutput, SpiderConfigError> {
    let at = |field: &str| format!("site \"{site}\" → output.postgres.{field}");
    let columns = match &raw.columns {
        Some(list) => Some(check_columns(lines, &at, list)?),
        None => None,
    };
    let key = match &raw.key {
        Some(key) => Some(check_key(lines, &at, key, columns.as_deref())?),
        None => None,
    };
    let sink = match columns {
        Some(columns) => PgSinkConfig::columns(raw.table, columns),
        None => PgSinkConfig::jsonb(raw.table),
    };
    let sink = match key {
        Some(fields) => sink.with_key(fields),
        None => sink,
    };
    Ok(PostgresOutput { url: raw.url, sink })
}

/// The typed columns: at least one, each named once, each of a known type.
fn check_columns(
    lines: &Lines,
    at: &dyn Fn(&str) -> String,
    list: &Spanned<Vec<RawColumn>>,
) -> Result<Vec<ColumnSpec>, SpiderConfigError> {
    if list.get_ref().is_empty() {
        let message = "no columns (leave `columns` out to store whole items as jsonb)";
        return Err(lines.error(list.span().start, at("columns"), message));
    }
    let mut columns: Vec<ColumnSpec> = Vec::with_capacity(list.get_ref().len());
    for (i, c) in list.get_ref().iter().enumerate() {
        let name = c.name.get_ref();
        let name_error =
            |message: String| lines.error(c.name.span().start, at(&format!("columns[{i}].name")), message);
        if name.is_empty() {
            return Err(name_error("empty column name".to_owned()));
        }
        if columns.iter().any(|known| &known.name == name) {
            return Err(name_error(format!("column `{name}` is given twice")));
        }
        let ty = column_type(c.ty.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = TYPES.iter().map(|t| t.sql()).collect();
            let message =
                format!("unknown column type {:?}: use one of {}", c.ty.get_ref(), known.join(", "));
            lines.error(c.ty.span().start, at(&format!("columns[{i}].type")), message)
        })?;
        columns.push(ColumnSpec::new(name.clone(), ty));
    }
    Ok(columns)
}

/// The key's fields: at least one, none twice, and in a typed table (`columns`) each one a
/// column.
fn check_key(
    lines: &Lines,
    at: &dyn Fn(&str) -> String,
    key: &Spanned<Vec<Spanned<String>>>,
    columns: Option<&[ColumnSpec]>,
) -> Result<Vec<String>, SpiderConfigError> {
    if key.get_ref().is_empty() {
        return Err(lines.error(key.span().start, at("key"), "the key names no field"));
    }
    let mut fields: Vec<String> = Vec::with_capacity(key.get_ref().len());
    for (i, field) in key.get_ref().iter().enumerate() {
        let name = field.get_ref();
        let problem = if fields.contains(name) {
            Some(format!("`{name}` is given twice"))
        } else if columns.is_some_and(|c| !c.iter().any(|c| &c.name == name)) {
            Some(format!("`{name}` is not one of the columns"))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(lines.error(field.span().start, at(&format!("key[{i}]")), problem));
        }
        fields.push(name.clone());
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_named_by_its_sql_name_in_any_case() {
        for ty in TYPES {
            assert_eq!(column_type(ty.sql()), Some(ty));
            assert_eq!(column_type(&ty.sql().to_uppercase()), Some(ty));
        }
        assert_eq!(column_type("int"), None);
    }
}
