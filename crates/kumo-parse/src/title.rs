//! The page title: the text of the first `<title>`, read straight from the input bytes.
//!
//! `<title>` content is RCDATA (no tags inside, only character references), so its text runs
//! from the end of the start tag to the first `</title` end tag, which a byte search finds.

use std::ops::Range;

use encoding_rs::Encoding;

use crate::entities::{self, Context};

/// The byte range of a title's raw text, given where its start tag ends in `input`.
pub(crate) fn text_range(input: &[u8], start_tag_end: usize) -> Range<usize> {
    let rest = input.get(start_tag_end..).unwrap_or_default();
    let len = end_tag_at(rest).unwrap_or(rest.len());
    start_tag_end..start_tag_end + len
}

/// Offset of the RCDATA end tag `</title` (followed by whitespace, `/`, `>` or the end).
fn end_tag_at(rest: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = rest.get(from..)?.windows(2).position(|w| w == b"</") {
        let at = from + found;
        let name = rest.get(at + 2..at + 7);
        let after = rest.get(at + 7).copied();
        if name.is_some_and(|n| n.eq_ignore_ascii_case(b"title"))
            && after.is_none_or(|c| matches!(c, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ' | b'/' | b'>'))
        {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

/// The most characters of a title kept in a page record; a longer one is cut there and ends
/// with `…`. A hostile page's megabyte title would otherwise be copied into every output.
pub const TITLE_MAX_CHARS: usize = 1024;

/// Raw bytes read for a title: enough for [`TITLE_MAX_CHARS`] of any encoding, with room for
/// references and runs of whitespace, so a huge title costs no more than a long one.
const TITLE_MAX_RAW: usize = 64 * 1024;

/// The title as `document.title` gives it: references decoded, ASCII whitespace stripped and
/// collapsed, at most [`TITLE_MAX_CHARS`]; `None` when that leaves nothing.
pub(crate) fn finish(raw: &[u8], encoding: &'static Encoding) -> Option<String> {
    let raw = raw.get(..TITLE_MAX_RAW).unwrap_or(raw);
    let (text, _) = encoding.decode_without_bom_handling(raw);
    let mut decoded = String::new();
    let text = entities::decode(&text, Context::Text, &mut decoded);
    let mut title = entities::collapse_whitespace(text);
    if title.char_indices().nth(TITLE_MAX_CHARS).is_some() {
        // Longer than the cap: keep one character less, and the ellipsis.
        let (cut, _) = title.char_indices().nth(TITLE_MAX_CHARS - 1).unwrap_or_default();
        title.truncate(cut);
        title.push('…');
    }
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(html: &str, start_tag_end: usize) -> &str {
        &html[text_range(html.as_bytes(), start_tag_end)]
    }

    #[test]
    fn a_huge_title_is_cut() {
        let huge = "ab ".repeat(400_000);
        let title = finish(huge.as_bytes(), encoding_rs::UTF_8).unwrap();
        assert_eq!(title.chars().count(), TITLE_MAX_CHARS);
        assert!(title.starts_with("ab ab") && title.ends_with('…'));
        let fits = "é".repeat(TITLE_MAX_CHARS);
        assert_eq!(finish(fits.as_bytes(), encoding_rs::UTF_8).unwrap(), fits);
    }

    #[test]
    fn finds_the_end_tag() {
        assert_eq!(raw("<title>a <b> c</title>", 7), "a <b> c");
        assert_eq!(raw("<title>a</TITLE >", 7), "a");
        assert_eq!(raw("<title>a</titles></title>", 7), "a</titles>");
        assert_eq!(raw("<title>a </p> b", 7), "a </p> b");
        assert_eq!(raw("<title>", 7), "");
        assert_eq!(raw("<title>x</title", 7), "x");
    }
}
