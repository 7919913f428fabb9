//! Declarative extraction: models of named fields, found with CSS, XPath, regex or JSONPath
//! selectors, that turn a page into items — what a configured spider's file describes.
//!
//! The flow is definition → check → run:
//!
//! 1. A [`Model`] is written in a spider file (serde, e.g. TOML) or built in Rust.
//! 2. [`Model::compile`] checks all of it once and parses every selector and pattern; every
//!    mistake is a [`ModelError`] naming the model, the field and the problem.
//! 3. [`CompiledModel::extract`] runs on a page and returns an [`Extraction`]: valid items,
//!    invalid ones (a `required` field had no value), URLs to follow (`dig` fields), and issues.
//!
//! ```
//! use kumo_parse::extract::Model;
//!
//! let model: Model = toml::from_str(r#"
//!     name = "quote"
//!     root = { css = "div.quote" }
//!     fields = [
//!       { name = "text", css = "span.text", required = true },
//!       { name = "author", css = "small.author" },
//!       { name = "tags", css = "a.tag", list = true },
//!       { name = "about", css = "a[href^='/author/']", attr = "href", dig = true },
//!       { name = "year", css = "span.text", regex = "(\\d{4})" },
//!     ]
//! "#).unwrap();
//! let page = url::Url::parse("http://quotes.example/").unwrap();
//! let html = r#"<div class="quote"><span class="text">Hello,   world</span>
//!     <small class="author">Ann</small> <a href="/author/Ann">about</a>
//!     <a class="tag">a</a><a class="tag">b</a></div>"#;
//! let out = model.compile().unwrap().extract(html, false, &page);
//! assert_eq!(
//!     serde_json::to_value(&out.items).unwrap(),
//!     serde_json::json!([{ "text": "Hello, world", "author": "Ann", "tags": ["a", "b"],
//!                          "about": "http://quotes.example/author/Ann", "year": null }]),
//! );
//! assert_eq!(out.dig[0].as_str(), "http://quotes.example/author/Ann");
//! ```
//!
//! Values: text is trimmed with whitespace runs collapsed; attributes are trimmed; HTML takes
//! are serialized as html5ever does (attributes in name order, the same for CSS and XPath); JSON values are kept exactly (a number stays a number, a string is
//! not trimmed) unless a regex filter reads them as text. An empty value counts as no value. A single field takes the
//! first match that yields a value, `null` if none; a list field takes every value, `[]` if
//! none. Nested `fields` run inside each match and give an object (or an array of objects).
//!
//! Scopes: a model without `root` gives one item per page; with one, an item per root match,
//! its fields looked up inside the match. Inside a CSS match only CSS (and regex) selectors
//! can run, inside an XPath match only XPath (and regex), inside a JSON value only JSONPath
//! (and regex): a match belongs to one parse tree. A regex reads the raw body at page level
//! and the match's source (HTML, or the JSON text) inside a match. XPath inside a match is
//! relative to it: write `.//x` (skyscraper also reads `//x` there as "below the match").
//!
//! Costs: each page is parsed at most once per kind (CSS DOM, XPath tree, JSON) however many
//! fields and models use it, and only when one does; build one [`Document`] per page (or call
//! [`extract_all`]). Both DOM parsers take time quadratic in the nesting depth of elements
//! such as `<div>` (html5ever: 0.2 s at 10 000 levels, 36 s at 100 000), so a page nested
//! deeper than [`MAX_DEPTH`] is not parsed at all, and the models on one page share a time
//! budget ([`EXTRACT_BUDGET`]) checked as they go; the serializers and text walks here are
//! iterative, so depth never overflows the stack. Selectors are refused at compile time past
//! the nesting their parsers' recursion can take ([`MAX_XPATH_NESTING`] and the like).
//!
//! Architecture invariant: a model never fails a page for what it does not find. Whatever the
//! page, [`Extraction::issues`] says what could not run (a JSON selector on a body that is not
//! JSON, say) and the fields concerned are simply empty — and so, if they are required, their
//! items are invalid. Only a page past the limits above fails as a whole:
//! [`Extraction::failure`] says why, and the extraction then has no items.

mod compile;
mod css;
mod de;
mod depth;
mod document;
mod fast;
mod json;
mod limits;
mod model;
mod nesting;
mod query;
mod regex;
mod run;
mod value;
mod xpath;
mod xpath_html;

use kumo_core::Item;
use url::Url;

pub use compile::{CompiledModel, ModelError, Place, Problem};
pub use document::Document;
pub use limits::{EXTRACT_BUDGET, ExtractError, MAX_DEPTH, MAX_VALUE_BYTES};
pub use model::{Field, Model, Selector, Take};
pub use nesting::{MAX_JSONPATH_NESTING, MAX_XPATH_CLAUSES, MAX_XPATH_NESTING};
pub use query::{Found, Query};

/// Most memory one compiled regex may take (the `regex` crate's `size_limit`).
pub const REGEX_SIZE_LIMIT: usize = regex::SIZE_LIMIT;

/// Deepest nesting of groups and repetitions in a regex (the `regex` crate's `nest_limit`).
pub const REGEX_NEST_LIMIT: u32 = regex::NEST_LIMIT;

/// What one model found on one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extraction {
    /// Items whose required fields all have values, in document order.
    pub items: Vec<Item>,
    /// Items that lack a required value: never passed on as if complete.
    pub invalid: Vec<InvalidItem>,
    /// Absolute http(s) URLs from `dig` fields (valid and invalid items alike), without
    /// fragments, de-duplicated, in the order items and their fields produced them.
    pub dig: Vec<Url>,
    /// What could not run on this page, one line each (capped); a `failure` is the first.
    pub issues: Vec<String>,
    /// The page was past a limit (too deep, over the time budget, too much text): no items.
    pub failure: Option<ExtractError>,
}

impl Extraction {
    /// An extraction that failed as a whole.
    pub(crate) fn failed(error: ExtractError) -> Extraction {
        Extraction { issues: vec![error.to_string()], failure: Some(error), ..Extraction::default() }
    }
}

/// An item with required fields missing.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidItem {
    /// The item as far as it could be filled; missing fields are `null` or `[]`.
    pub item: Item,
    /// Dotted paths of the required fields without a value (`price`, `author.name`,
    /// `offers[1].price`).
    pub missing: Vec<String>,
}

/// Runs several models on one page, parsing it once (per kind of parse a model needs). One
/// extraction per model, in order.
pub fn extract_all(
    models: &[CompiledModel],
    body: &str,
    content_type_is_json: bool,
    page_url: &Url,
) -> Vec<Extraction> {
    let doc = Document::new(body, content_type_is_json, page_url);
    models.iter().map(|model| model.extract_from(&doc)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_models_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<CompiledModel>();
        shareable::<Model>();
        shareable::<ModelError>();
    }
}
