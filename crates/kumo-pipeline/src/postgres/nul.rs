//! What PostgreSQL cannot store: U+0000. A `text` value refuses the byte and `jsonb` the
//! `\u0000` escape, and either fails the whole INSERT, so every row of the batch with it. The
//! sink writes U+FFFD (the replacement character) in its place, in strings and object keys
//! alike; a value without one goes as it is, without a copy.

use std::borrow::Cow;

use kumo_core::Item;
use serde_json::{Map, Value};

const NUL: char = '\0';
const REPLACEMENT: &str = "\u{FFFD}";

/// `s`, its U+0000s replaced.
pub(crate) fn text(s: &str) -> Cow<'_, str> {
    if s.contains(NUL) { Cow::Owned(s.replace(NUL, REPLACEMENT)) } else { Cow::Borrowed(s) }
}

/// `v`, every U+0000 in its strings and keys replaced.
pub(crate) fn json(v: &Value) -> Cow<'_, Value> {
    if has_nul(v) { Cow::Owned(clean(v)) } else { Cow::Borrowed(v) }
}

/// `item`, every U+0000 in its fields' names and values replaced.
pub(crate) fn item(item: &Item) -> Cow<'_, Item> {
    if item.0.iter().any(|(k, v)| k.contains(NUL) || has_nul(v)) {
        Cow::Owned(Item(clean_map(&item.0)))
    } else {
        Cow::Borrowed(item)
    }
}

fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains(NUL),
        Value::Array(a) => a.iter().any(has_nul),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains(NUL) || has_nul(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

fn clean(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(text(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(clean).collect()),
        Value::Object(m) => Value::Object(clean_map(m)),
        other => other.clone(),
    }
}

fn clean_map(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter().map(|(k, v)| (text(k).into_owned(), clean(v))).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_what_holds_a_nul_is_copied() {
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(text("a\0b\0"), "a\u{FFFD}b\u{FFFD}");
        let v = json!({"a": [1, "x", {"b": null}]});
        assert!(matches!(json(&v), Cow::Borrowed(_)));
        let v = json!({"k\0": ["x\0", {"\0": "\0"}], "n": 1});
        assert_eq!(*json(&v), json!({"k\u{FFFD}": ["x\u{FFFD}", {"\u{FFFD}": "\u{FFFD}"}], "n": 1}));
        let i = Item::new().with("title", "t\0").with("n\0", 2);
        assert_eq!(item(&i).into_owned(), Item::new().with("title", "t\u{FFFD}").with("n\u{FFFD}", 2));
        assert!(matches!(item(&Item::new().with("title", "t")), Cow::Borrowed(_)));
    }
}
