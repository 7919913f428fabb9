//! The hostile site serves what its ground truth says, over plain TCP: the salted links, the
//! broken HTTP of its raw host, its endless traps and its huge body.

use std::time::Duration;

use kumo_testsite::{HostileConfig, HostileSite};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `GET url` on a new connection and reads until the server closes it (at most 1 MB,
/// 5 s). Returns the bytes and whether the end was an error (a reset) rather than a close.
async fn get(url: &str) -> (Vec<u8>, bool) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(host).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let read = async {
        // Bounded by the size cap and the timeout around it.
        while out.len() < 1 << 20 {
            match s.read(&mut buf).await {
                Ok(0) => return false,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(_) => return true,
            }
        }
        false
    };
    let reset = tokio::time::timeout(Duration::from_secs(5), read).await.expect("answered within 5 s");
    (out, reset)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn the_truth_names_what_the_site_serves() {
    let site = HostileSite::start(HostileConfig { pages: 200, seed: 3 }).await.unwrap();
    let t = site.truth().clone();
    assert!(t.start.starts_with(&site.base_url()));
    assert_eq!(t.normal.iter().filter(|u| u.contains("/page/")).count(), 200 + 4, "pages and print variants");
    for list in [&t.flaky, &t.transient, &t.forbidden, &t.at_most_once] {
        assert!(!list.is_empty());
    }
    assert_eq!(t.titles.len(), 3);

    // Every linked fault is on some page of the shop: collect the hrefs of the first 50 pages.
    let mut hrefs = String::new();
    for k in 0..50 {
        hrefs.push_str(&text(&get(&format!("{}/page/{k}.html", site.base_url())).await.0));
    }
    for url in t.flaky.iter().chain(&t.transient) {
        let path = url.strip_prefix(&site.base_url()).unwrap();
        assert!(hrefs.contains(&format!("href=\"{path}\"")), "{path} is linked");
    }
    assert!(hrefs.contains("href=\"/trap/cal/2026/1.html\""));

    // A flaky page fails, then works.
    let (first, _) = get(&t.flaky[0]).await;
    let (second, _) = get(&t.flaky[0]).await;
    assert!(text(&first).starts_with("HTTP/1.1 500"), "{}", text(&first));
    assert!(text(&second).starts_with("HTTP/1.1 200"), "{}", text(&second));
    // Forbidden by robots.txt, which says so.
    let (robots, _) = get(&format!("{}/robots.txt", site.base_url())).await;
    assert!(text(&robots).contains("Disallow: /private/"));
    site.shutdown().await;
}

#[tokio::test]
async fn the_raw_host_breaks_http_as_named() {
    let site = HostileSite::start(HostileConfig { pages: 10, seed: 1 }).await.unwrap();
    let t = site.truth().clone();
    let failing =
        |suffix: &str| t.failing.iter().map(|(u, _)| u.clone()).find(|u| u.ends_with(suffix)).unwrap();

    let (head, reset) = get(&failing("/f/reset-in-head.html")).await;
    assert_eq!(text(&head), "HTTP/1.1 200 OK\r\nContent-Type: text/ht");
    assert!(reset, "the connection is reset, not closed");

    let (long, _) = get(&failing("/f/length-too-long.html")).await;
    let long = text(&long);
    let body = &long[long.find("\r\n\r\n").unwrap() + 4..];
    assert!(long.contains("Content-Length: 10000") && body.len() < 10000, "{} body bytes", body.len());

    let (not_http, _) = get(&failing("/f/not-http.html")).await;
    assert!(text(&not_http).starts_with("SSH-2.0-"));

    // The silent page answers nothing while the host runs.
    let silent = failing("/f/silent.html");
    let waited = tokio::time::timeout(Duration::from_millis(300), get(&silent)).await;
    assert!(waited.is_err(), "the silent page answered");
    site.shutdown().await;
}

#[tokio::test]
async fn traps_never_end_and_the_huge_body_is_honest() {
    let site = HostileSite::start(HostileConfig { pages: 10, seed: 1 }).await.unwrap();
    let base = site.base_url();
    let (cal, _) = get(&format!("{base}/trap/cal/2026/12.html")).await;
    let cal = text(&cal);
    for next in ["/trap/cal/2027/1.html", "/trap/cal/2026/11.html", "/trap/cal/2027/12.html"] {
        assert!(cal.contains(next), "{next} in {cal}");
    }
    let (grow, _) = get(&format!("{base}/trap/grow/1/2/")).await;
    assert!(text(&grow).contains("href=\"3/\""));
    let (s1, _) = get(&format!("{base}/trap/session/0.html;jsessionid=S0")).await;
    let (s2, _) = get(&format!("{base}/trap/session/0.html;jsessionid=S0")).await;
    assert_ne!(text(&s1).split("\r\n\r\n").nth(1), text(&s2).split("\r\n\r\n").nth(1), "new ids each time");
    let (list, _) = get(&format!("{base}/trap/list?page=41")).await;
    assert!(text(&list).contains("href=\"?page=42\""));

    let (huge, _) = get(&format!("{base}/f/huge.html")).await;
    assert!(text(&huge).to_ascii_lowercase().contains("content-length: 200000000"));
    site.shutdown().await;
}
