//! Turning what a selector matched into an item's JSON value: text clean-up, the regex
//! post-filter, and the rule that an empty value is no value.

use regex::Regex;
use serde_json::Value;

/// Trims `text` and collapses every run of whitespace into one space, as a reader sees it.
pub(super) fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A taken string as a value: `None` when it is empty, so "found nothing" and "found an empty
/// element" both count as missing; the filter keeps only its match (or drops the value).
pub(super) fn string(text: String, filter: Option<&Regex>) -> Option<Value> {
    let text = match filter {
        Some(regex) => super::regex::filter(regex, &text)?.trim().to_owned(),
        None => text,
    };
    (!text.is_empty()).then_some(Value::String(text))
}

/// A JSON match as a value: kept as it is (numbers stay numbers) unless a filter must read it
/// as text; `null` and `""` count as missing.
pub(super) fn json(value: &Value, filter: Option<&Regex>) -> Option<Value> {
    match (value, filter) {
        (Value::Null, _) => None,
        (Value::String(s), _) => string(s.clone(), filter),
        (other, None) => Some(other.clone()),
        (other, Some(_)) => string(other.to_string(), filter),
    }
}

/// Whether a field's value counts as present for `required`.
pub(super) fn present(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Array(values) => !values.is_empty(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collapse_trims_and_joins_whitespace_runs() {
        assert_eq!(collapse("  a \n\t b  c\u{a0}d "), "a b c d");
        assert_eq!(collapse(" \n "), "");
    }

    #[test]
    fn empty_is_missing() {
        assert_eq!(string(String::new(), None), None);
        assert_eq!(json(&json!(null), None), None);
        assert_eq!(json(&json!(""), None), None);
        assert_eq!(json(&json!(0), None), Some(json!(0)));
    }

    #[test]
    fn filters_read_json_as_text() {
        let year = super::super::regex::build(r"\d{4}").unwrap();
        assert_eq!(json(&json!(1879), Some(&year)), Some(json!("1879")));
        assert_eq!(json(&json!("born 1879"), Some(&year)), Some(json!("1879")));
        assert_eq!(json(&json!(true), Some(&year)), None);
    }
}
