//! Turning a page's raw `href`/`src` values into absolute, fragment-free, de-duplicated URLs,
//! resolved the way a browser resolves them (base URL, entities, the page's query encoding).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::ops::Range;

use encoding_rs::{EncoderResult, Encoding, UTF_8};
use url::Url;

use crate::entities::{self, Context};
use crate::issue::{Issue, Issues, quoted};

/// Schemes whose links lead nowhere a crawler can go.
const NOT_FOLLOWED: [&str; 4] = ["javascript", "mailto", "data", "tel"];

/// Pages with at most this many links de-duplicate by direct comparison, which beats hashing.
const LINEAR_DEDUP_MAX: usize = 32;

/// One page as the resolver reads it.
pub(crate) struct Page<'a> {
    /// The bytes scanned: the body, or its UTF-8 transcoding.
    pub(crate) input: &'a [u8],
    /// The encoding of `input`.
    pub(crate) input_encoding: &'static Encoding,
    /// The encoding the page came in; its output encoding encodes query strings.
    pub(crate) page_encoding: &'static Encoding,
    /// Where the page came from: the base URL unless a `<base href>` says otherwise.
    pub(crate) url: &'a Url,
}

/// Resolves the values at `hrefs` (byte ranges of `page.input`, in document order) against the
/// page's base URL: the first `<base href>` (at `base`) resolved against the page URL, or the
/// page URL itself.
pub(crate) fn resolve(
    page: &Page<'_>,
    base: Option<Range<usize>>,
    hrefs: &[Range<usize>],
    issues: &mut Issues,
) -> Vec<Url> {
    // Browsers encode a link's query string in the page's encoding (UTF-8 for UTF-16 pages);
    // UTF-8 is the url crate's own behaviour, so only legacy encodings need the override.
    let query_encoding = page.page_encoding.output_encoding();
    let encode: &dyn Fn(&str) -> Cow<'_, [u8]> = &|s| encode_query(query_encoding, s);
    let encoding_override = (query_encoding != UTF_8).then_some(encode);
    // One scratch buffer for every value that has character references.
    let mut scratch = String::new();

    let base_url: Cow<'_, Url> = match base.and_then(|r| page.input.get(r)) {
        None => Cow::Borrowed(page.url),
        Some(raw) => {
            let raw = page.input_encoding.decode_without_bom_handling(raw).0;
            let href = entities::decode(&raw, Context::Attribute, &mut scratch).trim_matches(is_space);
            let parsed =
                Url::options().base_url(Some(page.url)).encoding_override(encoding_override).parse(href);
            match parsed {
                Ok(url) => Cow::Owned(url),
                Err(source) => {
                    issues.push(|| Issue::BadBase { href: quoted(href), source });
                    Cow::Borrowed(page.url)
                }
            }
        }
    };
    let options = Url::options().base_url(Some(&base_url)).encoding_override(encoding_override);
    let origin = SameOrigin::of(&base_url);

    let mut links = Vec::with_capacity(hrefs.len());
    // Pages repeat links (navigation, tag lists): a value seen before, byte for byte, resolves
    // to the same URL, so skip it before paying for a parse. Hashing only pays off on big pages.
    let mut seen_raw: HashSet<&[u8]> = HashSet::new();
    for (i, range) in hrefs.iter().enumerate() {
        let Some(raw) = page.input.get(range.clone()) else {
            continue;
        };
        let repeated = if hrefs.len() <= LINEAR_DEDUP_MAX {
            hrefs[..i].iter().any(|r| page.input.get(r.clone()) == Some(raw))
        } else {
            !seen_raw.insert(raw)
        };
        if repeated {
            continue;
        }
        let raw = page.input_encoding.decode_without_bom_handling(raw).0;
        let href = entities::decode(&raw, Context::Attribute, &mut scratch).trim_matches(is_space);
        if is_skipped(href) {
            continue;
        }
        match options.parse(origin.path_of(href).unwrap_or(href)) {
            // The URL parser also drops tabs and newlines inside a scheme, so check it again.
            Ok(url) if NOT_FOLLOWED.contains(&url.scheme()) => {}
            Ok(mut url) => {
                url.set_fragment(None);
                links.push(url);
            }
            Err(source) => issues.push(|| Issue::BadLink { href: quoted(href), source }),
        }
    }
    dedup(&mut links);
    links
}

/// The base URL's origin as links spell it out (`http://host:port`, `//host:port`), so that a
/// link on the same origin is resolved from its path alone: parsing the host again (IP or
/// domain rules, IDNA) is most of what a full parse costs, and many pages write their own
/// links absolute.
struct SameOrigin<'u> {
    /// `scheme://host[:port]` as serialized and its scheme-relative tail `//host[:port]`;
    /// `None` when the shortcut does not apply.
    prefixes: Option<(&'u str, &'u str)>,
}

impl<'u> SameOrigin<'u> {
    fn of(base: &'u Url) -> Self {
        // A path-absolute link would inherit the base's user info, an absolute one does not;
        // and only special schemes parse `\` like `/`, which the check below relies on.
        let applies = matches!(base.scheme(), "http" | "https")
            && base.username().is_empty()
            && base.password().is_none()
            && base.has_host();
        let prefixes = applies
            .then(|| &base[..url::Position::BeforePath])
            .and_then(|absolute| Some((absolute, &absolute[absolute.find("//")?..])));
        SameOrigin { prefixes }
    }

    /// The path-absolute part of `href` when `href` names the base's origin exactly as it is
    /// serialized (absolute or scheme-relative); resolving that part against the base gives
    /// the same URL as resolving `href`.
    fn path_of<'h>(&self, href: &'h str) -> Option<&'h str> {
        let (absolute, scheme_relative) = self.prefixes?;
        let rest = href.strip_prefix(absolute).or_else(|| href.strip_prefix(scheme_relative))?;
        let b = rest.as_bytes();
        // `/` then anything but a second slash (which would make the rest a host); the URL
        // parser drops tabs and newlines anywhere, so a value with them takes the long way.
        let plain = b.first() == Some(&b'/')
            && !matches!(b.get(1), Some(b'/' | b'\\'))
            && !b.iter().any(|&c| matches!(c, b'\t' | b'\n' | b'\r'));
        plain.then_some(rest)
    }
}

/// Values that are no link to another page: empty, a pure fragment (this page), or a scheme
/// the crawler cannot fetch. `href` is already trimmed.
fn is_skipped(href: &str) -> bool {
    href.is_empty()
        || href.starts_with('#')
        || NOT_FOLLOWED.iter().any(|scheme| {
            href.len() > scheme.len()
                && href.as_bytes()[scheme.len()] == b':'
                && href.as_bytes()[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes())
        })
}

/// ASCII whitespace as HTML strips it from URL attributes.
fn is_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0C' | '\r' | ' ')
}

/// A query string in `encoding`, as the URL standard's "percent-encode after encoding" wants
/// it: characters the encoding cannot represent become `%26%23<decimal>%3B` (an escaped
/// `&#…;`, so they cannot split the query). The url crate percent-encodes the rest.
fn encode_query<'s>(encoding: &'static Encoding, s: &'s str) -> Cow<'s, [u8]> {
    let (bytes, _, unmappable) = encoding.encode(s);
    if !unmappable {
        return bytes;
    }
    let mut out = Vec::with_capacity(s.len() + 16);
    let mut encoder = encoding.new_encoder();
    let mut rest = s;
    loop {
        let needed = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4 + 16);
        out.reserve(needed);
        let (result, read) = encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            EncoderResult::InputEmpty => break,
            EncoderResult::OutputFull => {}
            EncoderResult::Unmappable(c) => {
                let mut escaped = String::with_capacity(16);
                // Writing to a String cannot fail.
                let _ = write!(escaped, "%26%23{}%3B", u32::from(c));
                out.extend_from_slice(escaped.as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

/// Drops later exact duplicates, keeping first-seen order.
fn dedup(links: &mut Vec<Url>) {
    if links.len() <= LINEAR_DEDUP_MAX {
        let mut kept = 0;
        for i in 0..links.len() {
            let seen = links[..kept].iter().any(|u| u.as_str() == links[i].as_str());
            if !seen {
                links.swap(kept, i);
                kept += 1;
            }
        }
        links.truncate(kept);
    } else {
        let keep: Vec<bool> = {
            let mut seen = HashSet::with_capacity(links.len());
            links.iter().map(|u| seen.insert(u.as_str())).collect()
        };
        let mut keep = keep.into_iter();
        links.retain(|_| keep.next().unwrap_or(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, WINDOWS_1252};

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().filter_map(|s| Url::parse(s).ok()).collect()
    }

    #[test]
    fn skip_rules() {
        for href in ["", "#", "#top", "javascript:void(0)", "JavaScript:x", "mailto:a@b", "data:,x", "tel:+1"]
        {
            assert!(is_skipped(href), "{href}");
        }
        for href in ["page.html", "javascript", "/mailto:x", "data", "?q#f"] {
            assert!(!is_skipped(href), "{href}");
        }
    }

    #[test]
    fn query_encoding() {
        assert_eq!(&*encode_query(WINDOWS_1252, "q=é"), b"q=\xE9");
        // "€" is in windows-1252; "→" is not.
        assert_eq!(&*encode_query(WINDOWS_1252, "a=€→b"), b"a=\x80%26%238594%3Bb");
        assert_eq!(&*encode_query(SHIFT_JIS, "→"), b"\x81\xA8");
    }

    #[test]
    fn same_origin_links_resolve_as_a_full_parse_does() {
        let bases =
            ["http://127.0.0.1:8088/dir/page.html?x=1", "https://example.com/a/", "http://u:p@h.test/"];
        let hrefs = [
            "http://127.0.0.1:8088/page/1.html",
            "http://127.0.0.1:8088/a/../b/./c?q=1#f",
            "//127.0.0.1:8088/page/2.html",
            "http://127.0.0.1:8088",
            "http://127.0.0.1:8088?q",
            "http://127.0.0.1:8088//evil.test/x",
            "http://127.0.0.1:8088/\\evil.test/x",
            "http://127.0.0.1:8088/\n/evil.test/x",
            "http://127.0.0.1:80881/x",
            "http://127.0.0.1:8088/ sp%20ace/ü?é=1",
            "https://example.com/x",
            "https://example.com:443/x",
            "//example.com//x",
            "https://example.com/\t/y",
            "http://h.test/x",
            "//h.test/x",
        ];
        for base in bases {
            let base = Url::parse(base).unwrap();
            let origin = SameOrigin::of(&base);
            let options = Url::options().base_url(Some(&base));
            for href in hrefs {
                let full = options.parse(href).map(|u| u.to_string());
                let short = options.parse(origin.path_of(href).unwrap_or(href)).map(|u| u.to_string());
                assert_eq!(short, full, "{href} against {base}");
            }
        }
        let base = Url::parse("http://127.0.0.1:8088/").unwrap();
        let origin = SameOrigin::of(&base);
        assert_eq!(origin.path_of("http://127.0.0.1:8088/p?q"), Some("/p?q"));
        assert_eq!(origin.path_of("//127.0.0.1:8088/p"), Some("/p"));
        assert_eq!(origin.path_of("http://127.0.0.1:8088//p"), None);
        let with_user = Url::parse("http://u@h.test/").unwrap();
        assert_eq!(SameOrigin::of(&with_user).path_of("http://u@h.test/p"), None);
    }

    proptest::proptest! {
        /// Whatever follows the origin, the shortcut resolves a link as a full parse does.
        #[test]
        fn the_same_origin_shortcut_never_changes_a_link(
            start in proptest::sample::select(vec!["http://127.0.0.1:8088", "//127.0.0.1:8088", "http://127.0.0.1:808"]),
            pieces in proptest::collection::vec(
                proptest::sample::select(vec!["/", "//", "\\", "\t", "\n", "\r", "?", "#", "..", ".", "a", "%2F", "ü", " ", ":", "@", "8", "\u{1}"]),
                0..8,
            ),
        ) {
            let base = Url::parse("http://127.0.0.1:8088/dir/page.html?x=1").unwrap();
            let href = format!("{start}{}", pieces.concat());
            let options = Url::options().base_url(Some(&base));
            let full = options.parse(&href).map(|u| u.to_string());
            let short = options.parse(SameOrigin::of(&base).path_of(&href).unwrap_or(&href)).map(|u| u.to_string());
            proptest::prop_assert_eq!(short, full, "{:?}", href);
        }
    }

    #[test]
    fn dedup_keeps_first_order() {
        let mut small = urls(&["http://a/1", "http://a/2", "http://a/1", "http://a/3", "http://a/2"]);
        dedup(&mut small);
        assert_eq!(small, urls(&["http://a/1", "http://a/2", "http://a/3"]));

        let many: Vec<String> = (0..100).map(|i| format!("http://a/{}", i % 40)).collect();
        let mut big = urls(&many.iter().map(String::as_str).collect::<Vec<_>>());
        dedup(&mut big);
        let want: Vec<String> = (0..40).map(|i| format!("http://a/{i}")).collect();
        assert_eq!(big, urls(&want.iter().map(String::as_str).collect::<Vec<_>>()));
    }
}
