//! One fetched page as the extractors see it: the body, plus each parse of it made at most
//! once and only when some selector needs it (the CSS DOM, the XPath tree, the JSON value),
//! shared by every field and model that runs on the page.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::time::Duration;

use scraper::Html;
use serde_json::Value;
use skyscraper::xpath::XpathItemTree;
use url::Url;

use super::limits::{Budget, EXTRACT_BUDGET, ExtractError, MAX_DEPTH};

/// Why a parse of the page cannot serve a selector.
#[derive(Debug, Clone)]
pub(super) enum Unusable {
    /// This selector finds nothing here (a CSS selector on JSON): an issue.
    Issue(String),
    /// No model can run on the page: it fails.
    Stop(ExtractError),
}

impl From<String> for Unusable {
    fn from(issue: String) -> Unusable {
        Unusable::Issue(issue)
    }
}

impl From<ExtractError> for Unusable {
    fn from(error: ExtractError) -> Unusable {
        Unusable::Stop(error)
    }
}

/// A page ready for extraction. Parses lazily and caches; not `Send` (scraper's DOM is not),
/// so build it and run the models inside one synchronous function (or `spawn_blocking`).
///
/// ```
/// use kumo_parse::extract::{Document, Field, Model};
///
/// let url = url::Url::parse("http://example.com/").unwrap();
/// let title = Model::new("page", vec![Field::css("title", "h1")]).compile().unwrap();
/// let links = Model::new("links", vec![Field::css("links", "a").attr("href").list().dig()])
///     .compile()
///     .unwrap();
/// let page = Document::new("<h1>Hi</h1><a href='/a'>a</a>", false, &url);
/// // One HTML parse serves both models.
/// assert_eq!(title.extract_from(&page).items[0].get("title").unwrap(), "Hi");
/// assert_eq!(links.extract_from(&page).dig[0].as_str(), "http://example.com/a");
/// ```
pub struct Document<'a> {
    body: Cow<'a, str>,
    is_json: bool,
    url: Cow<'a, Url>,
    html: OnceCell<Html>,
    xpath: OnceCell<Result<XpathItemTree, String>>,
    json: OnceCell<Result<Value, String>>,
    base: OnceCell<Url>,
    /// Whether the page is too deep for a DOM, measured on first need.
    too_deep: OnceCell<bool>,
    budget: Budget,
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("url", &self.url.as_str())
            .field("bytes", &self.body.len())
            .field("is_json", &self.is_json)
            .finish_non_exhaustive()
    }
}

impl<'a> Document<'a> {
    /// `content_type_is_json` says the response is JSON: CSS and XPath selectors then find
    /// nothing (and say so in the issues). JSONPath selectors read the body as JSON either way,
    /// since APIs often answer with `text/plain` or `text/html`.
    pub fn new(body: &'a str, content_type_is_json: bool, page_url: &'a Url) -> Self {
        Document::of(Cow::Borrowed(body), content_type_is_json, Cow::Borrowed(page_url))
    }

    /// A page that owns its body and URL: one that must outlive the borrow it came from
    /// (a script's query function keeps it for the length of a call).
    pub fn owned(body: String, content_type_is_json: bool, page_url: Url) -> Document<'static> {
        Document::of(Cow::Owned(body), content_type_is_json, Cow::Owned(page_url))
    }

    fn of(body: Cow<'a, str>, is_json: bool, url: Cow<'a, Url>) -> Self {
        Document {
            body,
            is_json,
            url,
            html: OnceCell::new(),
            xpath: OnceCell::new(),
            json: OnceCell::new(),
            base: OnceCell::new(),
            too_deep: OnceCell::new(),
            budget: Budget::new(EXTRACT_BUDGET),
        }
    }

    /// The same page with `budget` for all the extraction done on it, in place of
    /// [`EXTRACT_BUDGET`]. The clock starts at the first extraction.
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = Budget::new(budget);
        self
    }

    pub(super) fn budget(&self) -> &Budget {
        &self.budget
    }

    /// An error when the page nests deeper than [`MAX_DEPTH`]; a DOM is not built for it.
    pub(super) fn check_depth(&self) -> Result<(), ExtractError> {
        let too_deep =
            *self.too_deep.get_or_init(|| super::depth::deeper_than(self.body.as_bytes(), MAX_DEPTH));
        if too_deep { Err(ExtractError::TooDeep { limit: MAX_DEPTH }) } else { Ok(()) }
    }

    /// Records that the streaming walk found the page too deep (no need to measure again).
    pub(super) fn set_too_deep(&self) {
        let _ = self.too_deep.set(true);
    }

    /// The page's body as text.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The page's URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether the response is JSON (CSS and XPath selectors find nothing in it).
    pub fn is_json(&self) -> bool {
        self.is_json
    }

    /// The CSS DOM. Parsing HTML fails only for a page too deep; a JSON response has no DOM.
    pub(super) fn html(&self) -> Result<&Html, Unusable> {
        if self.is_json {
            return Err(Unusable::Issue("css selectors do not apply to a JSON response".to_owned()));
        }
        if let Some(html) = self.html.get() {
            return Ok(html);
        }
        self.check_depth()?;
        let html = self.html.get_or_init(|| Html::parse_document(&self.body));
        self.budget.check()?;
        Ok(html)
    }

    /// The XPath tree, parsed on first use.
    pub(super) fn xpath_tree(&self) -> Result<&XpathItemTree, Unusable> {
        if self.is_json {
            return Err(Unusable::Issue("xpath selectors do not apply to a JSON response".to_owned()));
        }
        if self.xpath.get().is_none() {
            self.check_depth()?;
        }
        let tree = self
            .xpath
            .get_or_init(|| {
                skyscraper::html::parse(&self.body)
                    .map_err(|e| format!("the page does not parse for XPath: {e}"))
            })
            .as_ref()
            .map_err(|e| Unusable::Issue(e.clone()))?;
        self.budget.check()?;
        Ok(tree)
    }

    /// The body as JSON, parsed on first use.
    pub(super) fn json(&self) -> Result<&Value, String> {
        self.json
            .get_or_init(|| {
                serde_json::from_str(&self.body).map_err(|e| format!("the body is not JSON: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The URL `dig` values resolve against: the first `<base href>` of an HTML page (resolved
    /// against the page URL, as browsers and the link extractor do), else the page URL.
    pub(super) fn base(&self) -> &Url {
        self.base.get_or_init(|| {
            let Ok(html) = self.html() else {
                return self.url.as_ref().clone();
            };
            let selector = scraper::Selector::parse("base[href]").expect("a valid built-in selector");
            html.select(&selector)
                .next()
                .and_then(|base| base.value().attr("href"))
                .and_then(|href| self.url.join(href.trim()).ok())
                .unwrap_or_else(|| self.url.as_ref().clone())
        })
    }
}
