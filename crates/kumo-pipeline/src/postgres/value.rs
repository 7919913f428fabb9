//! Item values converted to column types, and their encoding as statement parameters. Text
//! and JSON go through `nul.rs`: PostgreSQL stores no U+0000.

use std::borrow::Cow;
use std::error::Error;
use std::time::SystemTime;

use kumo_core::Item;
use serde_json::Value;
use tokio_postgres::types::{IsNull, Json, ToSql, Type, to_sql_checked};

use crate::postgres::{PgType, nul, timestamp};

/// One statement parameter.
#[derive(Debug)]
pub(crate) enum PgValue<'a> {
    Null,
    Text(Cow<'a, str>),
    BigInt(i64),
    Double(f64),
    Bool(bool),
    Json(Cow<'a, Value>),
    Time(SystemTime),
    /// A whole item, for the `jsonb` table.
    Item(Cow<'a, Item>),
}

impl PgValue<'_> {
    /// A text that is equal for two values exactly when the column's values are: one part of
    /// an item's key, for de-duplicating a batch. `None` for SQL `NULL` (and whole items).
    pub(crate) fn key_text(&self) -> Option<String> {
        Some(match self {
            PgValue::Null => return None,
            PgValue::Text(s) => s.to_string(),
            PgValue::BigInt(n) => n.to_string(),
            PgValue::Double(x) => x.to_string(),
            PgValue::Bool(b) => b.to_string(),
            PgValue::Json(v) => v.to_string(),
            PgValue::Time(t) => format!("{t:?}"),
            PgValue::Item(_) => return None,
        })
    }
}

/// Converts one field to `ty`; the error says why it cannot be (the caller names the field).
pub(crate) fn convert(value: Option<&Value>, ty: PgType) -> Result<PgValue<'_>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(PgValue::Null) };
    let fail = || Err(format!("cannot convert {} to {}", describe(value), ty.sql()));
    Ok(match (ty, value) {
        (PgType::Text, Value::String(s)) => PgValue::Text(nul::text(s)),
        (PgType::Text, Value::Number(n)) => PgValue::Text(Cow::Owned(n.to_string())),
        (PgType::Text, Value::Bool(b)) => PgValue::Text(Cow::Borrowed(if *b { "true" } else { "false" })),
        (PgType::Text, v) => PgValue::Text(Cow::Owned(v.to_string())),
        (PgType::BigInt, Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => PgValue::BigInt(i),
            // Exactly representable whole numbers only: 2^63 itself is out of range.
            (None, Some(x)) if x.fract() == 0.0 && x >= -(2f64.powi(63)) && x < 2f64.powi(63) => {
                PgValue::BigInt(x as i64)
            }
            _ => return fail(),
        },
        (PgType::BigInt, Value::String(s)) => match s.trim().parse() {
            Ok(i) => PgValue::BigInt(i),
            Err(_) => return fail(),
        },
        (PgType::Double, Value::Number(n)) => match n.as_f64() {
            Some(x) => PgValue::Double(x),
            None => return fail(),
        },
        (PgType::Double, Value::String(s)) => match s.trim().parse() {
            Ok(x) => PgValue::Double(x),
            Err(_) => return fail(),
        },
        (PgType::Bool, Value::Bool(b)) => PgValue::Bool(*b),
        (PgType::Bool, Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => PgValue::Bool(true),
        (PgType::Bool, Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => PgValue::Bool(false),
        (PgType::Jsonb, v) => PgValue::Json(nul::json(v)),
        (PgType::TimestampTz, Value::String(s)) => match timestamp::parse(s) {
            Some(t) => PgValue::Time(t),
            None => return fail(),
        },
        (PgType::TimestampTz, Value::Number(n)) => match n.as_f64().and_then(timestamp::from_unix_seconds) {
            Some(t) => PgValue::Time(t),
            None => return fail(),
        },
        _ => return fail(),
    })
}

/// A short description of a value for an error: its kind and, shortened, its text.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {}", shorten(&value.to_string(), 60))
}

/// `s` cut to about `max` bytes (at a character boundary), with `…` when cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", &s[..s.floor_char_boundary(max)])
}

impl ToSql for PgValue<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        // The checked calls turn a column whose type differs from the spec (a table made by
        // hand) into a "cannot convert" error rather than bytes the server misreads.
        match self {
            PgValue::Null => Ok(IsNull::Yes),
            PgValue::Text(s) => s.to_sql_checked(ty, out),
            PgValue::BigInt(n) => n.to_sql_checked(ty, out),
            PgValue::Double(x) => x.to_sql_checked(ty, out),
            PgValue::Bool(b) => b.to_sql_checked(ty, out),
            PgValue::Json(v) => v.to_sql_checked(ty, out),
            PgValue::Time(t) => t.to_sql_checked(ty, out),
            PgValue::Item(item) => Json(item.as_ref()).to_sql_checked(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ok(v: Value, ty: PgType) -> String {
        format!("{:?}", convert(Some(&v), ty).unwrap())
    }

    fn err(v: Value, ty: PgType) -> String {
        convert(Some(&v), ty).err().unwrap()
    }

    #[test]
    fn text_takes_everything() {
        assert_eq!(ok(json!("a,b"), PgType::Text), "Text(\"a,b\")");
        assert_eq!(ok(json!(1.5), PgType::Text), "Text(\"1.5\")");
        assert_eq!(ok(json!(true), PgType::Text), "Text(\"true\")");
        assert_eq!(ok(json!({"a": [1, 2]}), PgType::Text), "Text(\"{\\\"a\\\":[1,2]}\")");
    }

    #[test]
    fn null_and_missing_are_sql_null() {
        for ty in [PgType::Text, PgType::BigInt, PgType::Jsonb, PgType::TimestampTz] {
            assert!(matches!(convert(None, ty), Ok(PgValue::Null)));
            assert!(matches!(convert(Some(&Value::Null), ty), Ok(PgValue::Null)));
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(ok(json!(42), PgType::BigInt), "BigInt(42)");
        assert_eq!(ok(json!(" 42 "), PgType::BigInt), "BigInt(42)");
        assert_eq!(ok(json!(3.0), PgType::BigInt), "BigInt(3)");
        assert_eq!(ok(json!("2.5"), PgType::Double), "Double(2.5)");
        assert_eq!(ok(json!(7), PgType::Double), "Double(7.0)");
        assert_eq!(err(json!("abc"), PgType::BigInt), "cannot convert string \"abc\" to bigint");
        assert_eq!(err(json!(2.5), PgType::BigInt), "cannot convert number 2.5 to bigint");
        assert_eq!(
            err(json!(u64::MAX), PgType::BigInt),
            "cannot convert number 18446744073709551615 to bigint"
        );
        assert_eq!(err(json!(true), PgType::Double), "cannot convert boolean true to double precision");
    }

    #[test]
    fn booleans_and_times() {
        assert_eq!(ok(json!("TRUE"), PgType::Bool), "Bool(true)");
        assert_eq!(err(json!(1), PgType::Bool), "cannot convert number 1 to boolean");
        assert!(ok(json!("2026-11-22T06:01:57Z"), PgType::TimestampTz).starts_with("Time("));
        assert!(ok(json!(0), PgType::TimestampTz).starts_with("Time("));
        assert_eq!(err(json!("soon"), PgType::TimestampTz), "cannot convert string \"soon\" to timestamptz");
    }

    #[test]
    fn long_values_are_shortened_in_errors() {
        let e = err(json!("x".repeat(500)), PgType::BigInt);
        assert!(e.len() < 100 && e.contains('…'), "{e}");
        assert_eq!(shorten("ééé", 3), "é…");
    }
}
