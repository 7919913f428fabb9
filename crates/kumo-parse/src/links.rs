//! The streaming link extractor: one lol_html pass over the page, no DOM.
//!
//! Handlers only record *where* each `href`/`src` value sits in the input (byte ranges that
//! lol_html reports), so scanning allocates nothing per link; [`resolve`](crate::resolve) reads
//! the values afterwards, once the first `<base href>` of the whole document is known (the
//! standard applies it to links before it, too).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::LazyLock;

use encoding_rs::Encoding;
use lol_html::errors::SelectorError;
use lol_html::html_content::{Element, TextChunk};
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};
use url::Url;

use crate::entities::{self, Context};
use crate::issue::{Issue, Issues};
use crate::resolve::{self, Page};

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
    let scan = match &*SELECTORS {
        Ok(selectors) => scan(input, input_encoding, selectors, &mut issues),
        // Unreachable with the constant selectors (a unit test parses them), but not worth a
        // panic on a crawler's hot path.
        Err(e) => {
            issues.push(|| Issue::Selector(*e));
            Scan::default()
        }
    };
    let page = Page {
        input,
        input_encoding: input_encoding.into(),
        page_encoding,
        url: page_url,
    };
    let links = resolve::resolve(&page, scan.base, &scan.hrefs, &mut issues);
    let title = scan.title.finish();
    PageLinks {
        links,
        title,
        issues: issues.into_vec(),
    }
}

/// The selectors, parsed once per process.
struct Selectors {
    /// Elements whose `href` is a link.
    hrefs: Selector,
    /// Elements whose `src` is a link.
    srcs: Selector,
    /// `<link>`s, kept only with `rel` containing `next`.
    link: Selector,
    base: Selector,
    title: Selector,
}

static SELECTORS: LazyLock<Result<Selectors, SelectorError>> = LazyLock::new(|| {
    Ok(Selectors {
        hrefs: "a[href], area[href]".parse()?,
        srcs: "iframe[src], frame[src]".parse()?,
        link: "link[href][rel]".parse()?,
        base: "base[href]".parse()?,
        title: "title".parse()?,
    })
});

/// What the handlers record during the pass.
#[derive(Default)]
struct Scan {
    /// Byte ranges of link values in `input`, in document order.
    hrefs: Vec<Range<usize>>,
    /// The first `<base href>` value.
    base: Option<Range<usize>>,
    title: TitleCapture,
}

/// The text of the first `<title>`.
///
/// lol_html reports an SVG `<title>` (an HTML integration point) in the HTML namespace, so an
/// inline SVG's title that comes before the document's counts as the title. Telling them apart
/// would take a descendant selector on every page for a case that needs an SVG in the `<head>`
/// or a page without a real title.
#[derive(Default)]
struct TitleCapture {
    raw: String,
    /// `<title>` start tags seen so far.
    seen: u32,
    /// Inside the first one, until its text node ends.
    capturing: bool,
}

impl TitleCapture {
    fn finish(self) -> Option<String> {
        let mut decoded = String::new();
        let text = entities::decode(&self.raw, Context::Text, &mut decoded);
        let title = entities::collapse_whitespace(text);
        (!title.is_empty()).then_some(title)
    }
}

/// Runs lol_html over `input`, recording link positions, the first base and the title.
fn scan(
    input: &[u8],
    encoding: AsciiCompatibleEncoding,
    selectors: &Selectors,
    issues: &mut Issues,
) -> Scan {
    let state = RefCell::new(Scan {
        hrefs: Vec::with_capacity(64),
        ..Scan::default()
    });
    let on_href = |el: &mut Element<'_, '_>| {
        if let Some(value) = attribute(el, input, b"href") {
            state.borrow_mut().hrefs.push(value);
        }
        Ok(())
    };
    let on_src = |el: &mut Element<'_, '_>| {
        if let Some(value) = attribute(el, input, b"src") {
            state.borrow_mut().hrefs.push(value);
        }
        Ok(())
    };
    let on_link = |el: &mut Element<'_, '_>| {
        let is_next = attribute(el, input, b"rel")
            .and_then(|rel| input.get(rel))
            .is_some_and(|rel| {
                rel.split(u8::is_ascii_whitespace)
                    .any(|token| token.eq_ignore_ascii_case(b"next"))
            });
        if is_next && let Some(value) = attribute(el, input, b"href") {
            state.borrow_mut().hrefs.push(value);
        }
        Ok(())
    };
    let on_base = |el: &mut Element<'_, '_>| {
        let mut state = state.borrow_mut();
        if state.base.is_none() {
            state.base = attribute(el, input, b"href");
        }
        Ok(())
    };
    let on_title = |_: &mut Element<'_, '_>| {
        let title = &mut state.borrow_mut().title;
        title.capturing = title.seen == 0;
        title.seen += 1;
        Ok(())
    };
    let on_title_text = |chunk: &mut TextChunk<'_>| {
        let title = &mut state.borrow_mut().title;
        if title.capturing {
            title.raw.push_str(chunk.as_str());
            title.capturing = !chunk.last_in_text_node();
        }
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
        .append_element_content_handler(handler(&selectors.hrefs, on_href))
        .append_element_content_handler(handler(&selectors.srcs, on_src))
        .append_element_content_handler(handler(&selectors.link, on_link))
        .append_element_content_handler(handler(&selectors.base, on_base))
        .append_element_content_handler((
            Cow::Borrowed(&selectors.title),
            ElementContentHandlers::default()
                .element(on_title)
                .text(on_title_text),
        ));
    // The rewritten output is not wanted: a no-op sink.
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // After an error the rewriter is poisoned and must not be ended.
    let result = match rewriter.write(input) {
        Ok(()) => rewriter.end(),
        Err(e) => {
            // Ends the handlers' borrows of `state` either way.
            drop(rewriter);
            Err(e)
        }
    };
    if let Err(e) = result {
        issues.push(|| Issue::Rewriter(e));
    }
    state.into_inner()
}

fn handler<'s, 'h>(
    selector: &'s Selector,
    on_element: impl FnMut(&mut Element<'_, '_>) -> lol_html::HandlerResult + 'h,
) -> (Cow<'s, Selector>, ElementContentHandlers<'h>) {
    (
        Cow::Borrowed(selector),
        ElementContentHandlers::default().element(on_element),
    )
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
    fn built_in_selectors_parse() {
        assert!(SELECTORS.is_ok(), "{:?}", SELECTORS.as_ref().err());
    }
}
