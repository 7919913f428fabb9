//! The JSON Schema of spider files, for editors that check and complete TOML against one
//! (Even Better TOML, taplo). It is derived from the structs that read the file (`raw.rs` and
//! the extraction model's), with the crawl settings taken from kumo-settings' table, so the
//! schema and the loader cannot disagree on what a key is.

use kumo_settings::{Kind, SETTINGS, Setting};
use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use super::raw::RawFile;

/// The schema of a spider file, as JSON (draft 7, which editors' validators all read).
pub fn spider_file_schema() -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<RawFile>().to_value();
    schema["title"] = json!("kumo spider file");
    schema["description"] = json!(
        "A kumo spider file: crawl-wide settings, and one [[site]] table per site with its \
         seeds, URL rules, extraction models, processors and outputs."
    );
    schema
}

/// Adds the crawl settings to a table's keys (the flattened `settings` map), and refuses any
/// other key, as the loader does.
pub(super) fn with_settings(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let properties = object.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        for setting in SETTINGS {
            properties.insert(setting.name.to_string(), setting_schema(setting));
            for old in setting.old.iter().filter_map(|o| o.key) {
                let note = format!("The old spelling of `{}`, still read with a warning.", setting.name);
                properties.insert(old.to_string(), json!({ "description": note, "deprecated": true }));
            }
        }
    }
    object.insert("additionalProperties".into(), Value::Bool(false));
}

/// One setting's value, as its kind reads it from TOML.
fn setting_schema(setting: &Setting) -> Value {
    let mut schema = match setting.kind {
        Kind::Switch => json!({ "type": "boolean" }),
        Kind::Count { min, max } => {
            let mut schema = json!({ "type": "integer", "minimum": min });
            if max != u64::MAX {
                schema["maximum"] = json!(max);
            }
            schema
        }
        Kind::Number { min, max } => {
            let mut schema = json!({ "type": "number" });
            if min.is_finite() {
                schema["minimum"] = json!(min);
            }
            if max.is_finite() {
                schema["maximum"] = json!(max);
            }
            schema
        }
        Kind::Duration { .. } => duration().to_value(),
        Kind::Text => json!({ "type": "string" }),
        Kind::List => json!({ "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" } },
        ] }),
    };
    let mut doc = setting.doc.to_string();
    if !setting.default.is_empty() {
        doc.push_str(&format!(" Default: {}.", setting.default));
    }
    schema["description"] = Value::String(doc);
    schema
}

/// A duration: `"250ms"`, `"10s"`, `"6h"`, or a bare number of seconds.
fn duration() -> Schema {
    json_schema!({
        "anyOf": [
            { "type": "string", "pattern": "^\\s*[0-9]" },
            { "type": "number", "minimum": 0 },
        ],
    })
}

/// An optional duration field of a struct (a limit rule's `delay`).
pub(super) fn optional_duration(_: &mut SchemaGenerator) -> Schema {
    duration()
}
