//! The header part of a WARC record: the `WARC/1.1` line, named fields, and the blank line.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Builds a record's header in the order every record shares: version, type, id, date, the
/// type's own fields, then Content-Type and Content-Length last (they depend on the block).
pub(crate) struct WarcHead {
    buf: String,
}

impl WarcHead {
    pub(crate) fn new(warc_type: &str, record_id: &str, date: &str) -> Self {
        let mut buf = String::with_capacity(512);
        buf.push_str("WARC/1.1\r\n");
        let mut h = WarcHead { buf };
        h.field("WARC-Type", warc_type);
        h.field("WARC-Record-ID", record_id);
        h.field("WARC-Date", date);
        h
    }

    /// `value` must be one line; callers pass values they built or cleaned ([`one_line`]).
    pub(crate) fn field(&mut self, name: &str, value: &str) -> &mut Self {
        self.buf.push_str(name);
        self.buf.push_str(": ");
        self.buf.push_str(value);
        self.buf.push_str("\r\n");
        self
    }

    pub(crate) fn finish(mut self, content_type: &str, block_len: usize) -> Vec<u8> {
        self.field("Content-Type", content_type);
        let _ = write!(self.buf, "Content-Length: {block_len}\r\n\r\n");
        self.buf.into_bytes()
    }
}

/// A URI fit for a WARC header: bytes that would end the line or split it (controls, spaces)
/// are percent-encoded. Crawled URLs are already clean, so this is nearly always a borrow.
pub(crate) fn clean_uri(uri: &str) -> Cow<'_, str> {
    if !uri.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Cow::Borrowed(uri);
    }
    let mut s = String::with_capacity(uri.len() + 8);
    for c in uri.chars() {
        if c <= ' ' || c == '\x7f' {
            let _ = write!(s, "%{:02X}", c as u32);
        } else {
            s.push(c);
        }
    }
    Cow::Owned(s)
}

/// A free-text value on one line: line breaks and other controls become spaces.
pub(crate) fn one_line(value: &str) -> Cow<'_, str> {
    if !value.chars().any(char::is_control) {
        return Cow::Borrowed(value);
    }
    Cow::Owned(value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_layout() {
        let mut h = WarcHead::new("response", "<urn:uuid:x>", "2026-11-27T05:50:31Z");
        h.field("WARC-Target-URI", "http://a.test/");
        let bytes = h.finish("application/http;msgtype=response", 12);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:x>\r\n\
             WARC-Date: 2026-11-27T05:50:31Z\r\nWARC-Target-URI: http://a.test/\r\n\
             Content-Type: application/http;msgtype=response\r\nContent-Length: 12\r\n\r\n"
        );
    }

    #[test]
    fn cleaning() {
        assert!(matches!(clean_uri("http://a.test/x?y=1"), Cow::Borrowed(_)));
        assert_eq!(clean_uri("http://a.test/a b\r\n"), "http://a.test/a%20b%0D%0A");
        assert_eq!(one_line("two\r\nlines"), "two  lines");
    }
}
