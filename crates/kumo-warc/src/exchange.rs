//! What the crawler hands over for one HTTP exchange: [`Exchange`] and, for a recrawl, [`Revisit`].

use std::net::IpAddr;
use std::time::SystemTime;

/// One HTTP exchange as the crawler saw it.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// The URL asked for (WARC-Target-URI, written without angle brackets).
    pub target: &'a str,
    /// When the request was sent: the WARC-Date of every record of the exchange (UTC, to the
    /// second).
    pub date: SystemTime,
    /// The request's method.
    pub method: &'a http::Method,
    /// The request headers as sent. The request record is reconstructed: `GET /path?query
    /// HTTP/1.1`, then `host` (from the target, with a port only if not the default) unless the
    /// map has one, then the map's headers in its iteration order.
    pub request_headers: &'a http::HeaderMap,
    /// The request body as sent; empty for none.
    pub request_body: &'a [u8],
    /// The HTTP version spoken, which WARC-Protocol names. The heads are written as HTTP/1.1
    /// (HTTP/1.0 for 1.0 and 0.9) whatever it was.
    pub version: http::Version,
    /// The response's status code.
    pub status: http::StatusCode,
    /// The response headers as received. The record renames `Transfer-Encoding` and makes
    /// `Content-Length` match the stored payload (not for a 304, nor a truncated payload).
    pub response_headers: &'a http::HeaderMap,
    /// The body as it came over the wire: transfer coding (chunking) already removed, content
    /// coding (gzip, br...) kept.
    pub payload: &'a [u8],
    /// The server's address (WARC-IP-Address), if known.
    pub ip: Option<IpAddr>,
    /// The payload was cut at the crawler's size cap: `WARC-Truncated: length`.
    pub truncated: bool,
    /// Links found in the page: a `metadata` record (`outlink: URL` lines, WARC-Concurrent-To
    /// the response) follows when not empty.
    pub outlinks: &'a [String],
    /// Write a `revisit` record instead of a `response`.
    pub revisit: Option<Revisit>,
}

/// Why an exchange is archived as a `revisit` record, whose block is the HTTP head only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revisit {
    /// A 304 to a conditional request: profile `…/revisit/server-not-modified`, no payload
    /// digest (there is no payload), `WARC-Refers-To-Target-URI` = target.
    NotModified,
    /// A body identical to one the crawl archived before: profile
    /// `…/revisit/identical-payload-digest`, WARC-Payload-Digest of the (identical) payload,
    /// `WARC-Refers-To-Target-URI` = target, `WARC-Refers-To-Date` when known.
    IdenticalPayload {
        /// When the archived original was fetched, if known.
        refers_to_date: Option<SystemTime>,
    },
}

impl Revisit {
    pub(crate) fn profile(self) -> &'static str {
        match self {
            Revisit::NotModified => "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
            Revisit::IdenticalPayload { .. } => {
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
            }
        }
    }
}
