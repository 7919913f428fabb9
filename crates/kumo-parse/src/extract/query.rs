//! One selector on one page, every value it finds: what `kumo shell` prints and what a
//! script's `page.css()` (and `xpath`, `regex`, `json`) returns. It runs as a model of one list
//! field, so a query finds exactly what the same selector in a spider file would.

use serde_json::Value;

use super::{CompiledModel, Document, ExtractError, Field, Model, ModelError};

/// A selector ready to run on any number of pages.
#[derive(Debug, Clone)]
pub struct Query(CompiledModel);

/// What a query found on one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Every value, in document order (strings for CSS and XPath, JSON values for JSONPath).
    pub values: Vec<Value>,
    /// What could not run on this page (a CSS selector on a JSON body, say); a `failure`
    /// is the first.
    pub issues: Vec<String>,
    /// The page was past a limit (too deep, over its time budget): no values.
    pub failure: Option<ExtractError>,
}

impl Query {
    /// Compiles `field` (its name is not used) as a list: a selector or pattern that does not
    /// compile is an error now.
    pub fn new(mut field: Field) -> Result<Query, ModelError> {
        field.name = VALUES.to_string();
        Ok(Query(Model::new("query", vec![field.list()]).compile()?))
    }

    /// Runs on `doc`, sharing its parses with whatever else runs on the page.
    pub fn run(&self, doc: &Document<'_>) -> Found {
        let mut found = self.0.extract_from(doc);
        let values = match found.items.pop().and_then(|mut item| item.0.remove(VALUES)) {
            Some(Value::Array(values)) => values,
            Some(Value::Null) | None => Vec::new(),
            Some(value) => vec![value],
        };
        Found { values, issues: found.issues, failure: found.failure }
    }
}

/// The name of the one field of a query's model.
const VALUES: &str = "values";
