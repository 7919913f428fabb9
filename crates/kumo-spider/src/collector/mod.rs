//! A Colly-style collector: callbacks on responses, on HTML elements by CSS selector, on error
//! responses and after a page is scraped, with request-scoped typed context.
//!
//! ```
//! use kumo_spider::Collector;
//!
//! let c = Collector::new()
//!     .on_html("div.quote", |el, ctx| {
//!         let text = el.select_text("span.text").unwrap_or_default();
//!         ctx.emit(kumo_core::Item::new().with("text", text));
//!     })
//!     .on_html("li.next > a[href]", |el, ctx| {
//!         if let Some(href) = el.attr("href") {
//!             ctx.visit(href);
//!         }
//!     });
//! # let _ = c;
//! ```
//!
//! The collector is an [`Analyzer`]: each response is parsed inside the engine's (synchronous)
//! analyze call — scraper's DOM is not `Send`, so it never crosses an await — and the
//! callbacks run there, in registration order. Callbacks are `Fn + Send + Sync`: state they
//! change lives behind a `Mutex` or an atomic.

mod context;
mod element;

use kumo_core::Response;
use kumo_engine::{Analysis, Analyzer};

pub use context::Ctx;
pub use element::Element;

type HtmlFn = Box<dyn Fn(&Element<'_>, &mut Ctx<'_>) + Send + Sync>;
type ResponseFn = Box<dyn Fn(&Response, &mut Ctx<'_>) + Send + Sync>;

/// A bad selector given to [`Collector::try_on_html`].
#[derive(Debug, thiserror::Error)]
#[error("bad CSS selector {selector:?}: {message}")]
pub struct SelectorError {
    pub selector: String,
    pub message: String,
}

/// Callbacks by kind, run on every response (see the module docs).
#[derive(Default)]
pub struct Collector {
    html: Vec<(scraper::Selector, HtmlFn)>,
    response: Vec<ResponseFn>,
    error: Vec<ResponseFn>,
    scraped: Vec<ResponseFn>,
}

impl Collector {
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

    /// Calls `f` after the HTML callbacks of a page.
    pub fn on_scraped(mut self, f: impl Fn(&Response, &mut Ctx<'_>) + Send + Sync + 'static) -> Self {
        self.scraped.push(Box::new(f));
        self
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
        if resp.is_html() && !self.html.is_empty() {
            let doc = scraper::Html::parse_document(&resp.text());
            for (sel, f) in &self.html {
                for el in doc.select(sel) {
                    f(&Element::new(el), &mut ctx);
                }
            }
        }
        self.scraped.iter().for_each(|f| f(resp, &mut ctx));
        ctx.into_analysis()
    }
}
