//! The records of one exchange: a response (or revisit), its request, and its outlinks.
//!
//! They come out in Heritrix's order, response, request, metadata, which Browsertrix writes
//! too: cdxj-indexer pairs a response with the request that follows it and names it in
//! WARC-Concurrent-To (for `--post-append` and `req.http:` fields); readers that just list
//! records do not mind the order.

use crate::cdxj::{IndexFields, mime_of};
use crate::date::warc_date;
use crate::digest::sha1_digest;
use crate::exchange::{Exchange, Revisit};
use crate::gzip::append_member;
use crate::http_head::{Length, protocol, request_head, response_head};
use crate::record_id::new_record_id;
use crate::warc_head::{WarcHead, clean_uri};

const HTTP_RESPONSE: &str = "application/http;msgtype=response";
const HTTP_REQUEST: &str = "application/http;msgtype=request";
pub(crate) const WARC_FIELDS: &str = "application/warc-fields";
/// What follows every block.
pub(crate) const RECORD_END: &[u8] = b"\r\n\r\n";

/// Settings of the records (not of the files).
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The gzip level of each record, 0 (stored) to 9. Records under 1 KiB are stored whatever
    /// the level: compressing them costs more time than the bytes are worth.
    pub gzip_level: u32,
}

impl Default for RecordOptions {
    /// Level 1: on a 12 KB HTML page it deflates about four times as fast as level 6, for
    /// files about a sixth larger (see `benches/build.rs`).
    fn default() -> Self {
        RecordOptions { gzip_level: 1 }
    }
}

/// The records of one exchange, each its own gzip member, ready to append.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// The members, concatenated.
    pub bytes: Vec<u8>,
    /// Each member's compressed length, in order (they sum to `bytes.len()`).
    pub members: Vec<u64>,
    /// The start of the CDXJ line of each indexed member, by member number: [`build`] has the
    /// fields at hand, which reading them back would take inflating the whole file again.
    /// None for records not made by `build`.
    index: Option<Vec<(usize, String)>>,
}

impl Records {
    /// The index line starts of the records, if they came with them and fit `members`.
    pub(crate) fn index_lines(&self) -> Option<&[(usize, String)]> {
        let lines = self.index.as_deref()?;
        let fits = self.members.iter().sum::<u64>() == self.bytes.len() as u64
            && lines.iter().all(|(m, _)| *m < self.members.len());
        fits.then_some(lines)
    }

    /// Appends one record, `parts` taken as one byte string, as its own member.
    pub(crate) fn push(&mut self, parts: &[&[u8]], gzip_level: u32) {
        let len = append_member(&mut self.bytes, parts, gzip_level);
        self.members.push(len);
    }
}

/// Builds the response (or revisit), request and metadata records of `ex`, in that order.
pub fn build(ex: &Exchange<'_>, opts: &RecordOptions) -> Records {
    let level = opts.gzip_level;
    let date = warc_date(ex.date);
    let target = clean_uri(ex.target);
    let ip = ex.ip.map(|ip| ip.to_string());
    let response_id = new_record_id();
    let mut records = Records {
        bytes: Vec::with_capacity(ex.payload.len() / 2 + 2048),
        members: Vec::with_capacity(3),
        index: None,
    };
    let mut http = Vec::with_capacity(1024);

    // The response, or the revisit standing for it.
    let len = ex.payload.len();
    let (warc_type, length) = match ex.revisit {
        None if ex.truncated => ("response", Length::Truncated { len }),
        None => ("response", Length::Fix { len, add_missing: true }),
        // A 304's head describes the archived body, not an empty one: leave it be.
        Some(Revisit::NotModified) => ("revisit", Length::AsIs),
        Some(Revisit::IdenticalPayload { .. }) => ("revisit", Length::Fix { len, add_missing: true }),
    };
    response_head(&mut http, ex.version, ex.status, ex.response_headers, length);
    let mut h = WarcHead::new(warc_type, &response_id, &date);
    h.field("WARC-Target-URI", &target);
    if let Some(ip) = &ip {
        h.field("WARC-IP-Address", ip);
    }
    if let Some(p) = protocol(ex.version) {
        h.field("WARC-Protocol", p);
    }
    match ex.revisit {
        None if ex.truncated => {
            h.field("WARC-Truncated", "length");
        }
        None => {}
        Some(revisit) => {
            h.field("WARC-Profile", revisit.profile());
            h.field("WARC-Refers-To-Target-URI", &target);
            if let Revisit::IdenticalPayload { refers_to_date: Some(d) } = revisit {
                h.field("WARC-Refers-To-Date", &warc_date(d));
            }
        }
    }
    // A 304 has no payload to digest.
    let payload_digest = (ex.revisit != Some(Revisit::NotModified)).then(|| sha1_digest(&[ex.payload]));
    if let Some(digest) = &payload_digest {
        h.field("WARC-Payload-Digest", digest);
    }
    // A revisit's block is the HTTP head alone.
    let payload: &[u8] = if ex.revisit.is_some() { b"" } else { ex.payload };
    h.field("WARC-Block-Digest", &sha1_digest(&[&http, payload]));
    let head = h.finish(HTTP_RESPONSE, http.len() + payload.len());
    records.push(&[&head, &http, payload, RECORD_END], level);

    // Its index line, while the fields are at hand (see `cdxj`).
    let mime = match ex.revisit {
        Some(_) => Some("warc/revisit".to_string()),
        None => ex
            .response_headers
            .get(http::header::CONTENT_TYPE)
            .map(|v| mime_of(&String::from_utf8_lossy(v.as_bytes()))),
    };
    let fields = IndexFields {
        url: &target,
        date: &date,
        mime: mime.as_deref(),
        status: Some(ex.status.as_u16()),
        digest: payload_digest.as_deref(),
    };
    records.index = Some(vec![(0, fields.line_start())]);

    // The request.
    http.clear();
    let body = ex.request_body;
    request_head(&mut http, &target, ex.method, ex.version, ex.request_headers, body.len());
    let mut h = WarcHead::new("request", &new_record_id(), &date);
    h.field("WARC-Target-URI", &target);
    h.field("WARC-Concurrent-To", &response_id);
    h.field("WARC-Block-Digest", &sha1_digest(&[&http, body]));
    let head = h.finish(HTTP_REQUEST, http.len() + body.len());
    records.push(&[&head, &http, body, RECORD_END], level);

    // The outlinks.
    if !ex.outlinks.is_empty() {
        http.clear();
        for link in ex.outlinks {
            http.extend_from_slice(b"outlink: ");
            http.extend_from_slice(clean_uri(link).as_bytes());
            http.extend_from_slice(b"\r\n");
        }
        let mut h = WarcHead::new("metadata", &new_record_id(), &date);
        h.field("WARC-Target-URI", &target);
        h.field("WARC-Concurrent-To", &response_id);
        h.field("WARC-Block-Digest", &sha1_digest(&[&http]));
        let head = h.finish(WARC_FIELDS, http.len());
        records.push(&[&head, &http, RECORD_END], level);
    }
    records
}
