//! The streaming link extractor: one lol_html pass over the page, no DOM.
//!
//! The pass only records *where* things are: the byte ranges of link values, of the first
//! `<base href>` and of the first title, as lol_html reports them. Nothing is allocated per link
//! while scanning; [`resolve`](crate::resolve) reads the values afterwards, once the whole
//! document's base URL is known (the standard applies the first `<base href>` to links before
//! it, too).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use encoding_rs::Encoding;
use lol_html::errors::SelectorError;
use lol_html::html_content::Element;
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector, Settings,
};
use url::Url;

use crate::issue::{Issue, Issues};
use crate::resolve::{self, Page};
use crate::title;

/// The links and title of one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Absolute URLs without fragments, first-seen order, no duplicates. Not filtered by scheme
    /// or host (scope is the crawler's business) beyond dropping `javascript:`, `mailto:`,
    /// `data:` and `tel:`.
    pub links: Vec<Url>,
    /// The first `<title>`'s text, entities decoded and whitespace collapsed; `None` if absent
    /// or blank.
    pub title: Option<String>,
    /// What went wrong without stopping extraction (unparseable links, a rewriter error).
    pub issues: Vec<String>,
}

/// Extracts the links of an HTML page: `<a href>`, `<area href>`, `<iframe src>`,
/// `<frame src>` and `<link rel="next" href>`, resolved against the first `<base href>` or
/// `page_url`, plus the page title.
///
/// `encoding` is the page's encoding (see `kumo_core::charset::detect`); it decides how the
/// bytes are read and how query strings are percent-encoded. Never fails: malformed HTML
/// yields whatever links it has, and problems are listed in [`PageLinks::issues`].
pub fn extract_links(html: &[u8], page_url: &Url, encoding: &'static Encoding) -> PageLinks {
    match AsciiCompatibleEncoding::new(encoding) {
        Some(ascii) => extract(html, ascii, page_url, encoding),
        None => {
            // lol_html reads only ASCII-compatible encodings; UTF-16 (or ISO-2022-JP) pages are
            // decoded to UTF-8 first. Rare enough that the copy does not matter.
            let (text, _) = encoding.decode_with_bom_removal(html);
            extract(text.as_bytes(), AsciiCompatibleEncoding::utf_8(), page_url, encoding)
        }
    }
}

fn extract(
    input: &[u8],
    input_encoding: AsciiCompatibleEncoding,
    page_url: &Url,
    page_encoding: &'static Encoding,
) -> PageLinks {
    let mut issues = Issues::default();
    let scan = match &*SELECTOR {
        Ok(selector) => scan(input, input_encoding, selector, &mut issues),
        // Unreachable with the constant selector (a unit test parses it), but not worth a
        // panic on a crawler's hot path.
        Err(e) => {
            issues.push(|| Issue::Selector(*e));
            Scan::default()
        }
    };
    let page = Page { input, input_encoding: input_encoding.into(), page_encoding, url: page_url };
    let links = resolve::resolve(&page, scan.base, &scan.hrefs, &mut issues);
    let title =
        scan.title.and_then(|range| input.get(range)).and_then(|raw| title::finish(raw, page.input_encoding));
    PageLinks { links, title, issues: issues.into_vec() }
}

/// Every element the extractor looks at, in one selector with one handler. Plain tag names
/// (no `[href]` conditions) measured fastest: lol_html decides on the name alone, and the
/// handler reads the attributes it needs anyway.
static SELECTOR: LazyLock<Result<Selector, SelectorError>> =
    LazyLock::new(|| "a, area, iframe, frame, link, base, title".parse());

/// What the pass records, as byte ranges of the input.
#[derive(Default)]
struct Scan {
    /// Link values, in document order.
    hrefs: Vec<Range<usize>>,
    /// The first `<base href>` value.
    base: Option<Range<usize>>,
    /// The raw text of the first `<title>`.
    ///
    /// lol_html reports an SVG `<title>` (an HTML integration point) in the HTML namespace, so
    /// an inline SVG's title that comes before the document's counts as the title. Telling them
    /// apart would take a descendant selector on every page for a case that needs an SVG in the
    /// `<head>` or a page without a real title.
    title: Option<Range<usize>>,
}

impl Scan {
    fn record(&mut self, el: &Element<'_, '_>, input: &[u8]) {
        let tag = el.source_location().bytes();
        // The tag name from the input itself: `Element::tag_name()` allocates a String.
        let name = input
            .get(tag.start + 1..tag.end)
            .map(|t| {
                let len = t
                    .iter()
                    .position(|&c| c.is_ascii_whitespace() || c == b'/' || c == b'>')
                    .unwrap_or(t.len());
                &t[..len]
            })
            .unwrap_or_default();
        let is = |want: &[u8]| name.eq_ignore_ascii_case(want);
        if is(b"a") || is(b"area") {
            self.hrefs.extend(attribute(el, input, b"href"));
        } else if is(b"iframe") || is(b"frame") {
            self.hrefs.extend(attribute(el, input, b"src"));
        } else if is(b"link") {
            let is_next = attribute(el, input, b"rel").and_then(|rel| input.get(rel)).is_some_and(|rel| {
                rel.split(u8::is_ascii_whitespace).any(|token| token.eq_ignore_ascii_case(b"next"))
            });
            if is_next {
                self.hrefs.extend(attribute(el, input, b"href"));
            }
        } else if is(b"base") {
            if self.base.is_none() {
                self.base = attribute(el, input, b"href");
            }
        } else if is(b"title") && self.title.is_none() {
            self.title = Some(title::text_range(input, tag.end));
        }
    }
}

/// Runs lol_html over `input`, recording link positions, the first base and the first title.
fn scan(input: &[u8], encoding: AsciiCompatibleEncoding, selector: &Selector, issues: &mut Issues) -> Scan {
    let mut scan = Scan { hrefs: Vec::with_capacity(64), ..Scan::default() };
    let on_element = |el: &mut Element<'_, '_>| {
        scan.record(el, input);
        Ok(())
    };
    let settings = Settings::new()
        .with_encoding(encoding)
        // Non-strict: markup that is ambiguous without a tree builder is parsed on a best guess
        // instead of aborting the page.
        .with_strict(false)
        // The whole body is written at once, so the parser only buffers an unfinished
        // construct at the very end; no need to preallocate for chunk boundaries.
        .with_memory_settings(MemorySettings::new().with_preallocated_parsing_buffer_size(0))
        .append_element_content_handler((
            Cow::Borrowed(selector),
            ElementContentHandlers::default().element(on_element),
        ));
    // The rewritten output is not wanted: a no-op sink.
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // After an error the rewriter is poisoned and must not be ended.
    let result = match rewriter.write(input) {
        Ok(()) => rewriter.end(),
        Err(e) => {
            // Ends the handler's borrow of `scan` either way.
            drop(rewriter);
            Err(e)
        }
    };
    if let Err(e) = result {
        issues.push(|| Issue::Rewriter(e));
    }
    scan
}

/// The byte range in `input` of the value of `el`'s attribute `name` (ASCII lower case);
/// empty for an attribute without a value. The first of duplicate attributes wins, as in HTML.
///
/// Names are compared on the input bytes at the positions lol_html reports, because its
/// `Attribute::name()` and `get_attribute()` allocate a `String` per call.
fn attribute(el: &Element<'_, '_>, input: &[u8], name: &[u8]) -> Option<Range<usize>> {
    let attr = el.attributes().iter().find(|attr| {
        attr.name_source_location()
            .and_then(|at| input.get(at.bytes()))
            .is_some_and(|n| n.eq_ignore_ascii_case(name))
    })?;
    Some(attr.value_source_location().map_or(0..0, |at| at.bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_selector_parses() {
        assert!(SELECTOR.is_ok(), "{:?}", SELECTOR.as_ref().err());
    }
}
