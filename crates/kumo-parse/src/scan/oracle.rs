//! The scan checked against lol_html, which did this job before it: on random documents built
//! from the constructs that decide what is a tag, and on every page in the test data,
//! both must find the same link, base and title positions.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use lol_html::html_content::Element;
use lol_html::{ElementContentHandlers, HtmlRewriter, Selector, Settings};
use proptest::prelude::*;

use super::{Scan, scan};
use crate::title;

/// The same record made by lol_html: its element handler sees the tags, and the positions it
/// reports are read back from the input.
fn oracle(input: &[u8]) -> Scan {
    let mut out = Scan::default();
    let selector: Selector = "a, area, iframe, frame, link, base, title".parse().unwrap();
    let on_element = |el: &mut Element<'_, '_>| {
        let value = |name: &str| {
            let attr = el.attributes().iter().find(|a| a.name() == name)?;
            Some(attr.value_source_location().map_or(0..0, |at| at.bytes()))
        };
        match el.tag_name().as_str() {
            "a" | "area" => out.hrefs.extend(value("href")),
            "iframe" | "frame" => out.hrefs.extend(value("src")),
            "link" => {
                let next = value("rel").is_some_and(|rel| {
                    input[rel].split(u8::is_ascii_whitespace).any(|t| t.eq_ignore_ascii_case(b"next"))
                });
                if next {
                    out.hrefs.extend(value("href"));
                }
            }
            "base" if out.base.is_none() => out.base = value("href"),
            "title" if out.title.is_none() => {
                out.title = Some(title::text_range(input, el.source_location().bytes().end));
            }
            _ => {}
        }
        Ok(())
    };
    let settings = Settings::new().with_strict(false).append_element_content_handler((
        Cow::Owned(selector),
        ElementContentHandlers::default().element(on_element),
    ));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(input).unwrap();
    rewriter.end().unwrap();
    out
}

/// Pieces that change what the tokenizer does next. `@` becomes a unique link value.
const PIECES: &[&str] = &[
    "<a href=\"@\">",
    "<a href=@>",
    "<A HREF='@'>",
    "<a href = @ >",
    "<a/href=@/>",
    "<area href=@>",
    "<iframe src=@>",
    "</iframe>",
    "<frame src=\"@\">",
    "<link rel=next href=@>",
    "<link rel=\"a NEXT\" href=@>",
    "<link href=@>",
    "<base href=@>",
    "<base>",
    "<title>",
    "</title>",
    "</TITLE >",
    "<script>",
    "</script>",
    "</script",
    "<script type=x>",
    "<!--",
    "-->",
    "--!>",
    "<!-->",
    "<!--->",
    "-",
    "<style>",
    "</style>",
    "<textarea>",
    "</textarea>",
    "<xmp>",
    "</xmp>",
    "<noembed>",
    "</noembed>",
    "<noframes>",
    "<svg>",
    "</svg>",
    "<math>",
    "</math>",
    "<foreignObject>",
    "</foreignObject>",
    "<desc>",
    "</desc>",
    "<mi>",
    "</mi>",
    "<annotation-xml encoding=\"text/html\">",
    "</annotation-xml>",
    "<![CDATA[",
    "]]>",
    "<p>",
    "</p>",
    "<b>",
    "<br>",
    "</br>",
    "<font color=red>",
    "<font>",
    "<div title=\">\">",
    "<div a\"b=\">\">",
    "<!DOCTYPE html>",
    "<!doctype x \"a>b\">",
    "<?x>",
    "</x>",
    "</>",
    "</1>",
    "<!x>",
    "<",
    ">",
    "\"",
    "'",
    "=",
    "/",
    " ",
    "\n",
    "text",
    "é",
    "<br/>",
    "<img src=@>",
    "<plaintext>",
];

/// A document of up to 40 pieces; at most one `<svg>` or `<math>`, because lol_html leaves
/// nested foreign content one level at a time where the standard leaves it all at once.
fn document() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..40)
        .prop_filter("one foreign root at most", |picks| {
            picks.iter().filter(|&&p| matches!(PIECES[p], "<svg>" | "<math>")).count() <= 1
        })
        .prop_map(|picks| {
            let mut doc = String::new();
            for (n, p) in picks.into_iter().enumerate() {
                doc.push_str(&PIECES[p].replace('@', &format!("v{n}")));
            }
            doc
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn the_scan_agrees_with_lol_html(doc in document()) {
        prop_assert_eq!(scan(doc.as_bytes()), oracle(doc.as_bytes()), "{:?}", doc);
    }
}

/// The test data: `$KUMO_TESTDATA`, else the repository's `testdata/`.
fn testdata() -> PathBuf {
    match std::env::var_os("KUMO_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")),
    }
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "html" || e == "htm") {
            out.push(path);
        }
    }
}

#[test]
fn the_scan_agrees_with_lol_html_on_the_test_pages() {
    let mut files = Vec::new();
    html_files(&testdata(), &mut files);
    assert!(files.len() > 200, "only {} pages under {}", files.len(), testdata().display());
    let mut links = 0;
    for file in files {
        let input = std::fs::read(&file).unwrap();
        let found = scan(&input);
        assert_eq!(found, oracle(&input), "{}", file.display());
        links += found.hrefs.len();
    }
    assert!(links > 4000, "{links} links in all");
}

/// Where the scan differs from lol_html, it follows the standard: checked against html5ever's
/// tree, which implements tree construction in full, with scripting off as for a crawler.
#[test]
fn where_lol_html_differs_the_scan_follows_html5ever() {
    use html5ever::driver::{ParseOpts, parse_document};
    use html5ever::tendril::TendrilSink;
    use html5ever::tree_builder::TreeBuilderOpts;

    let docs = [
        // `<svg/>` holds nothing, so the `<script>` after it is HTML's, with script data inside.
        "<svg/><script><a href=v1></script><a href=v2>",
        "<math/><style><a href=v1></style><a href=v2>",
        // A breakout element leaves every level of foreign content at once.
        "<svg><svg><p><script><a href=v1></script><a href=v2>",
        "<math><svg><b><style><a href=v1></style><a href=v2>",
        "<svg><svg></p><textarea><a href=v1></textarea><a href=v2>",
        // Scripting off: `<noscript>` holds markup (lol_html reads it as raw text).
        "<noscript><a href=v2></noscript>",
        "<head><noscript><a href=v2></noscript></head>",
        "<noscript><style><a href=v1></style></noscript><a href=v2>",
    ];
    let selector = scraper::Selector::parse("a[href]").unwrap();
    let opts = || ParseOpts {
        tree_builder: TreeBuilderOpts { scripting_enabled: false, ..TreeBuilderOpts::default() },
        ..ParseOpts::default()
    };
    for doc in docs {
        let tree = parse_document(scraper::HtmlTreeSink::new(scraper::Html::new_document()), opts()).one(doc);
        let want: Vec<&str> = tree.select(&selector).filter_map(|a| a.value().attr("href")).collect();
        let found: Vec<&str> = scan(doc.as_bytes()).hrefs.into_iter().map(|r| &doc[r]).collect();
        assert_eq!(found, want, "{doc}");
        assert_eq!(want, ["v2"], "{doc}");
    }
}
