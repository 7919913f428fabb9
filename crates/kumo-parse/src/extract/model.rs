//! The definition types of an extraction model, as a spider file or Rust code writes them.
//! They say *what* to extract; [`Model::compile`](super::Model::compile) checks them and turns
//! them into something that can run. Their TOML form is in `de.rs`.

use schemars::JsonSchema;
use serde::Deserialize;

/// A named set of fields extracted from a page: one item per match of `root`, or one item per
/// page when there is no root.
///
/// ```
/// use kumo_parse::extract::{Field, Model, Selector};
///
/// let quotes = Model::new("quote", vec![
///     Field::css("text", "span.text"),
///     Field::css("author", "small.author").required(),
///     Field::css("tags", "a.tag").list(),
/// ])
/// .with_root(Selector::css("div.quote"));
/// assert!(quotes.compile().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(try_from = "super::de::RawModel")]
pub struct Model {
    /// The model's name, which its errors give.
    pub name: String,
    /// The fields of each item, in order: at least one, their names unique in the model.
    pub fields: Vec<Field>,
    /// Each match of `root` yields one item, its fields looked up inside the match. Absent: one
    /// item per page.
    pub root: Option<Selector>,
}

/// One named value of an item: where to find it, what to take from it, how to check it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(try_from = "super::de::RawField")]
pub struct Field {
    /// The value's key in the item; not blank.
    pub name: String,
    /// How to find the field's matches.
    pub selector: Selector,
    /// What to take from each match (CSS and XPath matches; regex and JSON matches are values).
    pub take: Take,
    /// All matches, as a JSON array; otherwise the first match that yields a value.
    pub list: bool,
    /// A missing value (or an empty list) makes the item invalid instead of silently empty.
    pub required: bool,
    /// Post-filter applied to each taken value: capture group 1 if the pattern has one, else
    /// the whole match. A value the pattern does not match is dropped.
    pub regex: Option<String>,
    /// A sub-model evaluated inside each match: an object (or, with `list`, an array of them).
    pub nested: Option<Box<Model>>,
    /// The values are URLs to follow: resolved against the page and reported in
    /// [`Extraction::dig`](super::Extraction::dig) as well as kept in the item.
    pub dig: bool,
}

/// Where a field's (or a root's) matches come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(try_from = "super::de::RawSelector")]
pub enum Selector {
    /// A CSS selector over the HTML document (or inside the enclosing match).
    Css(String),
    /// An XPath 3.1 expression over the HTML document (or relative to the enclosing match).
    XPath(String),
    /// A regular expression over the raw body text (or over the enclosing match's source);
    /// each match gives capture group 1 if there is one, else the whole match.
    Regex(String),
    /// An RFC 9535 JSONPath query over a JSON body (or the enclosing JSON value).
    Json(String),
}

/// What a field takes from each CSS or XPath match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Take {
    /// The text content, trimmed, with runs of whitespace collapsed to one space.
    #[default]
    Text,
    /// The value of the named attribute, trimmed.
    Attr(String),
    /// The element's contents as HTML.
    InnerHtml,
    /// The element itself as HTML.
    OuterHtml,
}

impl Model {
    /// A model of `fields` without a root: one item per page.
    pub fn new(name: impl Into<String>, fields: Vec<Field>) -> Self {
        Model { name: name.into(), fields, root: None }
    }

    /// Sets the root selector: one item per match.
    pub fn with_root(mut self, root: Selector) -> Self {
        self.root = Some(root);
        self
    }
}

impl Field {
    /// A field with the defaults: text of the first match, optional, not followed.
    pub fn new(name: impl Into<String>, selector: Selector) -> Self {
        Field {
            name: name.into(),
            selector,
            take: Take::Text,
            list: false,
            required: false,
            regex: None,
            nested: None,
            dig: false,
        }
    }

    /// A field found with a CSS selector, with the defaults of [`Field::new`].
    pub fn css(name: impl Into<String>, selector: impl Into<String>) -> Self {
        Field::new(name, Selector::css(selector))
    }

    /// A field found with an XPath expression, with the defaults of [`Field::new`].
    pub fn xpath(name: impl Into<String>, expression: impl Into<String>) -> Self {
        Field::new(name, Selector::xpath(expression))
    }

    /// A field found with a regex over the body, with the defaults of [`Field::new`].
    pub fn regex(name: impl Into<String>, pattern: impl Into<String>) -> Self {
        Field::new(name, Selector::regex(pattern))
    }

    /// A field found with a JSONPath query, with the defaults of [`Field::new`].
    pub fn json(name: impl Into<String>, path: impl Into<String>) -> Self {
        Field::new(name, Selector::json(path))
    }

    /// Takes the named attribute instead of the text.
    pub fn attr(mut self, name: impl Into<String>) -> Self {
        self.take = Take::Attr(name.into());
        self
    }

    /// Sets what to take from each match (CSS and XPath matches only).
    pub fn take(mut self, take: Take) -> Self {
        self.take = take;
        self
    }

    /// Takes every match, as an array.
    pub fn list(mut self) -> Self {
        self.list = true;
        self
    }

    /// Makes an item without a value for this field invalid.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Sets the post-filter regex (the TOML key `regex` next to another selector).
    pub fn filter(mut self, pattern: impl Into<String>) -> Self {
        self.regex = Some(pattern.into());
        self
    }

    /// Evaluates `model` inside each match; its `root` must be `None`.
    pub fn nested(mut self, model: Model) -> Self {
        self.nested = Some(Box::new(model));
        self
    }

    /// Follows the values as URLs, and keeps them in the item too.
    pub fn dig(mut self) -> Self {
        self.dig = true;
        self
    }
}

impl Selector {
    /// A CSS selector.
    pub fn css(selector: impl Into<String>) -> Self {
        Selector::Css(selector.into())
    }

    /// An XPath expression.
    pub fn xpath(expression: impl Into<String>) -> Self {
        Selector::XPath(expression.into())
    }

    /// A regular expression.
    pub fn regex(pattern: impl Into<String>) -> Self {
        Selector::Regex(pattern.into())
    }

    /// A JSONPath query.
    pub fn json(path: impl Into<String>) -> Self {
        Selector::Json(path.into())
    }

    /// The TOML key that spells this kind: `css`, `xpath`, `regex` or `json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Selector::Css(_) => "css",
            Selector::XPath(_) => "xpath",
            Selector::Regex(_) => "regex",
            Selector::Json(_) => "json",
        }
    }

    /// The selector's text as written.
    pub fn source(&self) -> &str {
        match self {
            Selector::Css(s) | Selector::XPath(s) | Selector::Regex(s) | Selector::Json(s) => s,
        }
    }
}
