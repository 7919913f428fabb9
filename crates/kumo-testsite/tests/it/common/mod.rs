//! A tiny HTTP/1.1 client for the tests: one request per connection, every byte visible.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous, so a loaded machine does not fail a test; only a hung server hits it.
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How many chunks a chunked body came in (0 if it was not chunked).
    pub chunks: usize,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8 body")
    }
}

pub async fn get(addr: SocketAddr, target: &str) -> Resp {
    request(addr, "GET", target).await
}

pub async fn request(addr: SocketAddr, method: &str, target: &str) -> Resp {
    let fut = async {
        let mut s = send(addr, method, target, "close").await;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.expect("read response");
        parse(&raw, method == "HEAD")
    };
    tokio::time::timeout(TIMEOUT, fut).await.expect("response in time")
}

/// Opens a connection and sends one request, leaving the response unread.
pub async fn send(addr: SocketAddr, method: &str, target: &str, connection: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: {connection}\r\nContent-Length: 0\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("send request");
    s
}

/// Reads from `s` until at least `n` bytes of body have arrived after the response head.
pub async fn read_head_and_some(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let fut = async {
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = find(&raw, b"\r\n\r\n")
                && raw.len() >= end + 4 + n
            {
                return raw;
            }
            let got = s.read(&mut buf).await.expect("read");
            assert!(got > 0, "connection closed early");
            raw.extend_from_slice(&buf[..got]);
        }
    };
    tokio::time::timeout(TIMEOUT, fut).await.expect("bytes in time")
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn parse(raw: &[u8], head_only: bool) -> Resp {
    let end = find(raw, b"\r\n\r\n").expect("complete response head");
    let head = std::str::from_utf8(&raw[..end]).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status code");
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').expect("header line");
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let (body, chunks) = if head_only {
        (Vec::new(), 0)
    } else if chunked {
        dechunk(rest)
    } else {
        (rest.to_vec(), 0)
    };
    Resp { status, headers, body, chunks }
}

fn dechunk(mut rest: &[u8]) -> (Vec<u8>, usize) {
    let mut body = Vec::new();
    let mut chunks = 0;
    loop {
        let line_end = find(rest, b"\r\n").expect("chunk size line");
        let size_str = std::str::from_utf8(&rest[..line_end]).expect("ASCII size");
        let size =
            usize::from_str_radix(size_str.split(';').next().unwrap().trim(), 16).expect("hex chunk size");
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (body, chunks);
        }
        body.extend_from_slice(&rest[..size]);
        chunks += 1;
        rest = &rest[size + 2..];
    }
}

/// The `href` of every `<a …>` tag (double-quoted attributes only, which is all the test
/// sites use).
pub fn a_hrefs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<a ") {
        let after = &rest[start..];
        let end = after.find('>').expect("closed <a> tag");
        let tag = &after[..end];
        if let Some(h) = tag.find("href=\"") {
            let value = &tag[h + 6..];
            let close = value.find('"').expect("closed href");
            out.push(value[..close].to_owned());
        }
        rest = &after[end..];
    }
    out
}

/// What a minimal same-host crawler saw: status per URL (fragments removed) and link depth.
#[derive(Debug, Default)]
pub struct Crawl {
    pub status: std::collections::BTreeMap<String, u16>,
    pub depth: std::collections::BTreeMap<String, usize>,
    pub bodies: std::collections::BTreeMap<String, Vec<u8>>,
}

/// Breadth-first crawl of `start` over `<a href>` links and redirects on the same host.
/// Bounded by `max_urls`.
pub async fn crawl(addr: SocketAddr, start: &str, max_urls: usize) -> Crawl {
    use std::collections::VecDeque;
    let base = url::Url::parse(&format!("http://{addr}/")).unwrap();
    let mut out = Crawl::default();
    let first = base.join(start).unwrap();
    out.depth.insert(first.to_string(), 0);
    let mut queue = VecDeque::from([first]);
    while let Some(u) = queue.pop_front() {
        assert!(out.status.len() < max_urls, "crawl ran past {max_urls} URLs");
        let target = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        };
        let resp = get(addr, &target).await;
        out.status.insert(u.to_string(), resp.status);
        let d = out.depth[u.as_str()];
        let mut links = Vec::new();
        if let Some(loc) = resp.header("location") {
            links.push(loc.to_owned());
        }
        if resp.status == 200 && resp.header("content-type").is_some_and(|t| t.starts_with("text/html")) {
            links.extend(a_hrefs(&resp.text()));
        }
        out.bodies.insert(u.to_string(), resp.body);
        for href in links {
            let Ok(mut next) = u.join(&href) else {
                continue;
            };
            if next.scheme() != "http" || next.host_str() != base.host_str() || next.port() != base.port() {
                continue;
            }
            next.set_fragment(None);
            if !out.depth.contains_key(next.as_str()) {
                out.depth.insert(next.to_string(), d + 1);
                queue.push_back(next);
            }
        }
    }
    out
}
