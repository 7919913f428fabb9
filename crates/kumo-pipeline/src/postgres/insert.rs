//! Batches as multi-row INSERTs: converting items to rows, folding items with one key into
//! one row, and the statement text for a number of rows.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use kumo_core::Item;
use serde_json::Value;

use crate::postgres::nul;
use crate::postgres::schema::{ITEM_COLUMN, ident, key_target};
use crate::postgres::value::{PgValue, convert, shorten};
use crate::postgres::{ColumnSpec, PgError, PgMode, PgSinkConfig};

/// Rows per INSERT: enough to make a round trip cheap per row, few enough to keep the
/// statement text small.
const MAX_ROWS: usize = 1000;
/// The protocol counts parameters in 16 bits.
const MAX_PARAMS: usize = 65_535;

/// How a batch becomes statements, fixed when the sink connects.
#[derive(Debug)]
pub(crate) struct InsertPlan {
    table: String,
    /// `None` for the `jsonb` table.
    columns: Option<Vec<ColumnSpec>>,
    key: Option<Vec<String>>,
    /// In the typed table, where each key field is in a row.
    key_at: Vec<usize>,
    head: String,
    tail: String,
    width: usize,
}

impl InsertPlan {
    /// `cfg` must be valid (key fields are columns).
    pub(crate) fn new(cfg: &PgSinkConfig) -> Self {
        let (columns, names): (Option<Vec<ColumnSpec>>, Vec<String>) = match &cfg.mode {
            PgMode::Jsonb => (None, vec![ITEM_COLUMN.to_string()]),
            PgMode::Columns(c) => (Some(c.clone()), c.iter().map(|c| c.name.clone()).collect()),
        };
        let key_at = match (&columns, &cfg.key) {
            (Some(columns), Some(key)) => {
                key.iter().filter_map(|k| columns.iter().position(|c| &c.name == k)).collect()
            }
            _ => Vec::new(),
        };
        let quoted: Vec<String> = names.iter().map(|n| ident(n)).collect();
        let head = format!("INSERT INTO {} ({}) VALUES ", ident(&cfg.table), quoted.join(", "));
        let tail = match key_target(cfg) {
            None => String::new(),
            Some(target) => {
                // Typed key columns stay as they are; everything else takes the new value (in
                // the jsonb table, the key is inside the item, which is replaced whole).
                let key_columns: &[String] = match (&cfg.mode, &cfg.key) {
                    (PgMode::Columns(_), Some(key)) => key,
                    _ => &[],
                };
                let updates: Vec<String> = names
                    .iter()
                    .filter(|n| !key_columns.contains(n))
                    .map(|n| format!("{0} = EXCLUDED.{0}", ident(n)))
                    .collect();
                if updates.is_empty() {
                    format!(" ON CONFLICT ({target}) DO NOTHING")
                } else {
                    format!(" ON CONFLICT ({target}) DO UPDATE SET {}", updates.join(", "))
                }
            }
        };
        InsertPlan {
            table: cfg.table.clone(),
            columns,
            key: cfg.key.clone(),
            key_at,
            head,
            tail,
            width: names.len(),
        }
    }

    /// Parameters in one row.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// The most rows one statement takes.
    pub(crate) fn rows_per_statement(&self) -> usize {
        (MAX_PARAMS / self.width).clamp(1, MAX_ROWS)
    }

    /// The INSERT for `rows` rows.
    pub(crate) fn sql(&self, rows: usize) -> String {
        let mut sql = String::with_capacity(self.head.len() + self.tail.len() + rows * self.width * 6);
        sql += &self.head;
        let mut n = 0;
        for r in 0..rows {
            sql += if r == 0 { "(" } else { ", (" };
            for c in 0..self.width {
                n += 1;
                if c > 0 {
                    sql += ", ";
                }
                sql += &format!("${n}");
            }
            sql += ")";
        }
        sql += &self.tail;
        sql
    }

    /// The rows of a batch, in order. With a key, items with equal keys make one row with the
    /// last one's values, at the first one's place: one INSERT cannot touch a row twice.
    pub(crate) fn rows<'a>(&self, items: &'a [Item]) -> Result<Vec<Vec<PgValue<'a>>>, PgError> {
        let mut rows: Vec<Vec<PgValue<'a>>> = Vec::with_capacity(items.len());
        let mut at: HashMap<Vec<String>, usize> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            let fail = |field: &str, reason: String| PgError::Convert {
                table: self.table.clone(),
                index,
                item: shorten(&serde_json::to_string(item).unwrap_or_default(), 120),
                field: field.to_string(),
                reason,
            };
            let row = match &self.columns {
                None => vec![PgValue::Item(nul::item(item))],
                Some(columns) => columns
                    .iter()
                    .map(|c| convert(item.get(&c.name), c.ty).map_err(|reason| fail(&c.name, reason)))
                    .collect::<Result<Vec<_>, _>>()?,
            };
            let Some(key) = &self.key else {
                rows.push(row);
                continue;
            };
            let mut parts = Vec::with_capacity(key.len());
            for (i, field) in key.iter().enumerate() {
                let part = match &self.columns {
                    Some(_) => self.key_at.get(i).and_then(|&c| row[c].key_text()),
                    // The key as the server reads it: from the item as written.
                    None => match &row[0] {
                        PgValue::Item(written) => arrow_text(written.get(field)),
                        _ => None,
                    },
                };
                parts.push(part.ok_or_else(|| fail(field, "the key field is missing or null".into()))?);
            }
            match at.entry(parts) {
                Entry::Occupied(e) => rows[*e.get()] = row,
                Entry::Vacant(e) => {
                    e.insert(rows.len());
                    rows.push(row);
                }
            }
        }
        Ok(rows)
    }
}

/// A field as `jsonb ->> field` gives it: strings bare, other values as JSON; `None` for
/// missing and `null`.
fn arrow_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        v => Some(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::PgType;

    fn typed() -> PgSinkConfig {
        let cols = vec![
            ColumnSpec::new("url", PgType::Text),
            ColumnSpec::new("n", PgType::BigInt),
            ColumnSpec::new("tags", PgType::Jsonb),
        ];
        PgSinkConfig::columns("t", cols)
    }

    #[test]
    fn statement_text() {
        let plan = InsertPlan::new(&typed());
        assert_eq!(
            plan.sql(2),
            "INSERT INTO \"t\" (\"url\", \"n\", \"tags\") VALUES ($1, $2, $3), ($4, $5, $6)"
        );
        let plan = InsertPlan::new(&typed().with_key(["url"]));
        assert_eq!(
            plan.sql(1),
            "INSERT INTO \"t\" (\"url\", \"n\", \"tags\") VALUES ($1, $2, $3) ON CONFLICT (\"url\") \
             DO UPDATE SET \"n\" = EXCLUDED.\"n\", \"tags\" = EXCLUDED.\"tags\""
        );
        let plan = InsertPlan::new(&PgSinkConfig::jsonb("j").with_key(["id"]));
        assert_eq!(
            plan.sql(2),
            "INSERT INTO \"j\" (\"item\") VALUES ($1), ($2) ON CONFLICT ((\"item\" ->> 'id')) \
             DO UPDATE SET \"item\" = EXCLUDED.\"item\""
        );
        let all_key = PgSinkConfig::columns("k", vec![ColumnSpec::new("a", PgType::Text)]).with_key(["a"]);
        assert!(InsertPlan::new(&all_key).sql(1).ends_with("ON CONFLICT (\"a\") DO NOTHING"));
    }

    #[test]
    fn statements_stay_under_the_parameter_limit() {
        assert_eq!(InsertPlan::new(&PgSinkConfig::jsonb("j")).rows_per_statement(), 1000);
        let wide: Vec<ColumnSpec> =
            (0..100).map(|i| ColumnSpec::new(format!("c{i}"), PgType::Text)).collect();
        assert_eq!(InsertPlan::new(&PgSinkConfig::columns("w", wide)).rows_per_statement(), 655);
    }

    #[test]
    fn equal_keys_fold_into_the_last_values() {
        let items = [
            Item::new().with("url", "a").with("n", 1),
            Item::new().with("url", "b").with("n", 2),
            Item::new().with("url", "a").with("n", 3),
        ];
        let plan = InsertPlan::new(&typed().with_key(["url"]));
        let rows = plan.rows(&items).unwrap();
        assert_eq!(format!("{rows:?}"), "[[Text(\"a\"), BigInt(3), Null], [Text(\"b\"), BigInt(2), Null]]");
        let plan = InsertPlan::new(&PgSinkConfig::jsonb("j").with_key(["url"]));
        assert_eq!(plan.rows(&items).unwrap().len(), 2);
    }

    #[test]
    fn conversion_errors_name_item_and_field() {
        let items =
            [Item::new().with("url", "a").with("n", 1), Item::new().with("url", "b").with("n", "many")];
        let err = InsertPlan::new(&typed()).rows(&items).err().unwrap().to_string();
        assert_eq!(
            err,
            "table t: item 1 of the batch ({\"url\":\"b\",\"n\":\"many\"}): field `n`: \
             cannot convert string \"many\" to bigint"
        );
    }

    #[test]
    fn a_key_must_be_present() {
        let items = [Item::new().with("n", 1)];
        let err = InsertPlan::new(&typed().with_key(["url"])).rows(&items).err().unwrap().to_string();
        assert!(err.ends_with("field `url`: the key field is missing or null"), "{err}");
        let err = InsertPlan::new(&PgSinkConfig::jsonb("j").with_key(["url"])).rows(&items).err().unwrap();
        assert!(err.to_string().ends_with("field `url`: the key field is missing or null"), "{err}");
    }
}
