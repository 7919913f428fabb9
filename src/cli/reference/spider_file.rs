//! `docs/guide/reference/spider-file.md`: a spider file's tables and their keys, read off the
//! JSON Schema of spider files, which schemars derives from the structs that read the files.
//! The crawl settings a table takes are only named here: their own page lists them.

use std::fmt::Write;

use kumo_settings::SETTINGS;
use serde_json::{Map, Value};

use super::cell;

/// A table of a spider file: where it is written, and its schema.
struct Table<'a> {
    /// Its TOML header: `[[site]]`, `[site.schedule]`; empty for the top of the file.
    header: String,
    /// Its dotted path, which the tables inside it extend.
    path: String,
    schema: &'a Map<String, Value>,
}

/// The page, from the schema `kumo_spider::spider_file_schema` returns.
pub(super) fn spider_file_reference(schema: &Value) -> String {
    let mut out = String::from(
        "# Spider-file reference\n\n<!-- Generated from docs/spider.schema.json (itself derived from \
         the structs that read spider files) by src/cli/reference/spider_file.rs: run `cargo test \
         --bin kumo reference` after a change. -->\n\n\
         A spider file is TOML: crawl settings for every site, and a `[[site]]` table per site. An \
         unknown key is an error that names its line. [Spiders and extraction](../spiders.md) \
         shows the keys at work, and [`examples/`](../../../examples/) holds whole files. The \
         same keys, with their types, are in the JSON Schema \
         [`docs/spider.schema.json`](../../spider.schema.json), which an editor can check a \
         file against.\n",
    );
    for table in tables(schema) {
        section(&mut out, &table, schema);
    }
    out
}

/// Every table of a spider file, the top of the file first, then breadth first in the order
/// of the keys that hold them; a table reached twice (a field's nested `fields`) is listed once.
fn tables(schema: &Value) -> Vec<Table<'_>> {
    let top = schema.as_object().expect("the schema is an object");
    let mut found = vec![Table { header: String::new(), path: String::new(), schema: top }];
    let mut seen: Vec<String> = Vec::new();
    let mut next = 0;
    while next < found.len() {
        let parent = found[next].path.clone();
        for (key, property) in properties(found[next].schema) {
            for (name, many) in referenced(property, schema) {
                let Some(table) =
                    definition(schema, &name).as_object().filter(|t| t.contains_key("properties"))
                else {
                    continue;
                };
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                let path = if parent.is_empty() { key.clone() } else { format!("{parent}.{key}") };
                let header = if many { format!("[[{path}]]") } else { format!("[{path}]") };
                found.push(Table { header, path, schema: table });
            }
        }
        next += 1;
    }
    found
}

/// A table's section: its keys, one row each, and the crawl settings it takes as one line.
fn section(out: &mut String, table: &Table, schema: &Value) {
    let heading = if table.header.is_empty() {
        "The top of the file".to_string()
    } else {
        format!("`{}`", table.header)
    };
    let _ = write!(out, "\n## {heading}\n\n");
    if let Some(about) =
        table.schema.get("description").and_then(Value::as_str).filter(|_| !table.header.is_empty())
    {
        let _ = write!(out, "{}\n\n", one_line(about));
    }
    let required: Vec<&str> = table
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Only the top of the file and a site take crawl settings (a limit rule's `delay` is its own).
    let takes_settings = table.path.is_empty() || table.path == "site";
    let keys: Vec<(&String, &Value)> =
        properties(table.schema).into_iter().filter(|(k, _)| !(takes_settings && is_setting(k))).collect();
    let settings = properties(table.schema).len() - keys.len();
    out.push_str("| key | value | what it is |\n|---|---|---|\n");
    for (key, property) in keys {
        let mut about = property.get("description").and_then(Value::as_str).map(one_line).unwrap_or_default();
        if let Some(default) = property.get("default") {
            let _ = write!(about, "{}Default: `{default}`.", if about.is_empty() { "" } else { " " });
        }
        if required.contains(&key.as_str()) {
            about = format!("Required. {about}").trim_end().to_string();
        }
        let _ = writeln!(out, "| `{key}` | {} | {} |", value_kind(property, schema), cell(&about));
    }
    if settings > 0 {
        let _ = write!(
            out,
            "\nAnd every crawl setting ({settings}), as the [settings reference](settings.md) lists them{}.\n",
            if table.header.is_empty() { ": they hold for every site, under each site's own" } else { "" }
        );
    }
}

/// Whether `key` is a crawl setting or an old spelling of one, which the settings reference
/// documents.
fn is_setting(key: &str) -> bool {
    SETTINGS.iter().any(|s| s.name == key || s.old.iter().any(|o| o.key == Some(key)))
}

/// A table's keys, in the schema's order.
fn properties(table: &Map<String, Value>) -> Vec<(&String, &Value)> {
    table.get("properties").and_then(Value::as_object).map(|p| p.iter().collect()).unwrap_or_default()
}

/// The definitions a property refers to, each with whether it is an array of them; through
/// a definition that is not a table (`render`: a string or a table), to the tables it allows.
fn referenced(property: &Value, schema: &Value) -> Vec<(String, bool)> {
    let mut names = Vec::new();
    if let Some(name) = ref_name(property) {
        let target = definition(schema, &name);
        if target.get("properties").is_none() {
            names.extend(referenced(target, schema));
        }
        names.push((name, false));
    }
    if let Some(items) = property.get("items") {
        names.extend(ref_name(items).map(|n| (n, true)));
    }
    for alternative in alternatives(property) {
        names.extend(referenced(alternative, schema));
    }
    names
}

fn ref_name(schema: &Value) -> Option<String> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/definitions/").map(str::to_string)
}

fn definition<'a>(schema: &'a Value, name: &str) -> &'a Value {
    &schema["definitions"][name]
}

/// A schema's `anyOf`, `oneOf` or `allOf` alternatives (schemars writes a reference with a
/// default as `allOf` of one), none when it has none.
fn alternatives(schema: &Value) -> &[Value] {
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .find_map(|k| schema.get(*k))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What a key takes, in words: `string`, `array of string`, `[site.follow]`, `"text" or
/// { attr }`; a null alternative (a key that may be left out) is not shown.
fn value_kind(property: &Value, schema: &Value) -> String {
    if let Some(name) = ref_name(property) {
        let target = definition(schema, &name);
        if target.get("properties").is_some() {
            return "table".to_string();
        }
        return value_kind(target, schema);
    }
    if let Some(value) = property.get("const") {
        return format!("`{value}`");
    }
    let options = alternatives(property);
    if !options.is_empty() {
        let kinds: Vec<String> = options
            .iter()
            .filter(|o| o.get("type") != Some(&Value::from("null")))
            .map(|o| value_kind(o, schema))
            .collect();
        return kinds.join(" or ");
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => vec![],
    };
    let kinds: Vec<String> = types
        .iter()
        .map(|t| match (*t, property.get("items")) {
            ("array", Some(items)) => format!("array of {}", value_kind(items, schema)),
            ("object", _) => one_key_table(property),
            (t, _) => t.to_string(),
        })
        .collect();
    if kinds.is_empty() { "any".to_string() } else { kinds.join(" or ") }
}

/// An inline table in words: `{ dedup }`, `{ from, to }`.
fn one_key_table(table: &Value) -> String {
    let keys: Vec<&str> = table
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if keys.is_empty() { "table".to_string() } else { format!("`{{ {} }}`", keys.join(", ")) }
}

/// A description on one line: its paragraphs joined.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
