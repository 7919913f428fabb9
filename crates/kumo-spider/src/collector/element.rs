//! An HTML element handed to `on_html` callbacks, with Colly's `ChildText`/`ChildAttr` helpers.

use scraper::{ElementRef, Selector};

/// One matched element.
pub struct Element<'a> {
    el: ElementRef<'a>,
}

/// Text with whitespace runs collapsed and trimmed (as extraction models do).
fn clean<'s>(s: impl Iterator<Item = &'s str>) -> String {
    s.collect::<String>().split_whitespace().collect::<Vec<_>>().join(" ")
}

impl<'a> Element<'a> {
    pub(super) fn new(el: ElementRef<'a>) -> Self {
        Element { el }
    }

    /// The underlying scraper element, for anything the helpers lack.
    pub fn inner(&self) -> ElementRef<'a> {
        self.el
    }

    /// The element's text, trimmed, with runs of whitespace collapsed to one space.
    pub fn text(&self) -> String {
        clean(self.el.text())
    }

    /// The value of attribute `name` as written (not trimmed); `None` when absent.
    pub fn attr(&self, name: &str) -> Option<&'a str> {
        self.el.value().attr(name)
    }

    /// The element itself as HTML.
    pub fn html(&self) -> String {
        self.el.html()
    }

    /// The element's contents as HTML.
    pub fn inner_html(&self) -> String {
        self.el.inner_html()
    }

    fn select(&self, css: &str) -> Vec<ElementRef<'a>> {
        // An invalid selector finds nothing, like a selector that matches nothing.
        Selector::parse(css).map(|s| self.el.select(&s).collect()).unwrap_or_default()
    }

    /// The text of the first descendant matching `css` (Colly's `ChildText`).
    pub fn select_text(&self, css: &str) -> Option<String> {
        self.select(css).first().map(|e| clean(e.text())).filter(|t| !t.is_empty())
    }

    /// The texts of every descendant matching `css`.
    pub fn select_texts(&self, css: &str) -> Vec<String> {
        self.select(css).into_iter().map(|e| clean(e.text())).filter(|t| !t.is_empty()).collect()
    }

    /// An attribute of the first descendant matching `css` (Colly's `ChildAttr`).
    pub fn select_attr(&self, css: &str, name: &str) -> Option<&'a str> {
        self.select(css).into_iter().find_map(|e| e.value().attr(name))
    }
}
