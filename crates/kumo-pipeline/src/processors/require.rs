//! Validation: an item lacking any of the required fields is invalid.

use kumo_core::Item;

use super::{ProcessOutcome, Processor, present};

/// Finds an item invalid when one of `fields` is missing, `null` or an empty string.
pub struct Require {
    fields: Vec<String>,
}

impl Require {
    /// Requires every one of `fields`.
    pub fn new<S: Into<String>>(fields: impl IntoIterator<Item = S>) -> Self {
        Require { fields: fields.into_iter().map(Into::into).collect() }
    }
}

impl Processor for Require {
    fn name(&self) -> String {
        format!("require({})", self.fields.join(","))
    }

    fn process(&self, item: Item) -> ProcessOutcome {
        let missing: Vec<&str> =
            self.fields.iter().filter(|f| present(&item, f).is_none()).map(String::as_str).collect();
        if missing.is_empty() {
            ProcessOutcome::Keep(item)
        } else {
            ProcessOutcome::Invalid(format!("missing {}", missing.join(", ")))
        }
    }
}
