//! What the tests share: an owned exchange to borrow [`Exchange`]s from, and digest checks done
//! independently of the crate.

use std::io::Write;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderValue, Method, StatusCode, Version};
use kumo_warc::{Exchange, Revisit};

/// 2026-11-27T05:50:31Z.
pub fn date() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_758_631)
}

pub struct Fetch {
    pub target: String,
    pub method: Method,
    pub request_headers: HeaderMap,
    pub request_body: Vec<u8>,
    pub version: Version,
    pub status: StatusCode,
    pub response_headers: HeaderMap,
    pub payload: Vec<u8>,
    pub ip: Option<IpAddr>,
    pub truncated: bool,
    pub outlinks: Vec<String>,
    pub revisit: Option<Revisit>,
}

impl Fetch {
    /// A plain HTML page of `size` bytes with two outlinks.
    pub fn page(target: &str, size: usize) -> Fetch {
        let mut request_headers = HeaderMap::new();
        request_headers.insert("user-agent", HeaderValue::from_static("kumo-test/1"));
        request_headers.insert("accept-encoding", HeaderValue::from_static("gzip, br"));
        let mut response_headers = HeaderMap::new();
        response_headers.insert("content-type", HeaderValue::from_static("text/html; charset=utf-8"));
        response_headers.insert("content-length", HeaderValue::from(size));
        Fetch {
            target: target.to_string(),
            method: Method::GET,
            request_headers,
            request_body: Vec::new(),
            version: Version::HTTP_11,
            status: StatusCode::OK,
            response_headers,
            payload: html(size),
            ip: Some("127.0.0.1".parse().unwrap()),
            truncated: false,
            outlinks: vec![format!("{target}#a"), "http://other.test/x?y=1".to_string()],
            revisit: None,
        }
    }

    pub fn exchange(&self) -> Exchange<'_> {
        Exchange {
            target: &self.target,
            date: date(),
            method: &self.method,
            request_headers: &self.request_headers,
            request_body: &self.request_body,
            version: self.version,
            status: self.status,
            response_headers: &self.response_headers,
            payload: &self.payload,
            ip: self.ip,
            truncated: self.truncated,
            outlinks: &self.outlinks,
            revisit: self.revisit,
        }
    }
}

/// Some HTML that compresses about as well as real pages do.
pub fn html(size: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(size as u64);
    let words =
        ["shop", "price", "<a href=\"/p/", "\">", "</a>", "<li>", "</li>", "red", "blue", "size", "42"];
    let mut s = String::from("<!doctype html><html><body>\n");
    while s.len() < size {
        s.push_str(words[rng.usize(..words.len())]);
        s.push_str(&rng.u32(..100_000).to_string());
        s.push(' ');
    }
    s.truncate(size);
    s.into_bytes()
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `sha1:BASE32`, computed here rather than by the crate.
pub fn sha1(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, bytes);
    format!("sha1:{}", data_encoding::BASE32.encode(d.as_ref()))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
