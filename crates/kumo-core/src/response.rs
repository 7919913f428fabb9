//! What came back: status, headers, the URL that answered, and the body as shared bytes.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use encoding_rs::Encoding;
use http::{HeaderMap, StatusCode, header};
use url::Url;

use crate::Request;

/// A fetched response. `body` is [`Bytes`], so any number of parsers can hold it without a
/// copy (the seeds' "multiple reader").
#[derive(Debug, Clone)]
pub struct Response {
    /// The request that was fetched.
    pub request: Request,
    /// The status code the server answered with.
    pub status: StatusCode,
    /// The response headers as received (a `Content-Encoding` stays, though `body` is
    /// decoded).
    pub headers: HeaderMap,
    /// The URL that answered.
    pub url: Url,
    /// The decoded (decompressed) body, at most the configured size cap.
    pub body: Bytes,
    /// The body's character encoding as detected by [`crate::charset::detect`].
    pub encoding: &'static Encoding,
    /// When the request was sent, by the wall clock (for an answer replayed from a cache, when
    /// it was first fetched).
    pub fetched_at: SystemTime,
    /// From sending the request to the whole body read.
    pub elapsed: Duration,
    /// From sending the request to receiving the response headers: how long the server took
    /// to answer (what the adaptive throttle paces by).
    pub latency: Duration,
    /// The exchange as it went over the wire, for archiving (WARC); kept only by a downloader
    /// told to record, and never for an answer replayed from a cache.
    pub wire: Option<Box<Wire>>,
}

/// What an archive needs of an exchange beyond the response kumo reads.
#[derive(Debug, Clone)]
pub struct Wire {
    /// The request's headers as sent: the request's own, the downloader's (`User-Agent`,
    /// `Accept-Encoding`, `Accept`) and the cookie jar's `Cookie`. Header order and case are
    /// the client's, not the wire's: the HTTP client does not say what it wrote.
    pub request_headers: HeaderMap,
    /// The HTTP version the exchange used.
    pub version: http::Version,
    /// The server's address.
    pub remote: Option<std::net::SocketAddr>,
    /// The body as it came, its content coding kept (the chunking removed), when that differs
    /// from `body`: the same bytes otherwise, so they are not kept twice.
    pub coded_body: Option<Bytes>,
    /// The body was cut at the size cap: what came before it is all there is.
    pub truncated: bool,
}

impl Response {
    /// The body as it came over the wire (see [`Wire::coded_body`]).
    pub fn wire_body(&self) -> &Bytes {
        self.wire.as_ref().and_then(|w| w.coded_body.as_ref()).unwrap_or(&self.body)
    }
}

impl Response {
    /// The body decoded to text with the detected encoding (borrowed when it is valid UTF-8).
    pub fn text(&self) -> Cow<'_, str> {
        self.encoding.decode_with_bom_removal(&self.body).0
    }

    /// The `Content-Type` header's value, if any and readable.
    pub fn content_type(&self) -> Option<&str> {
        self.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok())
    }

    /// Whether the body should be parsed as HTML: a `text/html` or XHTML content type, or no
    /// content type at all with a body that starts like markup.
    pub fn is_html(&self) -> bool {
        match self.content_type() {
            Some(ct) => {
                let ct = ct.trim_start().to_ascii_lowercase();
                ct.starts_with("text/html") || ct.starts_with("application/xhtml+xml")
            }
            None => {
                let head = &self.body[..self.body.len().min(256)];
                head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
            }
        }
    }

    /// The absolute target of a redirect response, resolved against the URL that answered;
    /// `None` for an answer that is no redirect (a 304, or a 300 without a Location, is a
    /// page), an error for a redirect that leads nowhere.
    pub fn redirect_location(&self) -> Option<Result<Url, BadRedirect>> {
        if !self.status.is_redirection() {
            return None;
        }
        let status = self.status.as_u16();
        let Some(loc) = self.headers.get(header::LOCATION) else {
            // 301, 302, 303, 307 and 308 must say where to go (RFC 9110 §15.4).
            return matches!(status, 301 | 302 | 303 | 307 | 308)
                .then_some(Err(BadRedirect::NoLocation(status)));
        };
        let Ok(loc) = loc.to_str() else {
            return Some(Err(BadRedirect::NotText(status)));
        };
        Some(self.url.join(loc.trim()).map_err(|e| BadRedirect::Invalid(status, e)))
    }
}

/// Why a redirect cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRedirect {
    /// A 301, 302, 303, 307 or 308 (the status) without a `Location` header.
    #[error("{0} without a Location header")]
    NoLocation(u16),
    /// A `Location` header that is not visible ASCII text.
    #[error("{0} with a Location header that is not text")]
    NotText(u16),
    /// A `Location` that does not resolve to a URL against the URL that answered.
    #[error("{0} with a bad Location header: {1}")]
    Invalid(u16, url::ParseError),
}
