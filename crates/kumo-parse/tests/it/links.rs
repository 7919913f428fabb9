//! Behaviour of `extract_links` on small hand-written pages: what counts as a link, how it is
//! resolved, and what malformed input still yields.

use encoding_rs::{Encoding, ISO_2022_JP, SHIFT_JIS, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};
use kumo_parse::{PageLinks, extract_links};
use url::Url;

const PAGE: &str = "http://example.com/dir/page.html";

fn run(html: &str) -> PageLinks {
    run_bytes(html.as_bytes(), UTF_8)
}

fn run_bytes(html: &[u8], encoding: &'static Encoding) -> PageLinks {
    let page = Url::parse(PAGE).expect("valid page URL");
    extract_links(html, &page, encoding)
}

fn links(found: &PageLinks) -> Vec<&str> {
    found.links.iter().map(Url::as_str).collect()
}

#[test]
fn relative_links_resolve_against_the_page() {
    let found = run(r#"<a href="a.html">a</a><a href="/b">b</a><a href="../c?x=1">c</a>
        <a href="//other.example/d">d</a><a href="https://secure.example/">e</a>"#);
    assert_eq!(
        links(&found),
        [
            "http://example.com/dir/a.html",
            "http://example.com/b",
            "http://example.com/c?x=1",
            "http://other.example/d",
            "https://secure.example/",
        ]
    );
    assert!(found.issues.is_empty());
}

#[test]
fn base_href_is_relative_to_the_page_and_applies_to_the_whole_document() {
    let found = run(r#"<html><head><title>t</title></head><body>
        <a href="before.html">before the base</a>
        <base href="../other/sub/">
        <base href="http://ignored.example/">
        <a href="x.html">x</a><a href="/root">root</a></body>"#);
    assert_eq!(
        links(&found),
        [
            "http://example.com/other/sub/before.html",
            "http://example.com/other/sub/x.html",
            "http://example.com/root",
        ]
    );
}

#[test]
fn base_without_href_is_skipped_and_a_broken_base_falls_back() {
    let found = run(r#"<base target="_blank"><base href="http://[oops/"><a href="x">x</a>"#);
    assert_eq!(links(&found), ["http://example.com/dir/x"]);
    assert_eq!(found.issues.len(), 1, "{:?}", found.issues);
    assert!(found.issues[0].contains("base"), "{:?}", found.issues);
}

#[test]
fn link_elements_beyond_anchors() {
    let found = run(r#"<head>
        <link rel="stylesheet" href="style.css">
        <link rel="prev" href="p1.html">
        <link rel="Next" href="p3.html">
        <link rel="alternate next" href="p3-alt.html">
        <link rel="nextpage" href="nope.html">
        <link href="no-rel.html">
        </head><body>
        <map><area href="area.html" alt=""><area nohref alt=""></map>
        <iframe src="frame1.html"></iframe>
        <frameset><frame src="frame2.html"></frameset>
        <img src="img.png"><script src="app.js"></script><a name="anchor-only">x</a>
        </body>"#);
    assert_eq!(
        links(&found),
        [
            "http://example.com/dir/p3.html",
            "http://example.com/dir/p3-alt.html",
            "http://example.com/dir/area.html",
            "http://example.com/dir/frame1.html",
            "http://example.com/dir/frame2.html",
        ]
    );
}

#[test]
fn non_navigable_schemes_and_pure_fragments_are_skipped() {
    let found = run("<a href=\"javascript:void(0)\">j</a><a href=\"  JavaScript:alert(1)\">j</a>\
         <a href=\"java\tscript:alert(1)\">j</a><a href=\"javascript&colon;alert(1)\">j</a>\
         <a href=\"&#106;avascript&#x3A;alert(1)\">j</a><a href=\"mailto:a@example.com\">m</a>\
         <a href=\"MAILTO:b@example.com\">m</a><a href=\"data:text/html,hi\">d</a>\
         <a href=\"tel:+15551234\">t</a><a href=\"#top\">f</a><a href=\"#\">f</a>\
         <a href=\"\">empty</a><a href=\"   \">blank</a><a href>none</a>\
         <a href=\"ftp://files.example/x\">kept: scope is not our job</a>");
    assert_eq!(links(&found), ["ftp://files.example/x"]);
    assert!(found.issues.is_empty(), "{:?}", found.issues);
}

#[test]
fn fragments_are_stripped_and_duplicates_dropped_in_first_seen_order() {
    let found = run(r#"<a href="b.html#one">1</a><a href="a.html">2</a><a href="b.html#two">3</a>
        <a href="b.html">4</a><a href="./a.html#x">5</a><a href="http://example.com/dir/b.html#">6</a>
        <a href="c.html?q=1#frag">7</a><a href=" a.html ">8</a>"#);
    assert_eq!(
        links(&found),
        [
            "http://example.com/dir/b.html",
            "http://example.com/dir/a.html",
            "http://example.com/dir/c.html?q=1",
        ]
    );
}

#[test]
fn character_references_in_hrefs_are_decoded() {
    let found = run(r#"<a href="/s?a=1&amp;b=2">1</a><a href="/s?a=1&copy=2">2</a>
        <a href="&#x2F;slash&#47;ed">3</a>"#);
    assert_eq!(
        links(&found),
        ["http://example.com/s?a=1&b=2", "http://example.com/s?a=1&copy=2", "http://example.com/slash/ed",]
    );
}

#[test]
fn title_has_entities_decoded_and_whitespace_collapsed() {
    let found = run("<html><head><title>\n  Fish &amp; Chips &#8211;\n\t&quot;Best&quot;&nbsp;in \
                     town  </title><title>second</title></head></html>");
    assert_eq!(found.title.as_deref(), Some("Fish & Chips \u{2013} \"Best\"\u{a0}in town"));
    // Markup inside <title> is text.
    let found = run("<title>a <b>bold</b> claim</title><body><svg><title>icon</title></svg>");
    assert_eq!(found.title.as_deref(), Some("a <b>bold</b> claim"));
    assert_eq!(run("<title>  </title>").title, None);
    assert_eq!(run("<p>no title</p>").title, None);
    // An empty first title is still the title; later ones do not replace it.
    assert_eq!(run("<title></title><title>late</title>").title, None);
}

#[test]
fn malformed_html_still_yields_its_links() {
    let found = run(concat!(
        "<html><body><div><p>unclosed <b>tags <a href=one.html>one</a>",
        "<a href=two.html?x=1&y=2 class=x>two</a>",
        "<a href='three.html'>three<a href=\"four.html\">four",
        "<table><tr><td><a HREF=FIVE.html>five</td></table>",
        // The unterminated quote swallows markup up to the next '"'; what follows it is junk
        // attributes of the same tag, so six.html is no link (as in a browser).
        "<a href=\"broken.html>text</a><a href=\"six.html\">six</a>",
        "<!-- <a href=commented.html> --><a href=seven.html>seven</a>",
        "</body></html>",
    ));
    assert_eq!(
        links(&found),
        [
            "http://example.com/dir/one.html",
            "http://example.com/dir/two.html?x=1&y=2",
            "http://example.com/dir/three.html",
            "http://example.com/dir/four.html",
            "http://example.com/dir/FIVE.html",
            "http://example.com/dir/broken.html%3Etext%3C/a%3E%3Ca%20href=",
            "http://example.com/dir/seven.html",
        ]
    );
    // A tag cut off by the end of the input is no tag, wherever it stops.
    for tail in ["<a href=", "<a href=two.html", "<a href=\"two.html", "<a href=\"two.html\""] {
        let found = run(&format!("<a href=one.html>one</a>{tail}"));
        assert_eq!(links(&found), ["http://example.com/dir/one.html"], "{tail}");
        assert!(found.issues.is_empty(), "{:?}", found.issues);
    }
    // An unterminated quote that runs to the end of the input swallows the rest.
    let found = run("<a href=one.html>1</a><a href=\"two.html>2</a><a href=three.html>3</a>");
    assert_eq!(links(&found), ["http://example.com/dir/one.html"]);
}

#[test]
fn garbage_never_panics() {
    for input in [
        &b""[..],
        b"\x00\xFF\xFE<<<>>>",
        b"<a href=\"\xFF\xFE\">x</a>",
        b"</a></a><a><a href></a>",
        b"<![CDATA[<a href=x>]]>",
        b"<script><a href='in-script.html'></script><a href=ok.html>",
    ] {
        let found = run_bytes(input, UTF_8);
        assert!(found.links.len() <= 2, "{input:?}: {:?}", found.links);
    }
    // Links inside <script> are text, not links.
    let found = run("<script>var s = '<a href=\"in-script.html\">';</script><a href=ok.html>ok</a>");
    assert_eq!(links(&found), ["http://example.com/dir/ok.html"]);
}

#[test]
fn unparseable_links_become_issues() {
    // The same broken value twice is reported once.
    let found = run(r#"<a href="http://[::1/">v6</a><a href="http://exa mple.com/">space</a>
        <a href="http://ok.example/">ok</a><a href="http://[::1/">again</a>"#);
    assert_eq!(links(&found), ["http://ok.example/"]);
    assert_eq!(found.issues.len(), 2, "{:?}", found.issues);
    assert!(found.issues[0].contains("http://[::1/"), "{:?}", found.issues);

    // A page full of junk keeps a bounded list.
    let junk: String = (0..500).map(|i| format!("<a href=\"http://[{i}\">x</a>")).collect();
    let found = run(&junk);
    assert!(found.links.is_empty());
    assert_eq!(found.issues.len(), 33);
    assert!(found.issues[32].contains("468 more"), "{}", found.issues[32]);
}

#[test]
fn windows_1252_query_is_encoded_in_the_page_encoding() {
    let html = b"<a href=\"/search?q=caf\xE9&amp;lang=fr\">q</a><a href=\"/caf\xE9\">path</a>\
                 <a href=\"/s?q=\x80&r=&#x2192;\">euro, arrow</a>";
    let found = run_bytes(html, WINDOWS_1252);
    assert_eq!(
        links(&found),
        [
            "http://example.com/search?q=caf%E9&lang=fr",
            // paths are always UTF-8
            "http://example.com/caf%C3%A9",
            // '→' has no windows-1252 byte: the URL standard's escaped "&#8594;"
            "http://example.com/s?q=%80&r=%26%238594%3B",
        ]
    );
    // The same characters on a UTF-8 page.
    let found = run("<a href=\"/search?q=café\">q</a>");
    assert_eq!(links(&found), ["http://example.com/search?q=caf%C3%A9"]);
}

#[test]
fn shift_jis_page() {
    let (html, _, _) = SHIFT_JIS.encode("<title>日本語</title><a href=\"/検索?q=東京\">x</a>");
    let found = run_bytes(&html, SHIFT_JIS);
    assert_eq!(found.title.as_deref(), Some("日本語"));
    assert_eq!(links(&found), ["http://example.com/%E6%A4%9C%E7%B4%A2?q=%93%8C%8B%9E"]);
}

#[test]
fn utf16_pages_are_transcoded_and_queries_use_utf8() {
    let text = "<title>Über</title><a href=\"/ü?q=ü\">u</a><a href=\"other.html\">o</a>";
    let want = ["http://example.com/%C3%BC?q=%C3%BC", "http://example.com/dir/other.html"];
    // UTF-16LE with its byte-order mark, UTF-16BE without one.
    let mut le = vec![0xFF, 0xFE];
    le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    for (bytes, encoding) in [(&le, UTF_16LE), (&be, UTF_16BE)] {
        let found = run_bytes(bytes, encoding);
        assert_eq!(links(&found), want, "{}", encoding.name());
        assert_eq!(found.title.as_deref(), Some("Über"), "{}", encoding.name());
    }
}

#[test]
fn iso_2022_jp_is_transcoded_too() {
    let (html, _, _) = ISO_2022_JP.encode("<a href=\"/a?q=東\">x</a>");
    let found = run_bytes(&html, ISO_2022_JP);
    assert_eq!(links(&found), ["http://example.com/a?q=%1B$BEl%1B(B"]);
}
