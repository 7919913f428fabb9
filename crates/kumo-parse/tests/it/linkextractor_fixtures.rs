//! Scrapy's link-extractor fixture pages, with each page's links derived by hand from its HTML.
//!
//! Each page's encoding comes from `kumo_core::charset::detect`, as in the crawler. All four
//! pages carry `<base href='http://example.com'>`, so the page URL only matters where noted.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use kumo_core::charset::{self, Source};
use kumo_parse::{PageLinks, extract_links};
use url::Url;

/// The vectors' folder: under `$KUMO_TESTDATA`, else under the repository's `testdata/`
/// repository.
fn dir() -> std::path::PathBuf {
    let testdata = std::env::var_os("KUMO_TESTDATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")));
    testdata.join("linkextractor")
}

fn page_url() -> Url {
    Url::parse("http://example.com/sample.html").expect("valid page URL")
}

fn read(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Detects the encoding as the crawler would (no Content-Type), checks it, and extracts.
fn extract(name: &str, want: (&'static Encoding, Source)) -> PageLinks {
    let body = read(name);
    let detected = charset::detect(None, &body);
    assert_eq!(detected, want, "{name}: detected encoding");
    extract_links(&body, &page_url(), detected.0)
}

fn strings(found: &PageLinks) -> Vec<&str> {
    found.links.iter().map(Url::as_str).collect()
}

#[test]
fn linkextractor_html() {
    let found = extract("linkextractor.html", (UTF_8, Source::Default));
    assert_eq!(
        strings(&found),
        [
            // <area href='sample1.html'>, against the base http://example.com(/)
            "http://example.com/sample1.html",
            "http://example.com/sample2.html",
            // absolute; then 'sample3.html' twice and 'sample3.html#foo' are the same URL
            "http://example.com/sample3.html",
            "http://www.google.com/something",
            "http://example.com/innertag.html",
            // 'page 4.html': the space is percent-encoded
            "http://example.com/page%204.html",
        ]
    );
    assert_eq!(found.title.as_deref(), Some("Sample page with links for testing LinkExtractor"));
    assert!(found.issues.is_empty(), "{:?}", found.issues);
}

#[test]
fn linkextractor_latin1_html() {
    // The page declares `charset=latin-1`, which is no label in the Encoding Standard (that
    // would be `latin1`), and its bytes are in fact UTF-8: detection settles on UTF-8.
    let found = extract("linkextractor_latin1.html", (UTF_8, Source::Detector));
    assert_eq!(
        strings(&found),
        [
            "http://example.com/sample_%C3%B1.html",
            "http://example.com/sample_%C3%A1.html",
            // 'sample_ö.html?price=£32&µ=unit'
            "http://example.com/sample_%C3%B6.html?price=%C2%A332&%C2%B5=unit",
        ]
    );
    assert!(found.issues.is_empty(), "{:?}", found.issues);
}

#[test]
fn linkextractor_latin1_html_really_in_latin1() {
    // The same page saved as the author meant it, served as ISO-8859-1 (= windows-1252): paths
    // are still UTF-8 percent-encoded, but the query is encoded in the page's encoding.
    let utf8 = String::from_utf8(read("linkextractor_latin1.html")).expect("fixture is UTF-8");
    let (latin1, _, unmappable) = WINDOWS_1252.encode(&utf8);
    assert!(!unmappable);
    let ct = "text/html; charset=iso-8859-1";
    assert_eq!(charset::detect(Some(ct), &latin1), (WINDOWS_1252, Source::Header));
    let found = extract_links(&latin1, &page_url(), WINDOWS_1252);
    assert_eq!(
        strings(&found),
        [
            "http://example.com/sample_%C3%B1.html",
            "http://example.com/sample_%C3%A1.html",
            "http://example.com/sample_%C3%B6.html?price=%A332&%B5=unit",
        ]
    );
}

#[test]
fn linkextractor_noenc_html() {
    // No declaration at all; the non-ASCII bytes are valid UTF-8.
    let found = extract("linkextractor_noenc.html", (UTF_8, Source::Detector));
    assert_eq!(
        strings(&found),
        [
            "http://example.com/sample_%C3%B1.html",
            // 'sample_€.html'
            "http://example.com/sample_%E2%82%AC.html",
        ]
    );
    assert_eq!(found.title.as_deref(), Some("Sample page without encoding for testing LinkExtractor"));
}

#[test]
fn linkextractor_no_href_html() {
    // `<a>Current</a>` has no href and yields nothing.
    let found = extract("linkextractor_no_href.html", (UTF_8, Source::Detector));
    assert_eq!(
        strings(&found),
        [
            "http://example.com/author/Albert-Einstein",
            "http://example.com/page/1/",
            "http://example.com/page/3/",
            "http://example.com/page/4/",
        ]
    );
    assert_eq!(
        found.title.as_deref(),
        Some(
            "Sample page with anchor tags containing no href attribute, to test the \
             TextResponse.follow_all method"
        )
    );
}
