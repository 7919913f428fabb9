//! A scraped record: named JSON values, in the order the spider produced them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One scraped record. Field order is kept (sinks such as CSV rely on it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Item(pub Map<String, Value>);

impl Item {
    pub fn new() -> Self {
        Item(Map::new())
    }

    /// Sets `name` to `value`, builder style.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.0.insert(name.to_string(), value.into());
        self
    }

    pub fn insert(&mut self, name: &str, value: impl Into<Value>) {
        self.0.insert(name.to_string(), value.into());
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
}
