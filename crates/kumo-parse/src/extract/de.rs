//! The TOML (any serde format) form of models, fields and selectors: raw structs that mirror
//! what people write, checked and turned into the definition types with `try_from`, so a
//! mistake is reported with the name of the field it is in.
//!
//! ```toml
//! name = "quote"
//! root = { css = "div.quote" }
//! fields = [
//!   { name = "text", css = "span.text", required = true },
//!   { name = "tags", css = "a.tag", list = true },
//!   { name = "author", css = "div.quote > span", fields = [
//!     { name = "name", css = "small.author" },
//!     { name = "url", css = "a", attr = "href", dig = true },
//!   ] },
//! ]
//! ```
//!
//! A field names exactly one selector kind: `css`, `xpath`, `json`, or `regex` alone. Next to
//! one of the other three, `regex` is the post-filter ([`Field::regex`]), so
//! `{ css = ".born", regex = "(\\d{4})" }` reads as "the year in `.born`".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::model::{Field, Model, Selector, Take};

const MODEL_KEYS: &[&str] = &["name", "root", "fields"];
const FIELD_KEYS: &[&str] =
    &["name", "css", "xpath", "regex", "json", "attr", "take", "list", "required", "dig", "fields"];
const SELECTOR_KEYS: &[&str] = &["css", "xpath", "regex", "json"];

/// A model: its name, an optional root, its fields. Unknown keys are refused by the
/// spider file's model entry, which flattens this one.
#[derive(Deserialize, JsonSchema)]
pub(super) struct RawModel {
    /// The model's name, written into each of its items as `_model`.
    name: String,
    /// A selector: one item per match, the fields read inside it (left out: one item a page).
    #[serde(default)]
    root: Option<Selector>,
    /// The item's fields.
    fields: Vec<Field>,
    /// Collected rather than denied so that the error can name the model.
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, IgnoredAny>,
}

impl TryFrom<RawModel> for Model {
    type Error = String;

    fn try_from(raw: RawModel) -> Result<Self, String> {
        if let Some(key) = raw.unknown.keys().next() {
            return Err(format!("model `{}`: {}", raw.name, unknown_key(key, MODEL_KEYS)));
        }
        Ok(Model { name: raw.name, fields: raw.fields, root: raw.root })
    }
}

/// A field: its name, one selector (`css`, `xpath`, `json`, or `regex` alone), and what to
/// take.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(super) struct RawField {
    /// The field's name in the item.
    name: String,
    /// A CSS selector.
    css: Option<String>,
    /// An XPath 3.1 expression.
    xpath: Option<String>,
    /// A regular expression: the selector when alone (its first group, or the whole match),
    /// else a filter on the other selector's values.
    regex: Option<String>,
    /// A JSONPath (RFC 9535) query into a JSON page.
    json: Option<String>,
    /// Takes this attribute of each match (`"href"`) instead of its text.
    attr: Option<String>,
    /// What to take from each match (its text by default).
    take: Option<Take>,
    /// All the matches, as an array (otherwise the first).
    #[serde(default)]
    list: bool,
    /// An item without this field is invalid.
    #[serde(default)]
    required: bool,
    /// The values are URLs: each is followed, and kept in the item too.
    #[serde(default)]
    dig: bool,
    /// A nested model, read inside each match: the field's value is an object.
    fields: Option<Vec<Field>>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, IgnoredAny>,
}

impl TryFrom<RawField> for Field {
    type Error = String;

    fn try_from(raw: RawField) -> Result<Self, String> {
        let fail = |problem: String| Err(format!("field `{}`: {problem}", raw.name));
        if let Some(key) = raw.unknown.keys().next() {
            return fail(unknown_key(key, FIELD_KEYS));
        }
        // `regex` is the selector only when it stands alone; otherwise it filters.
        let others = [("css", &raw.css), ("xpath", &raw.xpath), ("json", &raw.json)];
        let given: Vec<&str> = others.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| *k).collect();
        let (selector, filter) = match (given.as_slice(), &raw.regex) {
            ([], None) => return fail(NO_SELECTOR.to_owned()),
            ([], Some(pattern)) => (Selector::Regex(pattern.clone()), None),
            ([_], _) => {
                let selector = match (&raw.css, &raw.xpath, &raw.json) {
                    (Some(css), _, _) => Selector::Css(css.clone()),
                    (_, Some(xpath), _) => Selector::XPath(xpath.clone()),
                    (_, _, Some(json)) => Selector::Json(json.clone()),
                    (None, None, None) => unreachable!("one selector kind was counted"),
                };
                (selector, raw.regex.clone())
            }
            ([a, b, ..], _) => return fail(two_selectors(a, b)),
        };
        let take = match (raw.take, raw.attr) {
            (Some(_), Some(_)) => {
                return fail(
                    "has both `take` and `attr`; `attr = \"name\"` alone takes an attribute".to_owned(),
                );
            }
            (Some(take), None) => take,
            (None, Some(attr)) => Take::Attr(attr),
            (None, None) => Take::Text,
        };
        let nested = raw.fields.map(|fields| Box::new(Model { name: raw.name.clone(), fields, root: None }));
        Ok(Field {
            name: raw.name,
            selector,
            take,
            list: raw.list,
            required: raw.required,
            regex: filter,
            nested,
            dig: raw.dig,
        })
    }
}

/// A selector: `{ css = "..." }`, `{ xpath = "..." }`, `{ regex = "..." }` or `{ json = "..." }`.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(super) struct RawSelector {
    /// A CSS selector.
    css: Option<String>,
    /// An XPath 3.1 expression.
    xpath: Option<String>,
    /// A regular expression.
    regex: Option<String>,
    /// A JSONPath (RFC 9535) query into a JSON page.
    json: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: BTreeMap<String, IgnoredAny>,
}

impl TryFrom<RawSelector> for Selector {
    type Error = String;

    fn try_from(raw: RawSelector) -> Result<Self, String> {
        if let Some(key) = raw.unknown.keys().next() {
            return Err(format!("selector: {}", unknown_key(key, SELECTOR_KEYS)));
        }
        let mut given = [
            raw.css.map(Selector::Css),
            raw.xpath.map(Selector::XPath),
            raw.regex.map(Selector::Regex),
            raw.json.map(Selector::Json),
        ]
        .into_iter()
        .flatten();
        match (given.next(), given.next()) {
            (None, _) => Err(format!("selector: {NO_SELECTOR}")),
            (Some(one), None) => Ok(one),
            (Some(a), Some(b)) => Err(format!("selector: {}", two_selectors(a.kind(), b.kind()))),
        }
    }
}

const NO_SELECTOR: &str = "no selector; give exactly one of `css`, `xpath`, `regex`, `json`";

fn two_selectors(a: &str, b: &str) -> String {
    format!("has two selectors, `{a}` and `{b}`; give exactly one of `css`, `xpath`, `regex`, `json`")
}

fn unknown_key(key: &str, known: &[&str]) -> String {
    let hint = known
        .iter()
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    format!("unknown key `{key}`{hint}; expected one of `{}`", known.join("`, `"))
}

/// Levenshtein distance over chars; keys are short, so the quadratic table is nothing.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("atr", "attr"), 1);
        assert_eq!(edit_distance("lsit", "list"), 2);
        assert_eq!(edit_distance("", "css"), 3);
        assert_eq!(edit_distance("json", "json"), 0);
    }
}
