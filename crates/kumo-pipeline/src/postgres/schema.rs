//! The table: quoting, `CREATE TABLE IF NOT EXISTS`, the key's unique index, and a check
//! that a table made earlier has the columns the sink writes.

use tokio_postgres::Client;

use crate::postgres::{DbCause, PgError, PgMode, PgSinkConfig};

/// The `jsonb` table's item column.
pub(crate) const ITEM_COLUMN: &str = "item";

/// A quoted identifier: any name, even with quotes or spaces, means exactly itself.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A quoted string literal (the session turns `standard_conforming_strings` on, so a
/// backslash is an ordinary character).
pub(crate) fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The key as an `ON CONFLICT` target and an index's column list: the key columns, or in the
/// `jsonb` table the key fields as text (`("item" ->> 'url')`). `None` without a key.
pub(crate) fn key_target(cfg: &PgSinkConfig) -> Option<String> {
    let key = cfg.key.as_ref()?;
    let parts: Vec<String> = match cfg.mode {
        PgMode::Columns(_) => key.iter().map(|k| ident(k)).collect(),
        PgMode::Jsonb => key.iter().map(|k| format!("({} ->> {})", ident(ITEM_COLUMN), literal(k))).collect(),
    };
    Some(parts.join(", "))
}

/// The statements that make the table and its key index when they are missing.
pub(crate) fn create_sql(cfg: &PgSinkConfig) -> String {
    let table = ident(&cfg.table);
    let columns = match &cfg.mode {
        PgMode::Jsonb => format!(
            "id bigserial PRIMARY KEY, {} jsonb NOT NULL, inserted_at timestamptz DEFAULT now()",
            ident(ITEM_COLUMN)
        ),
        PgMode::Columns(columns) => columns
            .iter()
            .map(|c| format!("{} {}", ident(&c.name), c.ty.sql()))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut sql =
        format!("SET standard_conforming_strings = on;\nCREATE TABLE IF NOT EXISTS {table} ({columns});\n");
    // A unique index rather than a constraint in CREATE TABLE, so that a table made before the
    // key was chosen gets it too; ON CONFLICT infers either.
    if let Some(target) = key_target(cfg) {
        let index = ident(&index_name(&cfg.table, &target));
        sql += &format!("CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {table} ({target});\n");
    }
    sql
}

/// A stable index name per table and key, within the 63-byte limit. The hash of the key is
/// in it, so a new key gets a new index instead of IF NOT EXISTS finding the old one.
pub(crate) fn index_name(table: &str, target: &str) -> String {
    let h = fnv(table.bytes().chain([0]).chain(target.bytes()));
    format!("{}_kumo_key_{:08x}", &table[..table.floor_char_boundary(40)], h as u32)
}

/// The columns the sink writes.
pub(crate) fn written_columns(cfg: &PgSinkConfig) -> Vec<&str> {
    match &cfg.mode {
        PgMode::Jsonb => vec![ITEM_COLUMN],
        PgMode::Columns(columns) => columns.iter().map(|c| c.name.as_str()).collect(),
    }
}

/// FNV-1a: stable across Rust versions, unlike std's hasher.
fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Makes the table (and key index) if missing, then checks that it has the written columns.
pub(crate) async fn prepare(client: &Client, cfg: &PgSinkConfig) -> Result<(), PgError> {
    let schema_err = |e| PgError::Schema { table: cfg.table.clone(), cause: DbCause(e) };
    // Writers starting at once (crawl workers sharing a table) would race in CREATE ... IF NOT
    // EXISTS, which PostgreSQL does not make safe (one fails on its catalog's unique index): a
    // transaction-level advisory lock per table name makes them take turns.
    let lock = fnv(cfg.table.bytes()) as i64;
    let sql = format!("BEGIN;\nSELECT pg_advisory_xact_lock({lock});\n{}COMMIT;", create_sql(cfg));
    client.batch_execute(&sql).await.map_err(schema_err)?;
    // to_regclass resolves the name through search_path, as the INSERT will.
    let rows = client
        .query(
            "SELECT attname::text FROM pg_attribute \
             WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped",
            &[&ident(&cfg.table)],
        )
        .await
        .map_err(schema_err)?;
    let have: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let missing: Vec<String> =
        written_columns(cfg).into_iter().filter(|c| !have.iter().any(|h| h == c)).map(String::from).collect();
    if missing.is_empty() { Ok(()) } else { Err(PgError::TableShape { table: cfg.table.clone(), missing }) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::{ColumnSpec, PgType};

    #[test]
    fn quoting() {
        assert_eq!(ident("items"), "\"items\"");
        assert_eq!(ident("a \"b\"; DROP"), "\"a \"\"b\"\"; DROP\"");
        assert_eq!(literal("it's"), "'it''s'");
    }

    #[test]
    fn jsonb_table_with_key() {
        let sql = create_sql(&PgSinkConfig::jsonb("pages").with_key(["url", "it's"]));
        let target = "(\"item\" ->> 'url'), (\"item\" ->> 'it''s')";
        let index = index_name("pages", target);
        assert!(index.starts_with("pages_kumo_key_") && index.len() == "pages_kumo_key_".len() + 8);
        assert_eq!(
            sql,
            format!(
                "SET standard_conforming_strings = on;\n\
                 CREATE TABLE IF NOT EXISTS \"pages\" (id bigserial PRIMARY KEY, \"item\" jsonb NOT NULL, \
                 inserted_at timestamptz DEFAULT now());\n\
                 CREATE UNIQUE INDEX IF NOT EXISTS \"{index}\" ON \"pages\" ({target});\n"
            )
        );
    }

    #[test]
    fn typed_table_without_key() {
        let cols = vec![ColumnSpec::new("url", PgType::Text), ColumnSpec::new("at", PgType::TimestampTz)];
        assert_eq!(
            create_sql(&PgSinkConfig::columns("t", cols)),
            "SET standard_conforming_strings = on;\nCREATE TABLE IF NOT EXISTS \"t\" (\"url\" text, \"at\" timestamptz);\n"
        );
    }

    #[test]
    fn index_names_fit_and_differ_by_key() {
        let long = "é".repeat(40);
        let name = index_name(&long, "\"a\"");
        assert!(name.len() <= 63, "{name}");
        assert_ne!(index_name("t", "\"a\""), index_name("t", "\"b\""));
        assert_eq!(index_name("t", "\"a\""), index_name("t", "\"a\""));
    }
}
