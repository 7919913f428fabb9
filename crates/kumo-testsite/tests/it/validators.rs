//! The synthetic site's validators: with `validators` on, each page carries an ETag and a
//! Last-Modified, a conditional request naming them gets 304, and a changed page gets new
//! ones (and a new price) while its links stay the same.

use kumo_testsite::{ServerBuilder, SiteConfig, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `GET path` with extra header lines; returns the status, the headers (lower-case names) and
/// the body.
async fn get(
    server: &TestServer,
    path: &str,
    extra: &[(&str, &str)],
) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(server.addr()).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", server.addr());
    for (n, v) in extra {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(5), s.read_to_end(&mut raw)).await.unwrap().unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {name}"))
}

fn links(body: &str) -> Vec<&str> {
    body.split("href=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect()
}

#[tokio::test]
async fn pages_carry_validators_that_move_when_they_change() {
    let cfg = SiteConfig { pages: 20, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();

    let (status, headers, before) = get(&server, "/page/3.html", &[]).await;
    assert_eq!(status, 200);
    let (etag, modified) =
        (header(&headers, "etag").to_owned(), header(&headers, "last-modified").to_owned());
    let (status, _, body) = get(&server, "/page/3.html", &[("If-None-Match", &etag)]).await;
    assert_eq!((status, body.as_str()), (304, ""));
    let (status, _, _) = get(&server, "/page/3.html", &[("If-Modified-Since", &modified)]).await;
    assert_eq!(status, 304);

    server.change_pages(&[3, 99]);
    let (status, headers, after) = get(&server, "/page/3.html", &[("If-None-Match", &etag)]).await;
    assert_eq!(status, 200, "the old ETag no longer matches");
    assert_ne!(header(&headers, "etag"), etag);
    assert!(
        httpdate::parse_http_date(header(&headers, "last-modified")).unwrap()
            > httpdate::parse_http_date(&modified).unwrap()
    );
    assert_ne!(after, before, "the page changed");
    assert_eq!(links(&after), links(&before), "but not its links");
    let (status, _, _) = get(&server, "/page/3.html", &[("If-Modified-Since", &modified)]).await;
    assert_eq!(status, 200);
    // Another page's tag is not this page's; an unchanged page keeps its own.
    let (status, headers, _) = get(&server, "/page/4.html", &[("If-None-Match", &etag)]).await;
    assert_eq!(status, 200);
    let (status, _, _) = get(&server, "/page/4.html", &[("If-None-Match", header(&headers, "etag"))]).await;
    assert_eq!(status, 304);
    server.shutdown().await;
}

#[tokio::test]
async fn without_validators_pages_carry_none() {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 5, ..SiteConfig::default() })
        .start()
        .await
        .unwrap();
    let (status, headers, _) = get(&server, "/page/1.html", &[("If-None-Match", "*")]).await;
    assert_eq!(status, 200);
    assert!(headers.iter().all(|(n, _)| n != "etag" && n != "last-modified"));
    server.shutdown().await;
}
