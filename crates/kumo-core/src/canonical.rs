//! URL canonicalization for de-duplication: two spellings of one resource give one string.
//!
//! The `url` crate already lower-cases scheme and host, drops default ports, resolves dot
//! segments and turns an empty path into `/`. On top of that we drop the fragment, normalize
//! percent-escapes (decode unreserved characters, upper-case the rest), drop an empty query, and
//! optionally sort query pairs and remove listed parameters (tracking noise such as `utm_source`).
//! The canonical string is only used for fingerprints; the crawler still fetches the URL as found.
//!
//! Stripping parameters is opt-in, as some sites give any parameter meaning, with one
//! exception: session ids (`jsessionid`, `PHPSESSID`, `sid`, `;jsessionid=…` in the path…) are
//! dropped by default. They name the visitor, not the page, and a server that hands out a new one
//! with every response makes every link a new page forever (a spider trap that grows the state
//! without bound). [`CanonicalOptions::keep_session_ids`] keeps them.

use std::fmt::Write as _;

use url::Url;

/// Settings for [`canonicalize`]. The default keeps query order and all parameters but session
/// ids; sorting and stripping listed parameters are opt-in because some sites give them meaning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CanonicalOptions {
    /// Sort `key=value` pairs of the query (stable, by the raw pair text).
    pub sort_query: bool,
    /// Query parameters to drop, compared by their raw (still percent-encoded) key.
    pub strip_params: Vec<String>,
    /// Keep session ids: query parameters named in [`SESSION_PARAMS`] or starting with
    /// `aspsessionid` (any case), and `;jsessionid=…` path parameters. By default they are
    /// dropped (see the module documentation).
    pub keep_session_ids: bool,
}

/// Query parameters that carry a session id, compared by key without regard to case (any key
/// starting with [`SESSION_PARAM_PREFIX`] is one too).
pub const SESSION_PARAMS: [&str; 7] =
    ["jsessionid", "phpsessid", "sessionid", "session_id", "sid", "cfid", "cftoken"];

/// ASP's session cookie names (`ASPSESSIONIDQASDRCTB`) carry a suffix of their own.
pub const SESSION_PARAM_PREFIX: &str = "aspsessionid";

/// The path parameter of a Java servlet session (`/page;jsessionid=0A1B…`), up to the end of its
/// segment.
const PATH_SESSION_PARAM: &[u8] = b"jsessionid=";

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
    let path_at = out.len();
    normalize_escapes(url.path(), &mut out);
    // Normalizing never makes a `;` (it is reserved, never decoded): a path without one, the
    // common case, has no session parameter to look for.
    if !opts.keep_session_ids && url.path().contains(';') {
        strip_path_session_ids(&mut out, path_at);
    }
    if let Some(query) = url.query() {
        let mut pairs: Vec<&str> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .filter(|p| {
                let key = p.split('=').next().unwrap_or(p);
                !opts.strip_params.iter().any(|s| s == key) && (opts.keep_session_ids || !is_session_key(key))
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

/// Removes every `;jsessionid=…` (any case) from the normalized path in `out[from..]`, up to the
/// end of its segment. Looking in the normalized text keeps canonical forms stable: an escaped
/// spelling (`;jsess%69onid=`) is caught the first time, not only once canonicalized.
fn strip_path_session_ids(out: &mut String, from: usize) {
    let mut at = from;
    while let Some(i) = out[at..].find(';') {
        let semi = at + i;
        let after = &out.as_bytes()[semi + 1..];
        if after.len() >= PATH_SESSION_PARAM.len()
            && after[..PATH_SESSION_PARAM.len()].eq_ignore_ascii_case(PATH_SESSION_PARAM)
        {
            let end = out[semi..].find('/').map_or(out.len(), |j| semi + j);
            out.replace_range(semi..end, "");
            at = semi;
        } else {
            at = semi + 1;
        }
    }
}

/// Whether a raw query key names a session id. Escapes are decoded as the canonical form
/// decodes them (`%73id` is `sid`), without allocating: the names are all unreserved
/// characters, so an escape of anything else simply fails to match.
fn is_session_key(raw: &str) -> bool {
    SESSION_PARAMS.iter().any(|name| decoded_eq(raw, name, false))
        || decoded_eq(raw, SESSION_PARAM_PREFIX, true)
}

/// Whether `raw`, its `%XX` escapes decoded, equals `name` (or starts with it, with `prefix`),
/// ignoring ASCII case.
fn decoded_eq(raw: &str, name: &str, prefix: bool) -> bool {
    let b = raw.as_bytes();
    // Each character is one byte, or three as an escape.
    if b.len() < name.len() || !prefix && b.len() > 3 * name.len() {
        return false;
    }
    let mut i = 0;
    for &want in name.as_bytes() {
        let Some(&c) = b.get(i) else { return false };
        let (got, used) = match (c, b.get(i + 1).and_then(|&h| hex(h)), b.get(i + 2).and_then(|&l| hex(l))) {
            (b'%', Some(h), Some(l)) => (h * 16 + l, 3),
            _ => (c, 1),
        };
        if !got.eq_ignore_ascii_case(&want) {
            return false;
        }
        i += used;
    }
    prefix || i == b.len()
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
    fn session_ids_in_the_query_are_dropped() {
        assert_eq!(canon("http://h/p?jsessionid=A"), canon("http://h/p?jsessionid=B"), "one page");
        assert_eq!(canon("http://h/p?id=3&jsessionid=A&view=1"), "http://h/p?id=3&view=1");
        assert_eq!(canon("http://h/p?PHPSESSID=0123abc"), "http://h/p", "any case");
        assert_eq!(canon("http://h/p?a=1&PhpSessId=x&SID=2&Session_Id=3"), "http://h/p?a=1");
        assert_eq!(canon("http://h/p?sessionid=1&cfid=2&CFTOKEN=3&sid"), "http://h/p");
        assert_eq!(canon("http://h/p?ASPSESSIONIDQASDRCTB=KLM&b=2"), "http://h/p?b=2", "the ASP prefix");
        assert_eq!(canon("http://h/p?%73id=1&q=2"), "http://h/p?q=2", "an escaped name too");
    }

    #[test]
    fn other_parameters_are_untouched() {
        for u in [
            "http://h/p?sids=1",
            "http://h/p?side=left",
            "http://h/p?xsid=1",
            "http://h/p?q=sid&v=jsessionid",
            "http://h/p?session=1",
            "http://h/p?aspsession=1",
            "http://h/a;v=1/b",
            "http://h/a;jsessionid/b",
        ] {
            assert_eq!(canon(u), u, "{u}");
        }
    }

    #[test]
    fn jsessionid_path_parameters_are_dropped() {
        assert_eq!(canon("http://h/shop/item;jsessionid=ABC"), "http://h/shop/item");
        assert_eq!(canon("http://h/shop/item;jsessionid=ABC?x=1"), "http://h/shop/item?x=1");
        assert_eq!(canon("http://h/a;JSESSIONID=ABC.node1/b"), "http://h/a/b", "to the segment's end");
        assert_eq!(canon("http://h/a;v=1;jsessionid=X/b;jsessionid=Y"), "http://h/a;v=1/b");
        assert_eq!(canon("http://h/a;jsess%69onid=X"), "http://h/a", "an escaped spelling too");
        assert_eq!(canon("http://h/;jsessionid=X"), "http://h/");
    }

    #[test]
    fn session_ids_are_kept_when_asked() {
        let keep = CanonicalOptions { keep_session_ids: true, ..Default::default() };
        let c = |s: &str| canonicalize(&Url::parse(s).unwrap(), &keep);
        assert_ne!(c("http://h/p?jsessionid=A"), c("http://h/p?jsessionid=B"));
        assert_eq!(c("http://h/p?PHPSESSID=1&a=2"), "http://h/p?PHPSESSID=1&a=2");
        assert_eq!(c("http://h/item;jsessionid=ABC/x"), "http://h/item;jsessionid=ABC/x");
    }

    #[test]
    fn userinfo_is_dropped() {
        assert_eq!(canon("http://u:p@h/x"), "http://h/x");
        assert_eq!(canon("http://u@h/x"), canon("http://h/x"), "the same page, seen once");
    }

    proptest::proptest! {
        /// Canonicalizing is idempotent: the canonical form of a canonical URL is itself.
        #[test]
        fn idempotent(path in "[a-zA-Z0-9%~._/;=-]{0,30}", query in "[a-zA-Z0-9=&%]{0,20}") {
            if let Ok(u) = Url::parse(&format!("http://Host.example/{path}?{query}")) {
                let once = canon(u.as_str());
                let twice = canon(&once);
                proptest::prop_assert_eq!(once, twice);
            }
        }
    }
}
