//! JSONPath (RFC 9535) queries with serde_json_path, over the JSON body or inside a JSON match.

use serde_json::Value;
use serde_json_path::JsonPath;

/// The nodes `path` selects in `root` (the body, or the value of an enclosing match), in the
/// order the query produces them.
pub(super) fn select<'d>(root: &'d Value, path: &JsonPath) -> Vec<&'d Value> {
    path.query(root).all()
}

/// The text a regex reads from a JSON value: a string's contents, else the compact JSON.
pub(super) fn source(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
