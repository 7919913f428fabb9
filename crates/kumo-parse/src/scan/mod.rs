//! The link scan: one pass over a page's bytes that finds where its links, first `<base href>`
//! and first `<title>` are, without building a tree or even full tokens.
//!
//! It follows the HTML tokenizer wherever that decides what is a tag: comments, doctypes,
//! CDATA in SVG and MathML, attribute quoting, raw-text and RCDATA elements, script data with
//! its escapes, `<plaintext>`. Of tree construction it keeps only the namespace changes that
//! decide those (see [`tree`]). Everything else about a tag is skipped over. Scripting is off,
//! as for any client that runs no scripts, so links inside `<noscript>` are found.
//!
//! Why not lol_html, which kumo used before: its selector engine keeps a stack of every open
//! element, with hash-map updates per tag, to support combinators a link scan never asks for.
//! That stack was about a third of lol_html's time on the crawl's hot path; this scan measured
//! several times faster on the benchmark pages (`cargo bench -p kumo-parse --bench links`).

pub(crate) mod tag;
pub(crate) mod text;
pub(crate) mod tree;

#[cfg(test)]
mod oracle;

use std::ops::Range;

use memchr::memchr;

use self::tag::{End, Wanted};
use self::tree::{ForeignAttrs, Text, Tree};
use crate::title;

/// What the scan records, as byte ranges of the input.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Link values (`<a href>`, `<area href>`, `<iframe src>`, `<frame src>`,
    /// `<link rel=next href>`), in document order.
    pub(crate) hrefs: Vec<Range<usize>>,
    /// The first `<base href>` value.
    pub(crate) base: Option<Range<usize>>,
    /// The raw text of the first `<title>`.
    ///
    /// An SVG `<title>` before the document's counts too: telling them apart needs to know the
    /// namespace of the `<title>` element and a page with an inline SVG in its `<head>` or no
    /// title of its own, which is rare enough not to matter for a crawl record.
    pub(crate) title: Option<Range<usize>>,
}

/// Scans `input`, HTML in an ASCII-compatible encoding.
pub(crate) fn scan(input: &[u8]) -> Scan {
    let mut scan = Scan { hrefs: Vec::with_capacity(64), ..Scan::default() };
    let mut tree = Tree::default();
    let mut i = 0;
    while let Some(at) = input.get(i..).and_then(|rest| memchr(b'<', rest)) {
        let lt = i + at;
        i = match input.get(lt + 1) {
            Some(b'!') => text::markup_declaration(input, lt + 2, tree.in_foreign()),
            Some(b'/') => end_tag(input, lt + 2, &mut tree),
            Some(b'?') => text::bogus_comment(input, lt + 1),
            Some(c) if c.is_ascii_alphabetic() => start_tag(input, lt + 1, &mut tree, &mut scan),
            _ => lt + 1,
        };
    }
    scan
}

/// After `</`: an end tag, `</>` (nothing), or a bogus comment.
fn end_tag(input: &[u8], from: usize, tree: &mut Tree) -> usize {
    match input.get(from) {
        Some(c) if c.is_ascii_alphabetic() => {
            let (name, after) = tag::name(input, from);
            match tag::attributes::<0>(input, after, None) {
                Some(End { at, .. }) => {
                    tree.end_tag(name.get());
                    at
                }
                None => input.len(),
            }
        }
        Some(b'>') => from + 1,
        Some(_) => text::bogus_comment(input, from),
        None => input.len(),
    }
}

/// A start tag whose name begins at `from`: records what it holds of interest, updates the
/// namespace, and skips the raw text after it if it has any.
fn start_tag(input: &[u8], from: usize, tree: &mut Tree, scan: &mut Scan) -> usize {
    let (name, after) = tag::name(input, from);
    let name = name.get();
    let mut foreign = ForeignAttrs::default();
    let end = match name {
        b"a" | b"area" | b"base" => {
            let mut want = Wanted::new([b"href".as_slice()]);
            let end = tag::attributes(input, after, Some(&mut want));
            if let (Some(_), [Some(href)]) = (&end, want.values) {
                if name != b"base" {
                    scan.hrefs.push(href);
                } else if scan.base.is_none() {
                    scan.base = Some(href);
                }
            }
            end
        }
        b"iframe" | b"frame" => {
            let mut want = Wanted::new([b"src".as_slice()]);
            let end = tag::attributes(input, after, Some(&mut want));
            if let (Some(_), [Some(src)]) = (&end, want.values) {
                scan.hrefs.push(src);
            }
            end
        }
        b"link" => {
            let mut want = Wanted::new([b"rel".as_slice(), b"href"]);
            let end = tag::attributes(input, after, Some(&mut want));
            if let (Some(_), [Some(rel), Some(href)]) = (&end, want.values) {
                let rel = &input[rel];
                if rel.split(|&c| tag::is_space(c)).any(|token| token.eq_ignore_ascii_case(b"next")) {
                    scan.hrefs.push(href);
                }
            }
            end
        }
        b"font" | b"annotation-xml" if tree.in_foreign() => {
            let mut want = Wanted::new([b"color".as_slice(), b"face", b"size", b"encoding"]);
            let end = tag::attributes(input, after, Some(&mut want));
            let [color, face, size, encoding] = want.values;
            foreign.font_leaves = color.is_some() || face.is_some() || size.is_some();
            foreign.html_annotation = encoding.is_some_and(|e| {
                let e = &input[e];
                e.eq_ignore_ascii_case(b"text/html") || e.eq_ignore_ascii_case(b"application/xhtml+xml")
            });
            end
        }
        _ => tag::attributes::<0>(input, after, None),
    };
    let Some(End { at, self_closing }) = end else {
        return input.len();
    };
    if name == b"title" && scan.title.is_none() {
        scan.title = Some(title::text_range(input, at));
    }
    match tree.start_tag(name, self_closing, &foreign) {
        Text::Data => at,
        Text::RawUntilEndTag => text::raw_text(input, at, name),
        Text::Script => text::script(input, at),
        Text::Plain => input.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The link values found in `html`, as strings.
    fn links(html: &str) -> Vec<&str> {
        scan(html.as_bytes()).hrefs.into_iter().map(|r| &html[r]).collect()
    }

    #[test]
    fn every_kind_of_link() {
        let html = r#"<a href="a"><area href=b><iframe src='c'></iframe><frame src=d>
            <link rel="stylesheet" href=no><link rel="prev NEXT" href=e><link href=f rel=next>
            <img src=no><A HREF=g><a name=x>"#;
        assert_eq!(links(html), ["a", "b", "c", "d", "e", "f", "g"]);
    }

    #[test]
    fn the_first_base_with_an_href_and_the_first_title() {
        let html = "<base target=x><base href=one><base href=two><title>T &amp; U</title><title>no</title>";
        let s = scan(html.as_bytes());
        assert_eq!(s.base.map(|r| &html[r]), Some("one"));
        assert_eq!(s.title.map(|r| &html[r]), Some("T &amp; U"));
    }

    #[test]
    fn no_links_inside_comments_or_raw_text() {
        let html = r#"<!-- <a href=1> --><script>"<a href=2>"</script><style><a href=3></style>
            <textarea><a href=4></textarea><title><a href=5></title><noembed><a href=6></noembed>
            <iframe><a href=7></iframe><xmp><a href=8></xmp><?x <a href=9>?><!x <a href=10>>
            </p <a href=11>><a href=ok>"#;
        assert_eq!(links(html), ["ok"]);
    }

    #[test]
    fn links_inside_noscript_are_found() {
        let html = "<head><noscript><link rel=next href=n1></noscript></head>\
                    <body><noscript><a href=n2><style>x</style></noscript><a href=n3>";
        assert_eq!(links(html), ["n1", "n2", "n3"]);
    }

    #[test]
    fn script_escapes() {
        let html = "<script><!--<script></script><a href=1>--></script><a href=ok>";
        assert_eq!(links(html), ["ok"]);
        let html = "<script><!--</script><a href=ok>";
        assert_eq!(links(html), ["ok"]);
    }

    #[test]
    fn cdata_only_in_foreign_content() {
        assert_eq!(links("<svg><![CDATA[<a href=1>]]></svg><a href=ok>"), ["ok"]);
        // Outside SVG and MathML it is a bogus comment, ended by the first `>`.
        assert_eq!(links("<![CDATA[x<a href=1>]]><a href=ok>"), ["ok"]);
        assert_eq!(links("<svg><style><a href=in-svg></style></svg>"), ["in-svg"]);
        assert_eq!(
            links("<svg><foreignObject><style><a href=1></style></foreignObject></svg>"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn plaintext_ends_all_tags() {
        assert_eq!(links("<a href=ok><plaintext><a href=1>"), ["ok"]);
    }

    #[test]
    fn a_tag_cut_off_at_the_end_is_dropped() {
        assert_eq!(links("<a href=ok><a href=cut"), ["ok"]);
        assert_eq!(links("<a href=ok></a"), ["ok"]);
        assert_eq!(links("<a href=ok><"), ["ok"]);
    }

    #[test]
    fn lone_angle_brackets_are_text() {
        assert_eq!(links("1 < 2 <> <3 </> <a href=ok>"), ["ok"]);
    }
}
