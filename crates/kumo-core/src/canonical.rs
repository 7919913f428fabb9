//! URL canonicalization for de-duplication: two spellings of one resource give one string.
//!
//! The `url` crate already lower-cases scheme and host, drops default ports, resolves dot
//! segments and turns an empty path into `/`. On top of that we drop the fragment, normalize
//! percent-escapes (decode unreserved characters, upper-case the rest), drop an empty query, and
//! optionally sort query pairs and remove listed parameters (tracking noise such as `utm_source`).
//! The canonical string is only used for fingerprints; the crawler still fetches the URL as found.

use std::fmt::Write as _;

use url::Url;

/// Settings for [`canonicalize`]. The default keeps query order and all parameters, which is
/// always safe; sorting and stripping are opt-in because some sites give them meaning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CanonicalOptions {
    /// Sort `key=value` pairs of the query (stable, by the raw pair text).
    pub sort_query: bool,
    /// Query parameters to drop, compared by their raw (still percent-encoded) key.
    pub strip_params: Vec<String>,
}

/// The canonical string of `url` under `opts`.
pub fn canonicalize(url: &Url, opts: &CanonicalOptions) -> String {
    let mut out = String::with_capacity(url.as_str().len());
    out.push_str(url.scheme());
    out.push_str("://");
    // No user info: `user:pass@` names the same page, and links that carry it must not make
    // it a page of its own.
    if let Some(host) = url.host_str() {
        out.push_str(host);
    }
    if let Some(port) = url.port() {
        // Formatting into a String cannot fail.
        let _ = write!(out, ":{port}");
    }
    normalize_escapes(url.path(), &mut out);
    if let Some(query) = url.query() {
        let mut pairs: Vec<&str> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .filter(|p| {
                let key = p.split('=').next().unwrap_or(p);
                !opts.strip_params.iter().any(|s| s == key)
            })
            .collect();
        if opts.sort_query {
            pairs.sort();
        }
        if !pairs.is_empty() {
            out.push('?');
            for (i, pair) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push('&');
                }
                normalize_escapes(pair, &mut out);
            }
        }
    }
    out
}

/// Copies `s`, decoding `%XX` escapes of unreserved characters and upper-casing the hex digits
/// of all other escapes, so `%7e`, `%7E` and `~` compare equal. Text between escapes is copied
/// in runs.
fn normalize_escapes(s: &str, out: &mut String) {
    let mut rest = s;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let b = rest.as_bytes();
        if let (Some(h), Some(l)) = (b.get(at + 1).and_then(|&c| hex(c)), b.get(at + 2).and_then(|&c| hex(c)))
        {
            let v = h * 16 + l;
            if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                out.push(v as char);
            } else {
                out.push('%');
                out.push(b[at + 1].to_ascii_uppercase() as char);
                out.push(b[at + 2].to_ascii_uppercase() as char);
            }
            rest = &rest[at + 3..];
        } else {
            // A `%` that starts no escape is written as `%25`: left bare, a decoded character
            // after it could complete an escape (`%0%61` → `%0a`) and canonical forms would not
            // be stable.
            out.push_str("%25");
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        canonicalize(&Url::parse(s).unwrap(), &CanonicalOptions::default())
    }

    #[test]
    fn scheme_and_host_case_default_port_and_fragment() {
        assert_eq!(canon("HTTP://Example.COM:80/a#frag"), "http://example.com/a");
        assert_eq!(canon("https://example.com:443"), "https://example.com/");
        assert_eq!(canon("http://example.com:8080/"), "http://example.com:8080/");
    }

    #[test]
    fn dot_segments_are_resolved() {
        assert_eq!(canon("http://h/a/./b/../c"), "http://h/a/c");
        assert_eq!(canon("http://h/../../x"), "http://h/x");
    }

    #[test]
    fn percent_escapes_are_normalized() {
        assert_eq!(canon("http://h/%7euser/%41b"), "http://h/~user/Ab");
        assert_eq!(canon("http://h/a%2fb"), "http://h/a%2Fb");
        assert_eq!(canon("http://h/?q=a%2bb"), "http://h/?q=a%2Bb");
        assert_eq!(canon("http://h/%"), "http://h/%25");
        assert_eq!(canon("http://h/%4"), "http://h/%254");
        assert_eq!(canon("http://h/%4g%%41%c3%a9"), "http://h/%254g%25A%C3%A9");
        assert_eq!(canon("http://h/%0%61"), canon(&canon("http://h/%0%61")), "stable");
    }

    #[test]
    fn empty_query_and_empty_pairs_are_dropped() {
        assert_eq!(canon("http://h/p?"), "http://h/p");
        assert_eq!(canon("http://h/p?a=1&&b=2&"), "http://h/p?a=1&b=2");
    }

    #[test]
    fn query_order_is_kept_unless_sorting_is_asked() {
        assert_eq!(canon("http://h/?b=2&a=1"), "http://h/?b=2&a=1");
        let opts = CanonicalOptions { sort_query: true, ..Default::default() };
        let u = Url::parse("http://h/?b=2&a=1&a=0").unwrap();
        assert_eq!(canonicalize(&u, &opts), "http://h/?a=0&a=1&b=2");
    }

    #[test]
    fn listed_parameters_are_removed() {
        let opts =
            CanonicalOptions { strip_params: vec!["utm_source".into(), "view".into()], ..Default::default() };
        let u = Url::parse("http://h/p?utm_source=x&id=3&view=print").unwrap();
        assert_eq!(canonicalize(&u, &opts), "http://h/p?id=3");
        let u = Url::parse("http://h/p?view=print").unwrap();
        assert_eq!(canonicalize(&u, &opts), "http://h/p");
    }

    #[test]
    fn userinfo_is_dropped() {
        assert_eq!(canon("http://u:p@h/x"), "http://h/x");
        assert_eq!(canon("http://u@h/x"), canon("http://h/x"), "the same page, seen once");
    }

    proptest::proptest! {
        /// Canonicalizing is idempotent: the canonical form of a canonical URL is itself.
        #[test]
        fn idempotent(path in "[a-zA-Z0-9%~._/-]{0,30}", query in "[a-z0-9=&%]{0,20}") {
            if let Ok(u) = Url::parse(&format!("http://Host.example/{path}?{query}")) {
                let once = canon(u.as_str());
                let twice = canon(&once);
                proptest::prop_assert_eq!(once, twice);
            }
        }
    }
}
