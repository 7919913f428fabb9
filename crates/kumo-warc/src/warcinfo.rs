//! The `warcinfo` record that starts every file: what wrote it, and how to read its records.

use std::time::SystemTime;

use crate::date::warc_date;
use crate::digest::sha1_digest;
use crate::record_id::new_record_id;
use crate::records::{RECORD_END, RecordOptions, Records, WARC_FIELDS};
use crate::warc_head::{WarcHead, one_line};

const CONFORMS_TO: &str = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// Readers must not take the HTTP records for wire captures.
const HTTP_HEADER_NOTE: &str = "HTTP records reconstructed from the client's view: header order and case are \
    not the wire's, HTTP/2 and HTTP/3 are written as HTTP/1.1 (see WARC-Protocol), payloads are stored \
    without transfer coding (Transfer-Encoding renamed X-Crawler-Transfer-Encoding) and with their \
    content coding";

/// The warcinfo record of the file `filename`.
pub(crate) fn warcinfo(
    filename: &str,
    date: SystemTime,
    software: &str,
    info: &[(String, String)],
    opts: &RecordOptions,
) -> Records {
    let mut block = String::with_capacity(512);
    let mut field = |name: &str, value: &str| {
        // A field name is a token: no colon, space or control may end or split it.
        block.extend(
            name.chars().map(|c| if c == ':' || c.is_whitespace() || c.is_control() { '-' } else { c }),
        );
        block.push_str(": ");
        block.push_str(&one_line(value));
        block.push_str("\r\n");
    };
    field("software", software);
    field("format", "WARC File Format 1.1");
    field("conformsTo", CONFORMS_TO);
    field("http-header-note", HTTP_HEADER_NOTE);
    for (name, value) in info {
        field(name, value);
    }
    let mut h = WarcHead::new("warcinfo", &new_record_id(), &warc_date(date));
    h.field("WARC-Filename", filename);
    h.field("WARC-Block-Digest", &sha1_digest(&[block.as_bytes()]));
    let head = h.finish(WARC_FIELDS, block.len());
    let mut records = Records::default();
    records.push(&[&head, block.as_bytes(), RECORD_END], opts.gzip_level);
    records
}
