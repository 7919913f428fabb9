//! SURT url keys exactly as pywb and cdxj-indexer compute them (the Python `surt` package with
//! its defaults), so a CDXJ written here sorts and matches like one they write.
//!
//! `http://www.Example.com:80/A/?b=2&a=1` becomes `com,example)/a?a=1&b=2`: the host lowercased,
//! a leading `www.` (or `www2.`…) dropped, its labels reversed and comma-joined (IPv4 addresses
//! too: `1,0,0,127:18765)/b.html`), the default port dropped, the path and query lowercased,
//! the query's arguments sorted, session ids removed, the fragment dropped.
//!
//! One known difference: a host with non-ASCII letters is percent-encoded here where `surt`
//! converts it with IDNA; crawled URLs are already in punycode, so it does not arise.

/// The SURT url key of `url`.
pub fn surt(url: &str) -> String {
    let bytes = url.as_bytes();
    if bytes.is_empty() {
        return "-".into();
    }
    if bytes.starts_with(b"filedesc") {
        return url.into();
    }
    match Parts::parse(bytes) {
        Some(mut p) => {
            p.google_canonicalize();
            p.ia_canonicalize();
            String::from_utf8_lossy(&p.key()).into_owned()
        }
        // `surt` raises on a port that is no number; cdxj-indexer then keys by the URL itself.
        None => url.into(),
    }
}

struct Parts {
    scheme: Vec<u8>,
    host: Option<Vec<u8>>,
    port: Option<u16>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
}

impl Parts {
    /// `handyurl.parse`: a port that is no number makes it fail.
    fn parse(url: &[u8]) -> Option<Parts> {
        let trimmed = url.trim_ascii();
        let mut url: Vec<u8> =
            trimmed.iter().copied().filter(|b| !matches!(b, b'\n' | b'\r' | b'\t')).collect();
        if scheme_len(&url).is_none() {
            url.splice(0..0, b"http://".iter().copied());
        }
        // `http://https://host/` is read as `https://host/`.
        while let Some(first) = http_prefix(&url) {
            if http_prefix(&url[first..]).is_none() {
                break;
            }
            url.drain(..first);
        }

        let (scheme, mut rest) = match scheme_len(&url) {
            Some(n) => (url[..n].to_vec(), &url[n + 1..]),
            None => (Vec::new(), &url[..]),
        };
        let mut netloc: &[u8] = b"";
        if let Some(after) = rest.strip_prefix(b"//") {
            let end = after.iter().position(|b| matches!(b, b'/' | b'?' | b'#')).unwrap_or(after.len());
            netloc = &after[..end];
            rest = &after[end..];
        }
        let end = rest.iter().position(|b| matches!(b, b'?' | b'#')).unwrap_or(rest.len());
        let path = &rest[..end];
        let rest = &rest[end..];
        let query = match rest.strip_prefix(b"?") {
            Some(q) => &q[..q.iter().position(|&b| b == b'#').unwrap_or(q.len())],
            None => b"",
        };

        while let Some(n) = netloc.strip_suffix(b":") {
            netloc = n;
        }
        let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
            Some(i) => &netloc[i + 1..],
            None => netloc,
        };
        let (hostname, port): (&[u8], &[u8]) = match hostinfo.iter().position(|&b| b == b'[') {
            Some(i) => {
                let bracketed = &hostinfo[i + 1..];
                let close = bracketed.iter().position(|&b| b == b']').unwrap_or(bracketed.len());
                let after = bracketed.get(close + 1..).unwrap_or(b"");
                let port = after.iter().position(|&b| b == b':').map_or(&b""[..], |c| &after[c + 1..]);
                (&bracketed[..close], port)
            }
            None => match hostinfo.iter().position(|&b| b == b':') {
                Some(c) => (&hostinfo[..c], &hostinfo[c + 1..]),
                None => (hostinfo, b""),
            },
        };
        let port = if port.is_empty() {
            None
        } else if port.iter().all(u8::is_ascii_digit) {
            let n: u32 = std::str::from_utf8(port).ok()?.parse().ok()?;
            Some(u16::try_from(n).ok()?).filter(|&p| p != 0)
        } else {
            return None;
        };
        let mut host = (!hostname.is_empty()).then(|| {
            // Python lowercases the name but not an IPv6 zone after `%`.
            let zone = hostname.iter().position(|&b| b == b'%').unwrap_or(hostname.len());
            let mut h = hostname[..zone].to_ascii_lowercase();
            h.extend_from_slice(&hostname[zone..]);
            h
        });
        let mut path = (!path.is_empty()).then(|| path.to_vec());
        // `http:////host/x`: the host is the path's first segment.
        if scheme.starts_with(b"http")
            && host.is_none()
            && let Some(p) = &path
        {
            let p = &p[p.iter().position(|&b| b != b'/').unwrap_or(p.len())..];
            let slash = p.iter().position(|&b| b == b'/').unwrap_or(p.len());
            host = Some(p[..slash].to_vec());
            let mut new_path = b"/".to_vec();
            new_path.extend_from_slice(p.get(slash + 1..).unwrap_or(b""));
            path = Some(new_path);
        }
        let query = (!query.is_empty()).then(|| query.to_vec());
        Some(Parts { scheme, host, port, path, query })
    }

    /// `GoogleURLCanonicalizer.canonicalize`.
    fn google_canonicalize(&mut self) {
        if let Some(q) = &self.query {
            self.query = Some(escape_once(&unescape_repeatedly(q)));
        }
        if let Some(h) = self.host.take().filter(|h| !h.is_empty()) {
            let h = unescape_repeatedly(&h);
            let h = replace_double_dots(&h);
            let h = strip_byte(&h, b'.');
            self.host = Some(match ip_format(h) {
                Some(ip) => ip.into_bytes(),
                None => escape_once(&h.to_ascii_lowercase()),
            });
        }
        let path = self.path.as_deref().map(unescape_repeatedly);
        let path = match (&self.host, path) {
            (Some(_), p) => Some(normalize_path(p.as_deref().unwrap_or(b""))),
            (None, p) => p,
        };
        self.path = path.map(|p| escape_once(&p));
    }

    /// `IAURLCanonicalizer.canonicalize` with its defaults.
    fn ia_canonicalize(&mut self) {
        if let Some(h) = &mut self.host {
            h.make_ascii_lowercase();
            if self.scheme != b"dns" {
                let www = www_prefix(h);
                h.drain(..www);
            }
        }
        let default_port = match self.scheme.to_ascii_lowercase().as_slice() {
            b"http" => Some(80),
            b"https" => Some(443),
            _ => None,
        };
        if self.port.is_some() && self.port == default_port {
            self.port = None;
        }
        if let Some(p) = &mut self.path
            && !p.is_empty()
        {
            p.make_ascii_lowercase();
            strip_path_session_id(p);
            if p.len() > 1 && p.ends_with(b"/") {
                p.pop();
            }
        }
        if let Some(q) = self.query.take() {
            let q = strip_query_session_ids(q).to_ascii_lowercase();
            let q = alpha_reorder_query(&q);
            self.query = (!q.is_empty()).then_some(q);
        }
    }

    /// `handyurl.geturl_bytes(surt=True, with_scheme=False)`.
    fn key(&self) -> Vec<u8> {
        let mut s = Vec::with_capacity(64);
        match self.host.as_deref().filter(|h| !h.is_empty()) {
            Some(host) => {
                for (i, label) in host.split(|&b| b == b'.').rev().enumerate() {
                    if i > 0 {
                        s.push(b',');
                    }
                    s.extend_from_slice(label);
                }
                if let Some(port) = self.port {
                    s.extend_from_slice(format!(":{port}").as_bytes());
                }
                s.push(b')');
            }
            None => {
                s.extend_from_slice(&self.scheme);
                s.push(b':');
            }
        }
        match &self.path {
            Some(p) if !p.is_empty() => s.extend_from_slice(p),
            _ if self.query.is_some() => s.push(b'/'),
            _ => {}
        }
        if let Some(q) = &self.query {
            s.push(b'?');
            s.extend_from_slice(q);
        }
        s
    }
}

/// The length of a leading `scheme` followed by `:`.
fn scheme_len(url: &[u8]) -> Option<usize> {
    if !url.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = url.iter().position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (url[n] == b':').then_some(n)
}

fn http_prefix(url: &[u8]) -> Option<usize> {
    [&b"http://"[..], b"https://"].iter().find(|p| url.starts_with(p)).map(|p| p.len())
}

/// Python's `bytes.replace(b'..', b'.')`: one pass, non-overlapping.
fn replace_double_dots(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        out.push(s[i]);
        i += if s[i] == b'.' && s.get(i + 1) == Some(&b'.') { 2 } else { 1 };
    }
    out
}

fn strip_byte(s: &[u8], b: u8) -> &[u8] {
    let start = s.iter().position(|&c| c != b).unwrap_or(s.len());
    let end = s.iter().rposition(|&c| c != b).map_or(start, |e| e + 1);
    &s[start..end]
}

/// `attemptIPFormats`: a host that is all digits is a 32-bit address; dotted numbers are read
/// as `inet_aton` reads them (leading 0 is octal). Anything else is a name.
fn ip_format(host: &[u8]) -> Option<String> {
    if host.is_empty() {
        return None;
    }
    if host.iter().all(u8::is_ascii_digit) {
        let n = host.iter().fold(0u32, |n, &d| n.wrapping_mul(10).wrapping_add(u32::from(d - b'0')));
        return Some(std::net::Ipv4Addr::from(n).to_string());
    }
    if !host.iter().all(|&b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let parts: Vec<&[u8]> = host.split(|&b| b == b'.').collect();
    let decimal = host[0] != b'0';
    let octal = host[0] == b'0' && host.iter().all(|&b| b == b'.' || (b'0'..=b'7').contains(&b));
    if parts.len() > 4 || parts.iter().any(|p| p.is_empty()) || !(decimal || octal) {
        return None;
    }
    let values: Vec<u32> = parts.iter().map(|p| inet_number(p)).collect::<Option<_>>()?;
    let (last, init) = values.split_last()?;
    if init.iter().any(|&v| v > 255) {
        return None;
    }
    let last_bits = 8 * (5 - values.len()) as u32;
    if last_bits < 32 && *last >= 1 << last_bits {
        return None;
    }
    let n = init.iter().enumerate().fold(*last, |n, (i, &v)| n | v << (24 - 8 * i as u32));
    Some(std::net::Ipv4Addr::from(n).to_string())
}

fn inet_number(p: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(p).ok()?;
    if p.len() > 1 && p[0] == b'0' { u32::from_str_radix(&text[1..], 8).ok() } else { text.parse().ok() }
}

/// `unquote_to_bytes` until nothing changes.
fn unescape_repeatedly(s: &[u8]) -> Vec<u8> {
    let mut cur = s.to_vec();
    loop {
        let next = unquote(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

fn unquote(s: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && let (Some(h), Some(l)) =
                (s.get(i + 1).and_then(|&b| hex(b)), s.get(i + 2).and_then(|&b| hex(b)))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `quote_from_bytes` with surt's safe set: only controls, space, `#`, `%` and non-ASCII bytes
/// are escaped.
fn escape_once(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &b in s {
        if b <= b' ' || b == b'#' || b == b'%' || b >= 0x7f {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

/// `normalizePath`: `.` and `..` segments resolved, empty segments dropped, a trailing `/` kept.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for p in path.split(|&b| b == b'/').skip(1) {
        match p {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(p);
                }
            }
            _ => kept.push(p),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for p in init.iter().filter(|p| !p.is_empty()) {
            out.extend_from_slice(p);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

/// The length of a leading `www.`, `www2.`…
fn www_prefix(host: &[u8]) -> usize {
    let Some(rest) = host.strip_prefix(b"www") else { return 0 };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if rest.get(digits) == Some(&b'.') { 3 + digits + 1 } else { 0 }
}

/// `alphaReorderQuery`: arguments sorted as Python sorts `(name,)` and `(name, value)` tuples.
fn alpha_reorder_query(q: &[u8]) -> Vec<u8> {
    if q.len() <= 1 {
        return q.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = q
        .split(|&b| b == b'&')
        .map(|a| match a.iter().position(|&b| b == b'=') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        })
        .collect();
    args.sort();
    let mut out = Vec::with_capacity(q.len());
    for (i, (name, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(v) = value {
            out.push(b'=');
            out.extend_from_slice(v);
        }
    }
    out
}

/// `stripQuerySessionID`: each pattern, in turn, removes its last match that runs to the end
/// or to an `&` (which goes with it).
fn strip_query_session_ids(mut q: Vec<u8>) -> Vec<u8> {
    type Token = fn(&[u8]) -> Option<usize>;
    fn alnum32(s: &[u8], name: &[u8]) -> Option<usize> {
        let v = strip_prefix_ci(s, name)?;
        (v.len() >= 32 && v[..32].iter().all(u8::is_ascii_alphanumeric)).then_some(name.len() + 32)
    }
    let tokens: [Token; 5] = [
        |s| alnum32(s, b"jsessionid="),
        |s| alnum32(s, b"phpsessid="),
        |s| alnum32(s, b"sid="),
        |s| {
            let v = strip_prefix_ci(s, b"aspsessionid")?;
            let ok = v.len() >= 33
                && v[..8].iter().all(u8::is_ascii_alphabetic)
                && v[8] == b'='
                && v[9..33].iter().all(u8::is_ascii_alphabetic);
            ok.then_some(12 + 33)
        },
        |s| {
            let v = strip_prefix_ci(s, b"cfid=")?;
            let id = v.iter().position(|&b| b == b'&').filter(|&n| n > 0)?;
            let t = strip_prefix_ci(&v[id + 1..], b"cftoken=")?;
            let token = t.iter().position(|&b| b == b'&').unwrap_or(t.len());
            (token > 0).then_some(5 + id + 1 + 8 + token)
        },
    ];
    for token in tokens {
        let found = (0..q.len()).rev().find_map(|i| {
            let len = token(&q[i..])?;
            let end = i + len;
            (end == q.len() || q[end] == b'&').then_some((i, end))
        });
        if let Some((i, end)) = found {
            let rest = q.get(end + 1..).unwrap_or(b"").to_vec();
            q.truncate(i);
            q.extend_from_slice(&rest);
        }
    }
    q
}

/// `stripPathSessionID`: an ASP.NET session segment, `(S(…24…))/` or `(…24…)/`, before an
/// `.aspx` page.
fn strip_path_session_id(p: &mut Vec<u8>) {
    let nested = |s: &[u8]| -> Option<usize> {
        let mut i = 1;
        if s.first() != Some(&b'(') {
            return None;
        }
        while s.get(i).is_some_and(u8::is_ascii_alphabetic) && s.get(i + 1) == Some(&b'(') {
            let id = s.get(i + 2..i + 26)?;
            if !id.iter().all(u8::is_ascii_alphanumeric) || s.get(i + 26) != Some(&b')') {
                return None;
            }
            i += 27;
        }
        (i > 1 && s.get(i..i + 2) == Some(b")/")).then_some(i + 2)
    };
    let plain = |s: &[u8]| -> Option<usize> {
        let id = s.get(1..25)?;
        (s[0] == b'(' && id.iter().all(u8::is_ascii_alphanumeric) && s.get(25..27) == Some(b")/"))
            .then_some(27)
    };
    let aspx_page = |rest: &[u8]| -> bool {
        (1..rest.len()).any(|k| strip_prefix_ci(&rest[k..], b".aspx").is_some() && !rest[..k].contains(&b'?'))
    };
    for token in [&nested as &dyn Fn(&[u8]) -> Option<usize>, &plain] {
        let found = (1..p.len()).rev().filter(|&i| p[i - 1] == b'/').find_map(|i| {
            let end = i + token(&p[i..])?;
            aspx_page(&p[end..]).then_some((i, end))
        });
        if let Some((i, end)) = found {
            p.drain(i..end);
        }
    }
}

fn strip_prefix_ci<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)).then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key as the Python `surt` package (0.3.1, pywb's) computes it.
    #[test]
    fn keys_match_python_surt() {
        for (url, key) in [
            ("http://127.0.0.1:18765/b.html", "1,0,0,127:18765)/b.html"),
            ("http://www.Example.com:80/A/?b=2&a=1", "com,example)/a?a=1&b=2"),
            ("https://www.example.com:443/", "com,example)/"),
            ("https://example.com:8443/x/y/", "com,example:8443)/x/y"),
            ("http://www2.foo.example.org/Index.HTML#frag", "org,example,foo)/index.html"),
            ("http://example.com", "com,example)/"),
            ("http://example.com/?", "com,example)/"),
            ("http://example.com/a/./b/../c//d", "com,example)/a/c/d"),
            ("http://example.com/a%20b/%7Euser/caf%C3%A9", "com,example)/a%20b/~user/caf%c3%a9"),
            ("http://example.com/a b", "com,example)/a%20b"),
            ("http://example.com/?q=hello%20world&A=1&a", "com,example)/?a&a=1&q=hello%20world"),
            ("http://example.com/?a=2&a=1&a&b=", "com,example)/?a&a=1&a=2&b="),
            ("http://example.com/x?jsessionid=0123456789abcdef0123456789ABCDEF&z=1", "com,example)/x?z=1"),
            ("http://example.com/x?a=1&jsessionid=0123456789abcdef0123456789ABCDEF", "com,example)/x?&a=1"),
            ("http://example.com/x?phpsessid=0123456789abcdef0123456789ABCDEF", "com,example)/x"),
            ("http://example.com/x?sid=0123456789abcdef0123456789ABCDEF&y=2", "com,example)/x?y=2"),
            ("http://example.com/x?ASPSESSIONIDABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&y=2", "com,example)/x?y=2"),
            ("http://example.com/x?cfid=123&cftoken=456&y=2", "com,example)/x?y=2"),
            ("http://example.com/(S(0123456789abcdefghijklmn))/page.aspx", "com,example)/page.aspx"),
            (
                "http://example.com/dir/(0123456789abcdefghijklmn)/page.aspx?x=1",
                "com,example)/dir/page.aspx?x=1",
            ),
            ("http://[::1]:8080/p", "::1:8080)/p"),
            ("http://user:pass@example.com/p", "com,example)/p"),
            ("http://3232235777/", "1,1,168,192)/"),
            ("http://192.168.1.1./x", "1,1,168,192)/x"),
            ("http://EXAMPLE.com..//x", "com,example)/x"),
            ("http://http://example.com/x", "com,example)/x"),
            ("example.com/path", "com,example)/path"),
            ("https://sub.www.example.com/", "com,example,www,sub)/"),
            ("http://www.example.com/index.html?%41=%62", "com,example)/index.html?a=b"),
            ("http://example.com/%2541", "com,example)/a"),
            ("http://example.com/a?b#c?d", "com,example)/a?b"),
            ("http://example.com/..", "com,example)/.."),
            ("http://example.com:0/", "com,example)/"),
            ("http://example.com:08080/", "com,example:8080)/"),
        ] {
            assert_eq!(surt(url), key, "{url}");
        }
    }

    #[test]
    fn empty_and_unparsable() {
        assert_eq!(surt(""), "-");
        assert_eq!(surt("http://example.com:x/"), "http://example.com:x/");
    }
}
