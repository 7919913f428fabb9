//! A Colly-style collector: callbacks on responses, on HTML elements by CSS selector, on HTML
//! or XML elements by XPath, on error responses and after a page is scraped, with
//! request-scoped typed context.
//!
//! ```
//! use kumo_spider::Collector;
//!
//! let c = Collector::new()
//!     .on_html("div.quote", |el, ctx| {
//!         let text = el.select_text("span.text").unwrap_or_default();
//!         ctx.emit(kumo_core::Item::new().with("text", text));
//!     })
//!     .on_xpath("//li[@class='next']/a[@href]", |a, ctx| {
//!         if let Some(href) = a.attr("href") {
//!             ctx.visit(&href);
//!         }
//!     });
//! # let _ = c;
//! ```
//!
//! The collector is an [`Analyzer`]: each response is parsed inside the engine's (synchronous)
//! analyze call — the parsed pages are not `Send`, so they never cross an await — and the
//! callbacks run there: `on_response`, then `on_html`, then `on_xpath`, then `on_scraped`,
//! each kind in registration order. Callbacks are `Fn + Send + Sync`: state they change lives
//! behind a `Mutex` or an atomic.

mod context;
mod element;
mod xpath;
mod xpath_node;

use std::sync::Arc;

use kumo_core::{Request, Response};
use kumo_engine::{Analysis, Analyzer, Listener};

pub use context::Ctx;
pub use element::Element;
pub use xpath::XPathError;
pub use xpath_node::XPathNode;

type HtmlFn = Box<dyn Fn(&Element<'_>, &mut Ctx<'_>) + Send + Sync>;
type XPathFn = Box<dyn Fn(&XPathNode<'_>, &mut Ctx<'_>) + Send + Sync>;
type ResponseFn = Box<dyn Fn(&Response, &mut Ctx<'_>) + Send + Sync>;
type RequestFn = Arc<dyn Fn(&Request) + Send + Sync>;

/// A bad selector given to [`Collector::try_on_html`].
#[derive(Debug, thiserror::Error)]
#[error("bad CSS selector {selector:?}: {message}")]
pub struct SelectorError {
    /// The selector as given.
    pub selector: String,
    /// What the CSS parser found wrong with it.
    pub message: String,
}

/// Callbacks by kind, run on every response (see the module docs).
#[derive(Default)]
pub struct Collector {
    html: Vec<(scraper::Selector, HtmlFn)>,
    xpath: Vec<(xpath::XPathQuery, XPathFn)>,
    response: Vec<ResponseFn>,
    error: Vec<ResponseFn>,
    scraped: Vec<ResponseFn>,
    request: Vec<RequestFn>,
}

impl Collector {
    /// A collector without callbacks.
    pub fn new() -> Self {
        Collector::default()
    }

    /// Calls `f` for every element matching `css` on every successful HTML page.
    ///
    /// # Panics
    /// When `css` is not a valid selector (a literal in code); see [`Collector::try_on_html`].
    pub fn on_html(self, css: &str, f: impl Fn(&Element<'_>, &mut Ctx<'_>) + Send + Sync + 'static) -> Self {
        match self.try_on_html(css, f) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Collector::on_html`] with the selector error returned.
    pub fn try_on_html(
        mut self,
        css: &str,
        f: impl Fn(&Element<'_>, &mut Ctx<'_>) + Send + Sync + 'static,
    ) -> Result<Self, SelectorError> {
        let sel = scraper::Selector::parse(css)
            .map_err(|e| SelectorError { selector: css.to_string(), message: e.to_string() })?;
        self.html.push((sel, Box::new(f)));
        Ok(self)
    }

    /// Calls `f` for every element `expression` selects on every successful HTML or XML page
    /// (XML as the content type says: `text/xml`, `application/xml`, `+xml` types).
    ///
    /// The expression is XPath 3.1 (kumo-parse's, as in spider files); child queries on the
    /// [`XPathNode`] are relative to it. It must select elements: an expression that selects
    /// attributes, text or values (`//a/@href`, `count(//a)`) calls nothing and is reported in
    /// the page's issues — select the element and read `attr` or `text`, or ask it in a child
    /// query (`node.select_text("count(.//a)")`). XML is read by the same forgiving HTML parser
    /// as XPath fields: element and attribute names are lower-cased, and elements HTML defines
    /// as void (RSS's `<link>`) are empty.
    ///
    /// # Panics
    /// When `expression` does not parse (a literal in code); see [`Collector::try_on_xpath`].
    pub fn on_xpath(
        self,
        expression: &str,
        f: impl Fn(&XPathNode<'_>, &mut Ctx<'_>) + Send + Sync + 'static,
    ) -> Self {
        match self.try_on_xpath(expression, f) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`Collector::on_xpath`] with the expression's error returned, for expressions that
    /// come from outside the code: checked here, never mid-crawl.
    pub fn try_on_xpath(
        mut self,
        expression: &str,
        f: impl Fn(&XPathNode<'_>, &mut Ctx<'_>) + Send + Sync + 'static,
    ) -> Result<Self, XPathError> {
        self.xpath.push((xpath::XPathQuery::parse(expression)?, Box::new(f)));
        Ok(self)
    }

    /// Calls `f` for every successful response, before the HTML callbacks.
    pub fn on_response(mut self, f: impl Fn(&Response, &mut Ctx<'_>) + Send + Sync + 'static) -> Self {
        self.response.push(Box::new(f));
        self
    }

    /// Calls `f` for every response with an error status (4xx, 5xx). Fetch failures never
    /// reach an analyzer; they are in the engine's error stream and summary.
    pub fn on_error(mut self, f: impl Fn(&Response, &mut Ctx<'_>) + Send + Sync + 'static) -> Self {
        self.error.push(Box::new(f));
        self
    }

    /// Calls `f` before each page is fetched (retries included), as Colly's `OnRequest`. It
    /// runs in the downloader: keep it cheap. It takes effect through the listener
    /// [`Collector::request_listener`] gives, which `kumo::Crawler::collector` registers.
    pub fn on_request(mut self, f: impl Fn(&Request) + Send + Sync + 'static) -> Self {
        self.request.push(Arc::new(f));
        self
    }

    /// The engine [`Listener`] that calls the `on_request` callbacks; `None` without any.
    pub fn request_listener(&self) -> Option<Arc<dyn Listener>> {
        (!self.request.is_empty()).then(|| Arc::new(OnRequest(self.request.clone())) as Arc<dyn Listener>)
    }

    /// Calls `f` after the HTML and XPath callbacks of a page.
    pub fn on_scraped(mut self, f: impl Fn(&Response, &mut Ctx<'_>) + Send + Sync + 'static) -> Self {
        self.scraped.push(Box::new(f));
        self
    }
}

/// The `on_request` callbacks, as a listener.
struct OnRequest(Vec<RequestFn>);

impl Listener for OnRequest {
    fn before_fetch(&self, request: &Request) {
        self.0.iter().for_each(|f| f(request));
    }
}

impl Analyzer for Collector {
    fn analyze(&self, resp: &Response) -> Analysis {
        let mut ctx = Ctx::new(resp);
        if resp.status.is_client_error() || resp.status.is_server_error() {
            self.error.iter().for_each(|f| f(resp, &mut ctx));
            return ctx.into_analysis();
        }
        if !resp.status.is_success() {
            return ctx.into_analysis();
        }
        self.response.iter().for_each(|f| f(resp, &mut ctx));
        let html = resp.is_html() && !self.html.is_empty();
        let xml = !self.xpath.is_empty() && xpath::reads(resp);
        if html || xml {
            let body = resp.text();
            if html {
                let doc = scraper::Html::parse_document(&body);
                for (sel, f) in &self.html {
                    for el in doc.select(sel) {
                        f(&Element::new(el), &mut ctx);
                    }
                }
            }
            if xml {
                let page = xpath::XPathPage::new(&body, &resp.url);
                for (query, f) in &self.xpath {
                    for node in page.nodes(query) {
                        f(&node, &mut ctx);
                    }
                }
                ctx.note(page.into_issues());
            }
        }
        self.scraped.iter().for_each(|f| f(resp, &mut ctx));
        ctx.into_analysis()
    }
}
