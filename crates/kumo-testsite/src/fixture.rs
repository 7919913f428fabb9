//! Canned responses for exact paths: odd statuses, headers, redirects and slow bodies.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use http::{HeaderMap, Response, StatusCode};

use crate::body::Body;

/// A canned response served for one exact path (the query is ignored when matching).
///
/// A fixture answers every method, so it can also stand in for a form endpoint. A `200` with
/// an `ETag` or `Last-Modified` header answers a conditional request that names it with
/// `304 Not Modified`, and a `Range: bytes=A-B` request (one range) with `206` and that part,
/// unless it trickles or resets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// The status code, e.g. `200` or `503`.
    pub status: u16,
    /// Headers sent as given, in order (repeat a name to send it twice).
    pub headers: Vec<(String, String)>,
    /// The body. A fixture that sets `Content-Length` itself must make it match.
    pub body: Bytes,
    /// `0` sends the body in one piece; otherwise it goes out in chunks of this many bytes
    /// (chunked transfer encoding unless the fixture sets `Content-Length`)…
    pub chunk_size: usize,
    /// …with this pause before each chunk, for a slow "trickle" body.
    pub chunk_delay: Duration,
    /// Cut the connection after this many body bytes (a reset mid-body).
    pub reset_after: Option<usize>,
    /// Wait this long before sending the response head: a server slow to answer.
    pub latency: Duration,
}

impl Default for Fixture {
    /// An empty `200` response.
    fn default() -> Self {
        Fixture {
            status: 200,
            headers: Vec::new(),
            body: Bytes::new(),
            chunk_size: 0,
            chunk_delay: Duration::ZERO,
            reset_after: None,
            latency: Duration::ZERO,
        }
    }
}

impl Fixture {
    /// A `200 text/html; charset=utf-8` page.
    pub fn html(body: &str) -> Self {
        Fixture {
            headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
            body: Bytes::copy_from_slice(body.as_bytes()),
            ..Fixture::default()
        }
    }

    /// A redirect (`301`, `302`, `303`, `307`, `308`, …) to `location`, with a tiny HTML body.
    pub fn redirect(status: u16, location: &str) -> Self {
        Fixture {
            status,
            headers: vec![
                ("location".into(), location.into()),
                ("content-type".into(), "text/html; charset=utf-8".into()),
            ],
            body: Bytes::from_static(b"<!DOCTYPE html><title>Redirect</title><p>Moved.</p>\n"),
            ..Fixture::default()
        }
    }

    /// Adds one header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits `latency` before sending the response head (the time a slow server takes to
    /// answer, as a client measures it up to the headers).
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Sends `n` bytes of the body, then resets the connection.
    pub fn reset_after(mut self, n: usize) -> Self {
        self.reset_after = Some(n);
        self
    }

    /// A plain-text response with any status (`Fixture::status(503, "busy")`).
    pub fn status(status: u16, body: &str) -> Self {
        Fixture {
            status,
            headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
            body: Bytes::copy_from_slice(body.as_bytes()),
            ..Fixture::default()
        }
    }

    /// Sends the body `chunk_size` bytes at a time, pausing `chunk_delay` before each chunk.
    pub fn trickle(mut self, chunk_size: usize, chunk_delay: Duration) -> Self {
        self.chunk_size = chunk_size;
        self.chunk_delay = chunk_delay;
        self
    }
}

/// A fixture checked and converted once at start-up, so serving it only clones handles.
#[derive(Debug)]
pub(crate) struct Prepared {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    chunk_size: usize,
    chunk_delay: Duration,
    reset_after: Option<usize>,
    pub(crate) latency: Duration,
}

impl Prepared {
    pub(crate) fn new(path: &str, f: Fixture) -> io::Result<Self> {
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
        let status = StatusCode::from_u16(f.status)
            .map_err(|_| bad(format!("fixture {path}: bad status {}", f.status)))?;
        let mut headers = HeaderMap::with_capacity(f.headers.len());
        for (name, value) in &f.headers {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| bad(format!("fixture {path}: bad header name {name:?}")))?;
            let v = HeaderValue::from_str(value)
                .map_err(|_| bad(format!("fixture {path}: bad value for {name}: {value:?}")))?;
            headers.append(n, v);
        }
        Ok(Prepared {
            status,
            headers,
            body: f.body,
            chunk_size: f.chunk_size,
            chunk_delay: f.chunk_delay,
            reset_after: f.reset_after,
            latency: f.latency,
        })
    }

    /// The answer to `req`: `304 Not Modified` (the fixture's headers, no body) when the
    /// fixture is a `200` with an `ETag` that `If-None-Match` names, or, without
    /// `If-None-Match`, a `Last-Modified` that `If-Modified-Since` repeats byte for byte (as
    /// crawlers must send it); otherwise the fixture itself.
    pub(crate) fn respond_to(&self, req: &http::request::Parts) -> Response<Body> {
        if self.status == StatusCode::OK && self.not_modified(&req.headers) {
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = StatusCode::NOT_MODIFIED;
            *resp.headers_mut() = self.headers.clone();
            resp.headers_mut().remove(http::header::CONTENT_LENGTH);
            return resp;
        }
        if self.status == StatusCode::OK
            && self.chunk_size == 0
            && self.reset_after.is_none()
            && let Some((from, to)) = byte_range(&req.headers, self.body.len())
        {
            let mut resp = Response::new(Body::full(self.body.slice(from..=to)));
            *resp.status_mut() = StatusCode::PARTIAL_CONTENT;
            *resp.headers_mut() = self.headers.clone();
            resp.headers_mut().remove(http::header::CONTENT_LENGTH);
            let range = format!("bytes {from}-{to}/{}", self.body.len());
            if let Ok(v) = HeaderValue::from_str(&range) {
                resp.headers_mut().insert(http::header::CONTENT_RANGE, v);
            }
            return resp;
        }
        self.respond()
    }

    fn not_modified(&self, asked: &HeaderMap) -> bool {
        let ours = |name| self.headers.get(name).map(HeaderValue::as_bytes);
        not_modified(asked, ours(http::header::ETAG), ours(http::header::LAST_MODIFIED))
    }

    pub(crate) fn respond(&self) -> Response<Body> {
        let body =
            Body::trickle_then_reset(self.body.clone(), self.chunk_size, self.chunk_delay, self.reset_after);
        let mut resp = Response::new(body);
        *resp.status_mut() = self.status;
        *resp.headers_mut() = self.headers.clone();
        resp
    }
}

/// Whether a request with `asked` headers names the current validators of a page (`etag`,
/// `last_modified`), so that `304 Not Modified` answers it: `If-None-Match` by weak comparison
/// (RFC 9110 §13.1.2: `W/` aside, the tags must be equal) or `*`; without it,
/// `If-Modified-Since` repeating `Last-Modified` byte for byte, as crawlers must send it.
pub(crate) fn not_modified(asked: &HeaderMap, etag: Option<&[u8]>, last_modified: Option<&[u8]>) -> bool {
    if let Some(inm) = asked.get(http::header::IF_NONE_MATCH) {
        let Some(etag) = etag else { return false };
        let weak = |t: &[u8]| t.strip_prefix(b"W/").unwrap_or(t).to_vec();
        return inm.as_bytes() == b"*"
            || inm.as_bytes().split(|&b| b == b',').any(|t| weak(t.trim_ascii()) == weak(etag));
    }
    match (asked.get(http::header::IF_MODIFIED_SINCE), last_modified) {
        (Some(ims), Some(lm)) => ims.as_bytes() == lm,
        _ => false,
    }
}

/// The first and last byte `Range: bytes=A-B` (or `A-`) asks for of a body of `len` bytes,
/// when it is one range that fits.
fn byte_range(asked: &HeaderMap, len: usize) -> Option<(usize, usize)> {
    let spec = asked.get(http::header::RANGE)?.to_str().ok()?.strip_prefix("bytes=")?;
    let (from, to) = spec.trim().split_once('-')?;
    let from: usize = from.parse().ok()?;
    let to =
        if to.is_empty() { len.checked_sub(1)? } else { to.parse::<usize>().ok()?.min(len.checked_sub(1)?) };
    (from <= to).then_some((from, to))
}

/// A small HTML response for the server's own errors (404, 403, 405).
pub(crate) fn error_page(status: StatusCode) -> Response<Body> {
    let body: &'static [u8] = match status {
        StatusCode::NOT_FOUND => b"<!DOCTYPE html><title>404 Not Found</title><h1>Not Found</h1>\n",
        StatusCode::FORBIDDEN => b"<!DOCTYPE html><title>403 Forbidden</title><h1>Forbidden</h1>\n",
        StatusCode::METHOD_NOT_ALLOWED => {
            b"<!DOCTYPE html><title>405 Method Not Allowed</title><h1>Method Not Allowed</h1>\n"
        }
        _ => b"<!DOCTYPE html><title>Error</title><h1>Error</h1>\n",
    };
    let mut resp = Response::new(Body::full(Bytes::from_static(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    if status == StatusCode::METHOD_NOT_ALLOWED {
        resp.headers_mut().insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    resp
}

/// A redirect the server makes itself (the directory's trailing-slash `301`).
pub(crate) fn redirect(status: StatusCode, location: &str) -> Response<Body> {
    match HeaderValue::from_str(location) {
        Ok(loc) => {
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = status;
            resp.headers_mut().insert(LOCATION, loc);
            resp
        }
        // The location is built from the request's own path, so this cannot really happen.
        Err(_) => error_page(StatusCode::NOT_FOUND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(range: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::RANGE, HeaderValue::from_str(range).unwrap());
        h
    }

    #[test]
    fn one_byte_range_that_fits_is_served() {
        assert_eq!(byte_range(&asked("bytes=0-9"), 100), Some((0, 9)));
        assert_eq!(byte_range(&asked("bytes=90-"), 100), Some((90, 99)));
        assert_eq!(byte_range(&asked("bytes=0-999"), 100), Some((0, 99)), "cut at the end");
        assert_eq!(byte_range(&asked("bytes=100-"), 100), None);
        assert_eq!(byte_range(&asked("bytes=0-1,5-6"), 100), None, "one range only");
        assert_eq!(byte_range(&asked("items=0-1"), 100), None);
        assert_eq!(byte_range(&HeaderMap::new(), 100), None);
    }
}
