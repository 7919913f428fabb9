//! Dropping items by a field's value.

use kumo_core::Item;
use regex::Regex;
use serde_json::Value;

use super::{ProcessOutcome, Processor};

/// How [`DropIf`] tests a field.
#[derive(Debug, Clone)]
pub enum Match {
    /// The field equals this JSON value.
    Equals(Value),
    /// The field (a string, or a number/bool read as text) matches this regex.
    Regex(Regex),
    /// The field is missing or `null`.
    Missing,
}

/// Drops an item whose `field` matches.
pub struct DropIf {
    field: String,
    test: Match,
}

impl DropIf {
    /// Drops the items whose `field` passes `test`.
    pub fn new(field: impl Into<String>, test: Match) -> Self {
        DropIf { field: field.into(), test }
    }
}

impl Processor for DropIf {
    fn name(&self) -> String {
        let how = match &self.test {
            Match::Equals(v) => format!("={v}"),
            Match::Regex(r) => format!("~{}", r.as_str()),
            Match::Missing => " missing".into(),
        };
        format!("drop({}{how})", self.field)
    }

    fn process(&self, item: Item) -> ProcessOutcome {
        let v = item.get(&self.field);
        let hit = match (&self.test, v) {
            (Match::Missing, v) => v.is_none_or(Value::is_null),
            (Match::Equals(want), Some(v)) => v == want,
            (Match::Regex(r), Some(Value::String(s))) => r.is_match(s),
            (Match::Regex(r), Some(v @ (Value::Number(_) | Value::Bool(_)))) => r.is_match(&v.to_string()),
            _ => false,
        };
        if hit { ProcessOutcome::Drop(format!("{} matched", self.field)) } else { ProcessOutcome::Keep(item) }
    }
}
