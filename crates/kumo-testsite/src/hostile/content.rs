//! Bodies of the hostile site's odd pages: malformed HTML, charsets, bad links, bombs.

use bytes::Bytes;

/// Decompression bombs: each expands to 11.5 MB, past the usual 10 MiB body cap.
pub(crate) const BOMBS: [(&str, &[u8]); 3] = [
    ("gzip", include_bytes!("../../../../testdata/compressed/bomb-gzip.bin")),
    ("br", include_bytes!("../../../../testdata/compressed/bomb-br.bin")),
    ("zstd", include_bytes!("../../../../testdata/compressed/bomb-zstd.bin")),
];

/// A page nested 100 000 `<div>`s deep, never closed.
pub(crate) fn deep_nesting() -> Bytes {
    let mut html = String::from("<!DOCTYPE html><title>Deep</title>");
    html.push_str(&"<div>".repeat(100_000));
    html.push_str("bottom");
    Bytes::from(html)
}

/// NUL bytes in text, in a tag name and in an attribute.
pub(crate) fn nul_bytes() -> Bytes {
    Bytes::from_static(b"<!DOCTYPE html><title>N\0ul</title><p>a\0b</p><d\0iv class=\"x\0y\">c</div>\n")
}

/// Declared UTF-8, with bytes that are not UTF-8 at all.
pub(crate) fn invalid_utf8() -> Bytes {
    Bytes::from_static(
        b"<!DOCTYPE html><meta charset=utf-8><title>Bad \xff\xfe bytes \xc3</title><p>\x80\x81</p>\n",
    )
}

/// `head`, then `title` (bytes in the page's own encoding) as the `<title>`, then `tail`.
fn titled(head: &[u8], title: &[u8], tail: &[u8]) -> Bytes {
    Bytes::from([head, b"<title>", title, b"</title>", tail].concat())
}

/// Shift_JIS, declared only in a `<meta>`: the title is 日本語.
pub(crate) fn meta_shift_jis() -> Bytes {
    titled(
        b"<!DOCTYPE html><html><head><meta charset=\"Shift_JIS\">",
        &[0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA],
        b"</head><body><p>x</p></body></html>\n",
    )
}
pub(crate) const SHIFT_JIS_TITLE: &str = "日本語";

/// windows-1251, declared only in the header: the title is Привет.
pub(crate) fn windows_1251() -> Bytes {
    titled(b"<!DOCTYPE html>", &[0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2], b"<p>x</p>\n")
}
pub(crate) const WINDOWS_1251_TITLE: &str = "Привет";

/// UTF-8 with a byte-order mark, under a header that wrongly says ISO-8859-1: the mark wins.
pub(crate) fn bom_against_header() -> Bytes {
    titled(b"\xEF\xBB\xBF<!DOCTYPE html>", BOM_TITLE.as_bytes(), b"<p>x</p>\n")
}
pub(crate) const BOM_TITLE: &str = "Café ☕";

/// Links no crawler may follow or choke on. `other_host` is a host outside the crawl.
pub(crate) fn bad_hrefs(other_host: &str) -> Bytes {
    let hrefs = [
        "http://[::1".to_owned(),
        "http://exa mple.com/".to_owned(),
        "https://%zz/".to_owned(),
        "http://127.0.0.1:99999/".to_owned(),
        "   ".to_owned(),
        "javascript&colon;alert(1)".to_owned(),
        "jav&#x09;ascript:alert(1)".to_owned(),
        "data:text/html;base64,PHA+eDwvcD4=".to_owned(),
        "file:///etc/passwd".to_owned(),
        "ftp://127.0.0.1/x".to_owned(),
        "\\\\server\\share".to_owned(),
        format!("//{other_host}/protocol-relative.html"),
        "http://".to_owned(),
        "?".to_owned(),
    ];
    let mut html = String::from("<!DOCTYPE html><title>Bad links</title><ul>\n");
    for h in hrefs {
        html.push_str("<li><a href=\"");
        html.push_str(&h);
        html.push_str("\">x</a></li>\n");
    }
    html.push_str("<base href=\"http://[::1\"><a href=\"after-bad-base.html\">y</a></ul>\n");
    Bytes::from(html)
}

/// A page of `n` bytes of text, for bodies that break part of the way through.
pub(crate) fn filler_page(title: &str, n: usize) -> Bytes {
    Bytes::from(format!("<!DOCTYPE html><title>{title}</title><p>{}</p>\n", "lorem ".repeat(n / 6)))
}

/// A robots.txt of about 600 KB: the rules at its top apply, the filler runs past the 500 KiB
/// that RFC 9309 asks crawlers to read, and a rule after the filler may be ignored.
pub(crate) fn huge_robots() -> Bytes {
    let mut r = String::from("User-agent: *\nDisallow: /huge-private/\n");
    // Bounded: 600 KB of comments.
    while r.len() < 600_000 {
        r.push_str("# filler filler filler filler filler filler filler filler filler filler\n");
    }
    r.push_str("Disallow: /beyond-the-limit/\n");
    Bytes::from(r)
}
