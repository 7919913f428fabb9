//! A scraped record: named JSON values, in the order the spider produced them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One scraped record. Field order is kept (sinks such as CSV rely on it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Item(pub Map<String, Value>);

impl Item {
    /// An item with no fields.
    pub fn new() -> Self {
        Item(Map::new())
    }

    /// Sets `name` to `value`, builder style.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.0.insert(name.to_string(), value.into());
        self
    }

    /// Sets `name` to `value`: a new field goes last, an existing one keeps its place.
    pub fn insert(&mut self, name: &str, value: impl Into<Value>) {
        self.0.insert(name.to_string(), value.into());
    }

    /// The value of the field `name`; `None` when the item has no such field.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
}
