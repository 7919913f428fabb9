//! The link extractor: one [`scan`](crate::scan) over the page finds *where* the links, the
//! first `<base href>` and the first title are; [`resolve`](crate::resolve) reads the values
//! afterwards, once the whole document's base URL is known (the standard applies the first
//! `<base href>` to links before it, too). Nothing is allocated per link while scanning.

use encoding_rs::{Encoding, UTF_8};
use url::Url;

use crate::issue::Issues;
use crate::resolve::{self, Page};
use crate::{scan, title};

/// The links and title of one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Absolute URLs without fragments, first-seen order, no duplicates. Not filtered by scheme
    /// or host (scope is the crawler's business) beyond dropping `javascript:`, `mailto:`,
    /// `data:` and `tel:`.
    pub links: Vec<Url>,
    /// The first `<title>`'s text, entities decoded and whitespace collapsed, at most
    /// [`TITLE_MAX_CHARS`](crate::TITLE_MAX_CHARS) (a longer one is cut and ends with `…`);
    /// `None` if absent or blank.
    pub title: Option<String>,
    /// What went wrong without stopping extraction (unparseable links and base URLs).
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
    if encoding.is_ascii_compatible() {
        extract(html, encoding, page_url, encoding)
    } else {
        // The scan reads markup as ASCII bytes; UTF-16 (or ISO-2022-JP) pages are decoded to
        // UTF-8 first. Rare enough that the copy does not matter.
        let (text, _) = encoding.decode_with_bom_removal(html);
        extract(text.as_bytes(), UTF_8, page_url, encoding)
    }
}

fn extract(
    input: &[u8],
    input_encoding: &'static Encoding,
    page_url: &Url,
    page_encoding: &'static Encoding,
) -> PageLinks {
    let mut issues = Issues::default();
    let scan = scan::scan(input);
    let page = Page { input, input_encoding, page_encoding, url: page_url };
    let links = resolve::resolve(&page, scan.base, &scan.hrefs, &mut issues);
    let title =
        scan.title.and_then(|range| input.get(range)).and_then(|raw| title::finish(raw, input_encoding));
    PageLinks { links, title, issues: issues.into_vec() }
}
