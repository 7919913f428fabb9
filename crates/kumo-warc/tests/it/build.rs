//! `build` → the file → `WarcReader`: every field of every record type, digests recomputed here.

use crate::common;

use std::io::Write;

use common::{Fetch, gzip, sha1, text};
use http::{HeaderValue, Method, StatusCode, Version};
use kumo_warc::{Record, RecordOptions, Records, Revisit, WarcReader, build};

/// Writes `records` to a file and reads them back, checking that members and offsets agree.
fn read_back(records: &Records) -> Vec<Record> {
    assert_eq!(records.members.iter().sum::<u64>(), records.bytes.len() as u64);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&records.bytes).unwrap();
    let read: Vec<Record> = WarcReader::open(file.path()).unwrap().map(Result::unwrap).collect();
    let mut offset = 0;
    for (r, &len) in read.iter().zip(&records.members) {
        assert_eq!((r.info.offset, r.info.length), (offset, len));
        offset += len;
    }
    assert_eq!(read.len(), records.members.len());
    read
}

fn built(fetch: &Fetch) -> Vec<Record> {
    read_back(&build(&fetch.exchange(), &RecordOptions::default()))
}

/// The HTTP head of a block, and the rest.
fn split_head(block: &[u8]) -> (String, &[u8]) {
    let end = block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    (text(&block[..end]), &block[end..])
}

#[test]
fn a_page_makes_response_request_and_metadata() {
    let fetch = Fetch::page("http://127.0.0.1:18765/b.html?x=1", 12_000);
    let records = built(&fetch);
    let types: Vec<&str> = records.iter().map(|r| r.info.warc_type.as_str()).collect();
    assert_eq!(types, ["response", "request", "metadata"]);
    let [response, request, metadata] = &records[..] else { unreachable!() };

    // Fields every record has.
    for r in &records {
        let i = &r.info;
        assert_eq!(i.headers[0], ("WARC-Type".to_string(), i.warc_type.clone()));
        assert!(i.record_id.starts_with("<urn:uuid:") && i.record_id.ends_with('>'), "{}", i.record_id);
        assert_eq!(i.date, "2026-11-27T05:50:31Z");
        assert_eq!(i.target.as_deref(), Some("http://127.0.0.1:18765/b.html?x=1"));
        assert_eq!(i.content_length, r.block.len() as u64);
        assert_eq!(i.block_digest.as_deref(), Some(sha1(&r.block).as_str()));
    }
    assert_ne!(response.info.record_id, request.info.record_id);
    assert_ne!(request.info.record_id, metadata.info.record_id);

    // The response.
    let i = &response.info;
    assert_eq!(i.content_type.as_deref(), Some("application/http;msgtype=response"));
    assert_eq!(i.header("WARC-IP-Address"), Some("127.0.0.1"));
    assert_eq!(i.header("WARC-Protocol"), Some("http/1.1"));
    assert_eq!(i.header("WARC-Truncated"), None);
    assert_eq!(i.concurrent_to, None);
    assert_eq!(i.http_status, Some(200));
    assert_eq!(i.http_content_type.as_deref(), Some("text/html; charset=utf-8"));
    let (head, payload) = split_head(&response.block);
    assert_eq!(payload, fetch.payload);
    assert_eq!(i.payload_digest.as_deref(), Some(sha1(&fetch.payload).as_str()));
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: 12000\r\n\r\n"
    );

    // The request.
    let i = &request.info;
    assert_eq!(i.content_type.as_deref(), Some("application/http;msgtype=request"));
    assert_eq!(i.concurrent_to.as_deref(), Some(response.info.record_id.as_str()));
    assert_eq!(i.payload_digest, None);
    assert_eq!(
        text(&request.block),
        "GET /b.html?x=1 HTTP/1.1\r\nhost: 127.0.0.1:18765\r\nuser-agent: kumo-test/1\r\n\
         accept-encoding: gzip, br\r\n\r\n"
    );

    // The outlinks.
    let i = &metadata.info;
    assert_eq!(i.content_type.as_deref(), Some("application/warc-fields"));
    assert_eq!(i.concurrent_to.as_deref(), Some(response.info.record_id.as_str()));
    assert_eq!(
        text(&metadata.block),
        "outlink: http://127.0.0.1:18765/b.html?x=1#a\r\noutlink: http://other.test/x?y=1\r\n"
    );
}

#[test]
fn a_gzip_body_is_kept_encoded_and_its_chunking_is_named() {
    let mut fetch = Fetch::page("https://a.test/", 0);
    fetch.payload = gzip(&common::html(20_000));
    fetch.response_headers.remove("content-length");
    fetch.response_headers.insert("content-encoding", HeaderValue::from_static("gzip"));
    fetch.response_headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
    let records = built(&fetch);
    let response = &records[0];
    let (head, payload) = split_head(&response.block);
    // The digest of the bytes as sent, content coding and all (warc-specifications#22).
    assert_eq!(response.info.payload_digest.as_deref(), Some(sha1(&fetch.payload).as_str()));
    assert_eq!(payload, fetch.payload);
    assert_eq!(
        head,
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-encoding: gzip\r\n\
             x-crawler-transfer-encoding: chunked\r\ncontent-length: {}\r\n\r\n",
            fetch.payload.len()
        )
    );
    // The default port is not written into Host.
    assert!(text(&records[1].block).starts_with("GET / HTTP/1.1\r\nhost: a.test\r\n"));
}

#[test]
fn http2_is_written_as_http11_with_its_protocol_named() {
    let mut fetch = Fetch::page("https://a.test:8443/p", 100);
    fetch.version = Version::HTTP_2;
    let records = built(&fetch);
    assert_eq!(records[0].info.header("WARC-Protocol"), Some("h2"));
    let (head, _) = split_head(&records[0].block);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(!head.lines().any(|l| l.starts_with(':')), "{head}");
    assert!(text(&records[1].block).starts_with("GET /p HTTP/1.1\r\nhost: a.test:8443\r\n"));
}

#[test]
fn http10_keeps_its_version() {
    let mut fetch = Fetch::page("http://a.test/", 100);
    fetch.version = Version::HTTP_10;
    fetch.status = StatusCode::NOT_FOUND;
    let records = built(&fetch);
    assert!(text(&records[0].block).starts_with("HTTP/1.0 404 Not Found\r\n"));
    assert_eq!(records[0].info.http_status, Some(404));
    assert_eq!(records[0].info.header("WARC-Protocol"), Some("http/1.0"));
}

#[test]
fn a_wrong_content_length_is_renamed_unless_truncated() {
    let mut fetch = Fetch::page("http://a.test/", 1000);
    fetch.response_headers.insert("content-length", HeaderValue::from_static("5000"));
    let (head, _) = split_head(&built(&fetch)[0].block);
    assert!(head.contains("\r\nx-crawler-content-length: 5000\r\n"), "{head}");
    assert!(head.contains("\r\ncontent-length: 1000\r\n"), "{head}");

    fetch.truncated = true;
    let records = built(&fetch);
    assert_eq!(records[0].info.header("WARC-Truncated"), Some("length"));
    let (head, payload) = split_head(&records[0].block);
    assert!(head.contains("\r\ncontent-length: 5000\r\n"), "{head}");
    assert!(!head.contains("x-crawler-content-length"), "{head}");
    assert_eq!(payload.len(), 1000);
    assert_eq!(records[0].info.payload_digest.as_deref(), Some(sha1(&fetch.payload).as_str()));
}

#[test]
fn a_request_body_is_archived_with_its_length() {
    let mut fetch = Fetch::page("http://a.test/form", 10);
    fetch.method = Method::POST;
    fetch.request_body = b"a=1&b=2".to_vec();
    let request = &built(&fetch)[1];
    assert_eq!(
        text(&request.block),
        "POST /form HTTP/1.1\r\nhost: a.test\r\nuser-agent: kumo-test/1\r\naccept-encoding: gzip, br\r\n\
         content-length: 7\r\n\r\na=1&b=2"
    );
    assert_eq!(request.info.block_digest.as_deref(), Some(sha1(&request.block).as_str()));
}

#[test]
fn no_outlinks_no_metadata() {
    let mut fetch = Fetch::page("http://a.test/", 10);
    fetch.outlinks.clear();
    let types: Vec<String> = built(&fetch).into_iter().map(|r| r.info.warc_type).collect();
    assert_eq!(types, ["response", "request"]);
}

#[test]
fn a_304_is_a_server_not_modified_revisit() {
    let mut fetch = Fetch::page("http://a.test/p", 0);
    fetch.status = StatusCode::NOT_MODIFIED;
    fetch.response_headers.remove("content-length");
    fetch.response_headers.insert("etag", HeaderValue::from_static("\"v1\""));
    fetch.revisit = Some(Revisit::NotModified);
    let records = built(&fetch);
    let r = &records[0];
    assert_eq!(r.info.warc_type, "revisit");
    assert_eq!(
        r.info.header("WARC-Profile"),
        Some("http://netpreserve.org/warc/1.1/revisit/server-not-modified")
    );
    assert_eq!(r.info.header("WARC-Refers-To-Target-URI"), Some("http://a.test/p"));
    assert_eq!(r.info.content_type.as_deref(), Some("application/http;msgtype=response"));
    assert_eq!(r.info.payload_digest, None);
    assert_eq!(r.info.header("WARC-Truncated"), None);
    assert_eq!(r.info.http_status, Some(304));
    assert_eq!(
        text(&r.block),
        "HTTP/1.1 304 Not Modified\r\ncontent-type: text/html; charset=utf-8\r\netag: \"v1\"\r\n\r\n"
    );
    assert_eq!(r.info.block_digest.as_deref(), Some(sha1(&r.block).as_str()));
    assert_eq!(records[1].info.concurrent_to.as_deref(), Some(r.info.record_id.as_str()));
}

#[test]
fn an_identical_body_is_an_identical_payload_revisit() {
    let mut fetch = Fetch::page("http://a.test/p", 3000);
    let before = common::date() - std::time::Duration::from_secs(86_400);
    fetch.revisit = Some(Revisit::IdenticalPayload { refers_to_date: Some(before) });
    let r = &built(&fetch)[0];
    assert_eq!(r.info.warc_type, "revisit");
    assert_eq!(
        r.info.header("WARC-Profile"),
        Some("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
    );
    assert_eq!(r.info.header("WARC-Refers-To-Target-URI"), Some("http://a.test/p"));
    assert_eq!(r.info.header("WARC-Refers-To-Date"), Some("2026-11-26T05:50:31Z"));
    assert_eq!(r.info.payload_digest.as_deref(), Some(sha1(&fetch.payload).as_str()));
    // The head only, which still describes the archived body.
    assert_eq!(
        text(&r.block),
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: 3000\r\n\r\n"
    );
    assert_eq!(r.info.block_digest.as_deref(), Some(sha1(&r.block).as_str()));

    fetch.revisit = Some(Revisit::IdenticalPayload { refers_to_date: None });
    assert_eq!(built(&fetch)[0].info.header("WARC-Refers-To-Date"), None);
}

#[test]
fn every_gzip_level_reads_back() {
    let fetch = Fetch::page("http://a.test/", 50_000);
    for level in [0, 1, 6, 9] {
        let records = build(&fetch.exchange(), &RecordOptions { gzip_level: level });
        let read = read_back(&records);
        assert_eq!(split_head(&read[0].block).1, fetch.payload, "level {level}");
    }
}

#[test]
fn a_target_with_spaces_is_escaped_in_headers() {
    let fetch = Fetch::page("http://a.test/a b", 10);
    let records = built(&fetch);
    assert_eq!(records[0].info.target.as_deref(), Some("http://a.test/a%20b"));
    assert!(text(&records[1].block).starts_with("GET /a%20b HTTP/1.1\r\n"));
}
