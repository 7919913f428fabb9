//! The HTTP heads written into request, response and revisit blocks.
//!
//! They are reconstructed from the client's view, not recorded from the wire: header order and
//! case are the header map's, HTTP/2 and HTTP/3 are written in HTTP/1.1 syntax (the record's
//! WARC-Protocol says what was spoken), and the framing headers are made true of the block:
//! the payload is stored de-chunked, so `Transfer-Encoding` is renamed, and `Content-Length`
//! always gives the stored payload's length (a differing one is kept under another name).

use std::io::Write as _;

use http::{HeaderMap, Method, StatusCode, Version};

/// The version written in a start line: HTTP/1.0 stays, everything else is written as 1.1.
fn version_text(v: Version) -> &'static str {
    if v == Version::HTTP_10 || v == Version::HTTP_09 { "HTTP/1.0" } else { "HTTP/1.1" }
}

/// The WARC-Protocol value of an HTTP version, if it has one.
pub(crate) fn protocol(v: Version) -> Option<&'static str> {
    Some(match v {
        Version::HTTP_09 => "http/0.9",
        Version::HTTP_10 => "http/1.0",
        Version::HTTP_11 => "http/1.1",
        Version::HTTP_2 => "h2",
        Version::HTTP_3 => "h3",
        _ => return None,
    })
}

/// How `content-length` is made true of the block.
#[derive(Clone, Copy)]
pub(crate) enum Length {
    /// Leave the header as it came (a 304: its head describes a body that is not there).
    AsIs,
    /// The block holds `len` payload bytes: a differing header is renamed
    /// `x-crawler-content-length`, and the true one is added when there is none.
    Fix { len: usize, add_missing: bool },
    /// The payload was cut at `len` bytes: the header keeps the full length (WARC-Truncated
    /// says the block is short), and the cut length is added only when there was none.
    Truncated { len: usize },
}

/// `GET /path?query HTTP/1.1`, `host` unless the map has one, the map's headers, CRLF.
pub(crate) fn request_head(
    out: &mut Vec<u8>,
    target: &str,
    method: &Method,
    version: Version,
    headers: &HeaderMap,
    body_len: usize,
) {
    let t = Target::split(target);
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    if !t.path_query.starts_with('/') {
        out.push(b'/');
    }
    out.extend_from_slice(t.path_query.as_bytes());
    out.push(b' ');
    out.extend_from_slice(version_text(version).as_bytes());
    out.extend_from_slice(b"\r\n");
    if !headers.contains_key(http::header::HOST) && !t.host.is_empty() {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(t.host.as_bytes());
        if let Some(port) = t.port {
            out.push(b':');
            out.extend_from_slice(port.as_bytes());
        }
        out.extend_from_slice(b"\r\n");
    }
    header_lines(out, headers, Length::Fix { len: body_len, add_missing: body_len > 0 });
    out.extend_from_slice(b"\r\n");
}

/// `HTTP/1.1 200 OK`, the headers made true of the block, CRLF.
pub(crate) fn response_head(
    out: &mut Vec<u8>,
    version: Version,
    status: StatusCode,
    headers: &HeaderMap,
    length: Length,
) {
    out.extend_from_slice(version_text(version).as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    // A code without a canonical reason gets an empty one, which HTTP/1.1 allows.
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    header_lines(out, headers, length);
    out.extend_from_slice(b"\r\n");
}

fn header_lines(out: &mut Vec<u8>, headers: &HeaderMap, length: Length) {
    let mut has_length = false;
    for (name, value) in headers {
        let mut name = name.as_str();
        // HTTP/2 pseudo-headers (`:status`) have no HTTP/1.1 form. The map cannot hold them
        // today; the check keeps that true if a caller's map type ever can.
        if name.starts_with(':') {
            continue;
        }
        if name == "transfer-encoding" {
            name = "x-crawler-transfer-encoding";
        } else if name == "content-length" {
            let stated =
                std::str::from_utf8(value.as_bytes()).ok().and_then(|v| v.trim().parse::<usize>().ok());
            match length {
                Length::AsIs | Length::Truncated { .. } => has_length = true,
                Length::Fix { len, .. } if stated == Some(len) => has_length = true,
                Length::Fix { .. } => name = "x-crawler-content-length",
            }
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let add = match length {
        Length::AsIs => None,
        // A renamed header is replaced even where a missing one would not be added.
        Length::Fix { len, add_missing } => {
            (add_missing || headers.contains_key(http::header::CONTENT_LENGTH)).then_some(len)
        }
        Length::Truncated { len } => Some(len),
    };
    if let Some(len) = add.filter(|_| !has_length) {
        let _ = write!(out, "content-length: {len}\r\n");
    }
}

/// The parts of a target URL the request head needs, found without a full URL parse.
struct Target<'a> {
    host: &'a str,
    /// Kept only when it is not the scheme's default.
    port: Option<&'a str>,
    /// From the first `/` or `?` after the authority to the fragment; may be empty.
    path_query: &'a str,
}

impl<'a> Target<'a> {
    fn split(url: &'a str) -> Self {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let path_query = tail.split('#').next().unwrap_or("");
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
        let (host, port) = match host_port.rfind(':') {
            // A colon inside `[…]` belongs to an IPv6 address, not a port.
            Some(i) if !host_port[i..].contains(']') => (&host_port[..i], Some(&host_port[i + 1..])),
            _ => (host_port, None),
        };
        let default = match scheme.to_ascii_lowercase().as_str() {
            "http" | "ws" => "80",
            "https" | "wss" => "443",
            _ => "",
        };
        let port = port.filter(|p| !p.is_empty() && *p != default);
        Target { host, port, path_query }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn text(b: Vec<u8>) -> String {
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn target_parts() {
        for (url, host, port, pq) in [
            ("http://a.test/x?y=1#f", "a.test", None, "/x?y=1"),
            ("http://a.test:80/", "a.test", None, "/"),
            ("https://a.test:443", "a.test", None, ""),
            ("https://u:p@a.test:8443?q", "a.test", Some("8443"), "?q"),
            ("http://[::1]:8080/p", "[::1]", Some("8080"), "/p"),
            ("http://[::1]/p", "[::1]", None, "/p"),
        ] {
            let t = Target::split(url);
            assert_eq!((t.host, t.port, t.path_query), (host, port, pq), "{url}");
        }
    }

    #[test]
    fn request_adds_host_and_keeps_order() {
        let mut h = HeaderMap::new();
        h.insert("user-agent", HeaderValue::from_static("kumo"));
        h.insert("accept-encoding", HeaderValue::from_static("gzip"));
        let mut out = Vec::new();
        request_head(&mut out, "https://a.test:8443?q=1", &Method::GET, Version::HTTP_2, &h, 0);
        assert_eq!(
            text(out),
            "GET /?q=1 HTTP/1.1\r\nhost: a.test:8443\r\nuser-agent: kumo\r\naccept-encoding: gzip\r\n\r\n"
        );
    }

    #[test]
    fn response_framing_fixed() {
        let mut h = HeaderMap::new();
        h.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        h.insert("content-encoding", HeaderValue::from_static("gzip"));
        let mut out = Vec::new();
        response_head(
            &mut out,
            Version::HTTP_11,
            StatusCode::OK,
            &h,
            Length::Fix { len: 7, add_missing: true },
        );
        assert_eq!(
            text(out),
            "HTTP/1.1 200 OK\r\nx-crawler-transfer-encoding: chunked\r\ncontent-encoding: gzip\r\n\
             content-length: 7\r\n\r\n"
        );

        let mut h = HeaderMap::new();
        h.insert("content-length", HeaderValue::from_static("99"));
        let mut out = Vec::new();
        response_head(
            &mut out,
            Version::HTTP_10,
            StatusCode::NOT_FOUND,
            &h,
            Length::Fix { len: 7, add_missing: true },
        );
        assert_eq!(
            text(out),
            "HTTP/1.0 404 Not Found\r\nx-crawler-content-length: 99\r\ncontent-length: 7\r\n\r\n"
        );

        let mut out = Vec::new();
        response_head(&mut out, Version::HTTP_11, StatusCode::OK, &h, Length::Truncated { len: 7 });
        assert_eq!(text(out), "HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n");

        let mut out = Vec::new();
        let code = StatusCode::from_u16(599).unwrap();
        response_head(&mut out, Version::HTTP_2, code, &HeaderMap::new(), Length::AsIs);
        assert_eq!(text(out), "HTTP/1.1 599 \r\n\r\n");
    }
}
