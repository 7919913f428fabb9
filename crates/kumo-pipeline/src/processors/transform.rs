//! Transforms: rename, set and remove fields; and a scope that applies a processor to the
//! items of one model only.

use kumo_core::Item;
use serde_json::Value;

use super::{ProcessOutcome, Processor};

/// Renames a field, keeping its place in the item. A missing field is left missing; a field
/// already named `to` gives way to the renamed one, wherever it stood.
pub struct Rename {
    from: String,
    to: String,
}

impl Rename {
    /// Renames the field `from` to `to`.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        Rename { from: from.into(), to: to.into() }
    }
}

impl Processor for Rename {
    fn name(&self) -> String {
        format!("rename({}->{})", self.from, self.to)
    }

    fn process(&self, item: Item) -> ProcessOutcome {
        if !item.0.contains_key(&self.from) || self.from == self.to {
            return ProcessOutcome::Keep(item);
        }
        // The old `to` goes first: collected beside the renamed field, the map would keep
        // whichever of the two came later.
        let renamed = item
            .0
            .into_iter()
            .filter(|(k, _)| *k != self.to)
            .map(|(k, v)| if k == self.from { (self.to.clone(), v) } else { (k, v) })
            .collect();
        ProcessOutcome::Keep(Item(renamed))
    }
}

/// Sets a field to a fixed value (added at the end when new).
pub struct Set {
    field: String,
    value: Value,
}

impl Set {
    /// Sets `field` to `value` in every item.
    pub fn new(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Set { field: field.into(), value: value.into() }
    }
}

impl Processor for Set {
    fn name(&self) -> String {
        format!("set({})", self.field)
    }

    fn process(&self, mut item: Item) -> ProcessOutcome {
        item.0.insert(self.field.clone(), self.value.clone());
        ProcessOutcome::Keep(item)
    }
}

/// Removes fields.
pub struct Remove {
    fields: Vec<String>,
}

impl Remove {
    /// Removes `fields` from every item (those it has).
    pub fn new<S: Into<String>>(fields: impl IntoIterator<Item = S>) -> Self {
        Remove { fields: fields.into_iter().map(Into::into).collect() }
    }
}

impl Processor for Remove {
    fn name(&self) -> String {
        format!("remove({})", self.fields.join(","))
    }

    fn process(&self, mut item: Item) -> ProcessOutcome {
        for f in &self.fields {
            item.0.shift_remove(f);
        }
        ProcessOutcome::Keep(item)
    }
}

/// Applies `inner` only to items whose `_model` field is `model`; others pass untouched.
pub struct OnlyModel {
    model: String,
    inner: Box<dyn Processor>,
}

impl OnlyModel {
    /// Runs `inner` on the items of `model` only.
    pub fn new(model: impl Into<String>, inner: Box<dyn Processor>) -> Self {
        OnlyModel { model: model.into(), inner }
    }
}

impl Processor for OnlyModel {
    fn name(&self) -> String {
        format!("{}:{}", self.model, self.inner.name())
    }

    fn process(&self, item: Item) -> ProcessOutcome {
        if item.get("_model").and_then(Value::as_str) == Some(self.model.as_str()) {
            self.inner.process(item)
        } else {
            ProcessOutcome::Keep(item)
        }
    }

    fn take_state(&self) -> Vec<Vec<u8>> {
        self.inner.take_state()
    }

    fn restore_state(&self, entries: &[&[u8]]) {
        self.inner.restore_state(entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(o: ProcessOutcome) -> Item {
        match o {
            ProcessOutcome::Keep(i) => i,
            other => panic!("not kept: {other:?}"),
        }
    }

    #[test]
    fn rename_keeps_the_position() {
        let i = Item::new().with("a", 1).with("b", 2).with("c", 3);
        let out = kept(Rename::new("b", "x").process(i));
        assert_eq!(out.0.keys().collect::<Vec<_>>(), ["a", "x", "c"]);
    }

    #[test]
    fn rename_onto_a_field_takes_its_value_whatever_the_order() {
        let before = Item::new().with("a", 1).with("b", 2);
        let out = kept(Rename::new("a", "b").process(before));
        assert_eq!(serde_json::Value::Object(out.0), serde_json::json!({ "b": 1 }));
        let after = Item::new().with("b", 2).with("a", 1);
        let out = kept(Rename::new("a", "b").process(after));
        assert_eq!(serde_json::Value::Object(out.0), serde_json::json!({ "b": 1 }));
        let same = Item::new().with("a", 1);
        assert_eq!(kept(Rename::new("a", "a").process(same)).0.get("a"), Some(&serde_json::json!(1)));
    }

    #[test]
    fn set_remove_and_model_scope() {
        let i = Item::new().with("_model", "quote").with("a", 1);
        let out = kept(OnlyModel::new("quote", Box::new(Remove::new(["a"]))).process(i));
        assert_eq!(out, Item::new().with("_model", "quote"));
        let other = Item::new().with("_model", "author").with("a", 1);
        let out = kept(OnlyModel::new("quote", Box::new(Remove::new(["a"]))).process(other.clone()));
        assert_eq!(out, other);
        assert_eq!(kept(Set::new("k", "v").process(Item::new())), Item::new().with("k", "v"));
    }
}
