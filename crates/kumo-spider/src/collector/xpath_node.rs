//! An element matched by an `on_xpath` expression, with the same helpers as the CSS
//! [`Element`](super::Element): its text, attributes, HTML, and child queries (in XPath,
//! relative to the element: `.//span[@class='text']`).

use kumo_parse::extract::Take;
use serde_json::Value;

use super::xpath::{Ask, XPathPage};

/// One element an `on_xpath` expression selected (in an XML response, one XML element).
///
/// Values follow kumo-parse's extraction rules: text is trimmed with whitespace runs
/// collapsed, attributes are trimmed, and an empty value counts as no value. A child query
/// that does not parse finds nothing and is reported in the page's issues.
pub struct XPathNode<'p> {
    page: &'p XPathPage<'p>,
    root: &'p str,
    index: usize,
}

impl<'p> XPathNode<'p> {
    pub(super) fn new(page: &'p XPathPage<'p>, root: &'p str, index: usize) -> Self {
        XPathNode { page, root, index }
    }

    fn ask(&self, ask: &Ask) -> Value {
        self.page.value(self.root, ask, self.index)
    }

    fn string(&self, ask: &Ask) -> Option<String> {
        match self.ask(ask) {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The position of this match among the expression's matches on the page, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The element's text, trimmed, with runs of whitespace collapsed; empty when it has none.
    pub fn text(&self) -> String {
        self.string(&Ask::text()).unwrap_or_default()
    }

    /// The attribute's value, or `None` when it is absent or empty.
    pub fn attr(&self, name: &str) -> Option<String> {
        self.string(&Ask::first(".", Take::Attr(name.to_owned())))
    }

    /// The element's contents as HTML.
    pub fn inner_html(&self) -> String {
        self.string(&Ask::first(".", Take::InnerHtml)).unwrap_or_default()
    }

    /// The element itself as HTML.
    pub fn outer_html(&self) -> String {
        self.string(&Ask::first(".", Take::OuterHtml)).unwrap_or_default()
    }

    /// The text of the first match of `xpath` inside this element that has any.
    pub fn select_text(&self, xpath: &str) -> Option<String> {
        self.string(&Ask::first(xpath, Take::Text))
    }

    /// The texts of every match of `xpath` inside this element (empty ones left out).
    pub fn select_texts(&self, xpath: &str) -> Vec<String> {
        match self.ask(&Ask::all(xpath, Take::Text)) {
            Value::Array(values) => {
                values.into_iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// An attribute of the first match of `xpath` inside this element that has it.
    pub fn select_attr(&self, xpath: &str, name: &str) -> Option<String> {
        self.string(&Ask::first(xpath, Take::Attr(name.to_owned())))
    }
}
