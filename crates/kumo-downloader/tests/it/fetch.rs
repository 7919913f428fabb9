//! The downloader against the local test server: statuses, typed failures, the body cap
//! (also on decompressed bytes), the body's deadline and minimum rate, content-encodings and
//! charsets.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kumo_core::{ErrorKind, Request, Url};
use kumo_downloader::{Downloader, DownloaderConfig};
use kumo_testsite::{Fixture, ServerBuilder};

fn compressed(name: &str) -> Bytes {
    let dir = std::env::var("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")));
    Bytes::from(std::fs::read(dir.join("compressed").join(name)).expect("test vector"))
}

fn encoded(body: Bytes, encoding: &str) -> Fixture {
    Fixture {
        status: 200,
        headers: vec![
            ("content-type".into(), "text/html".into()),
            ("content-encoding".into(), encoding.into()),
        ],
        body,
        ..Default::default()
    }
}

fn get(url: &str) -> Request {
    Request::get(Url::parse(url).unwrap())
}

fn downloader(cfg: DownloaderConfig) -> Downloader {
    Downloader::new(1, cfg).unwrap()
}

#[tokio::test]
async fn any_status_is_a_response() {
    let server = ServerBuilder::new().fixture("/ok", Fixture::html("<p>hi</p>")).start().await.unwrap();
    let d = downloader(DownloaderConfig::default());
    let r = d.fetch(get(&server.url("/ok"))).await.unwrap();
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(&r.body[..], b"<p>hi</p>");
    assert!(r.is_html());
    let r = d.fetch(get(&server.url("/missing"))).await.unwrap();
    assert_eq!(r.status.as_u16(), 404);
    let c = d.counters().snapshot();
    assert_eq!((c.called, c.completed, c.handling), (2, 2, 0));
    assert_eq!(d.id().to_string(), "D1");
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error_that_returns_the_request() {
    let d = downloader(DownloaderConfig::default());
    let e = d.fetch(get("http://127.0.0.1:1/x")).await.unwrap_err();
    assert!(e.is_connect(), "{e}");
    assert_eq!(e.request.url.as_str(), "http://127.0.0.1:1/x");
}

/// A body slower than the minimum rate is cut as a timeout one window after its head, long
/// before the request's deadline, and is to be tried again once at most: a trickle and a
/// stall alike. A body that keeps the pace, and a slow one done within its first window,
/// come whole.
#[tokio::test]
async fn a_body_under_the_minimum_rate_is_cut_after_one_window() {
    let server = ServerBuilder::new()
        .fixture("/trickle", Fixture::html(&"z".repeat(200)).trickle(1, Duration::from_millis(100)))
        .fixture("/stall", Fixture::html(&"z".repeat(200)).trickle(100, Duration::from_secs(30)))
        .fixture("/steady", Fixture::html(&"s".repeat(3000)).trickle(300, Duration::from_millis(100)))
        .fixture("/short", Fixture::html("abc").trickle(1, Duration::from_millis(100)))
        .start()
        .await
        .unwrap();
    let d = downloader(DownloaderConfig {
        timeout: Duration::from_secs(20),
        min_body_rate: 1000,
        min_body_window: Duration::from_secs(1),
        ..Default::default()
    });
    for path in ["/trickle", "/stall"] {
        let started = Instant::now();
        let e = d.fetch(get(&server.url(path))).await.unwrap_err();
        let took = started.elapsed();
        assert_eq!(e.kind, ErrorKind::Timeout, "{path}: {e}");
        assert!(e.message.contains("slower than 1000 bytes/s"), "{path}: {e}");
        assert_eq!(e.retry_limit, Some(1), "{path}");
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_secs(5),
            "{path}: cut after {took:?}"
        );
    }
    let r = d.fetch(get(&server.url("/steady"))).await.unwrap();
    assert_eq!(r.body.len(), 3000);
    let r = d.fetch(get(&server.url("/short"))).await.unwrap();
    assert_eq!(&r.body[..], b"abc");
}

/// The request's deadline is also the body's total deadline; its timeout is retried as often
/// as the crawl allows (no `retry_limit`).
#[tokio::test]
async fn a_slow_body_times_out() {
    let slow = Fixture::html(&"z".repeat(1000)).trickle(100, Duration::from_millis(100));
    let server = ServerBuilder::new().fixture("/slow", slow).start().await.unwrap();
    let d = downloader(DownloaderConfig {
        timeout: Duration::from_millis(300),
        min_body_rate: 0,
        ..Default::default()
    });
    let e = d.fetch(get(&server.url("/slow"))).await.unwrap_err();
    assert_eq!((e.kind, e.retry_limit), (ErrorKind::Timeout, None), "{e}");
}

#[tokio::test]
async fn the_body_cap_holds_for_declared_and_streamed_bodies() {
    let big = "b".repeat(50_000);
    let server = ServerBuilder::new()
        .fixture("/big", Fixture::html(&big))
        .fixture("/big-chunked", Fixture::html(&big).trickle(8192, Duration::ZERO))
        .start()
        .await
        .unwrap();
    let d = downloader(DownloaderConfig { max_body_bytes: 10_000, ..Default::default() });
    for path in ["/big", "/big-chunked"] {
        let e = d.fetch(get(&server.url(path))).await.unwrap_err();
        assert!(e.is_too_large(), "{path}: {e}");
    }
}

#[tokio::test]
async fn decompression_bombs_stop_at_the_cap() {
    let mut b = ServerBuilder::new();
    let bombs = [
        ("bomb-gzip.bin", "gzip"),
        ("bomb-br.bin", "br"),
        ("bomb-zstd.bin", "zstd"),
        ("bomb-deflate.bin", "deflate"),
    ];
    for (name, enc) in bombs {
        b = b.fixture(&format!("/{enc}"), encoded(compressed(name), enc));
    }
    let server = b.start().await.unwrap();
    let d = downloader(DownloaderConfig { max_body_bytes: 1 << 20, ..Default::default() });
    for enc in ["gzip", "br", "zstd", "deflate"] {
        let e = d.fetch(get(&server.url(&format!("/{enc}")))).await.unwrap_err();
        assert!(e.is_too_large(), "{enc}: {e}");
    }
}

#[tokio::test]
async fn compressed_pages_decode() {
    let mut b = ServerBuilder::new();
    // The deflate vector was made from a copy of the page 3 bytes longer.
    let cases = [
        ("html-gzip.bin", "gzip", 74_837),
        ("html-br.bin", "br", 74_837),
        ("html-zstd-static-content-size.bin", "zstd", 74_837),
        ("html-zstd-streaming-no-content-size.bin", "zstd", 74_837),
        ("html-zlibdeflate.bin", "deflate", 74_840),
        ("html-rawdeflate.bin", "deflate", 74_840),
        ("html-zstd-static-no-content-size.bin", "zstd", 74_837),
        ("html-gzip-deflate.bin", "gzip, deflate", 74_837),
        ("html-gzip-deflate-gzip.bin", "gzip, deflate, gzip", 74_837),
    ];
    for (i, (name, enc, _)) in cases.iter().enumerate() {
        b = b.fixture(&format!("/{i}"), encoded(compressed(name), enc));
    }
    let server = b.start().await.unwrap();
    let d = downloader(DownloaderConfig::default());
    for (i, (name, _, len)) in cases.iter().enumerate() {
        let r = d.fetch(get(&server.url(&format!("/{i}")))).await.unwrap();
        assert_eq!(r.body.len(), *len, "{name}");
        assert!(r.text().contains("</html>"), "{name}");
    }
}

#[tokio::test]
async fn the_charset_decides_the_text() {
    let latin1 = Fixture {
        status: 200,
        headers: vec![("content-type".into(), "text/html; charset=windows-1252".into())],
        body: Bytes::from_static(b"<p>caf\xe9</p>"),
        ..Default::default()
    };
    let meta = Fixture {
        status: 200,
        headers: vec![("content-type".into(), "text/html".into())],
        body: Bytes::from_static(b"<meta charset=\"iso-8859-15\"><p>\xa4</p>"),
        ..Default::default()
    };
    let server =
        ServerBuilder::new().fixture("/latin1", latin1).fixture("/meta", meta).start().await.unwrap();
    let d = downloader(DownloaderConfig::default());
    let r = d.fetch(get(&server.url("/latin1"))).await.unwrap();
    assert_eq!(r.encoding.name(), "windows-1252");
    assert_eq!(r.text(), "<p>café</p>");
    let r = d.fetch(get(&server.url("/meta"))).await.unwrap();
    assert_eq!(r.encoding.name(), "ISO-8859-15");
    assert!(r.text().contains('€'));
}

#[tokio::test]
async fn user_agents_fixed_rotated_and_random() {
    use kumo_downloader::UserAgent;
    let server = ServerBuilder::new().fixture("/", Fixture::html("x")).start().await.unwrap();
    let url = server.url("/");
    let d = downloader(DownloaderConfig::default());
    d.fetch(get(&url)).await.unwrap();
    let d = downloader(DownloaderConfig {
        user_agent: UserAgent::rotate(vec!["one".into(), "two".into()]),
        ..Default::default()
    });
    for _ in 0..3 {
        d.fetch(get(&url)).await.unwrap();
    }
    let d = downloader(DownloaderConfig { user_agent: UserAgent::Random, ..Default::default() });
    for _ in 0..3 {
        d.fetch(get(&url)).await.unwrap();
    }
    let mut explicit = get(&url);
    explicit.headers.insert("user-agent", "mine".parse().unwrap());
    downloader(DownloaderConfig::default()).fetch(explicit).await.unwrap();
    let uas: Vec<String> = server.hits().into_iter().map(|h| h.user_agent.unwrap_or_default()).collect();
    assert!(uas[0].starts_with("kumo/") && uas[0].contains("+https://"), "{}", uas[0]);
    assert_eq!(uas[1..4], ["one", "two", "one"]);
    assert!(uas[4..7].iter().all(|u| u.starts_with("Mozilla/5.0")));
    assert_eq!(uas[7], "mine", "a request's own header wins");
}

#[tokio::test]
async fn cookies_are_kept_per_site_unless_turned_off() {
    let server = ServerBuilder::new()
        .fixture("/login", Fixture::html("hi").with_header("set-cookie", "session=abc; Path=/"))
        .fixture("/page", Fixture::html("p"))
        .start()
        .await
        .unwrap();
    for (on, want) in [(true, Some("session=abc".to_string())), (false, None)] {
        let d = downloader(DownloaderConfig { cookies: on, ..Default::default() });
        d.fetch(get(&server.url("/login"))).await.unwrap();
        d.fetch(get(&server.url("/page"))).await.unwrap();
        let last = server.hits().pop().unwrap();
        assert_eq!(last.cookie, want, "cookies {on}");
    }
}

#[tokio::test]
async fn broken_compressed_streams_are_typed_errors() {
    let mut b = ServerBuilder::new();
    let names = ["truncated-crc-error.gz", "truncated-crc-error-short.gz", "unexpected-eof.gz"];
    for (i, name) in names.iter().enumerate() {
        b = b.fixture(&format!("/{i}"), encoded(compressed(name), "gzip"));
    }
    let server = b.start().await.unwrap();
    let d = downloader(DownloaderConfig { max_body_bytes: 1 << 20, ..Default::default() });
    for (i, name) in names.iter().enumerate() {
        let e = d.fetch(get(&server.url(&format!("/{i}")))).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Decode, "{name}: {e}");
    }
}

/// `latency` runs to the response headers (what a slow server costs), `elapsed` to the end
/// of the body: a slow head and a trickled body are told apart.
#[tokio::test]
async fn latency_is_the_time_to_the_headers() {
    let head = Duration::from_millis(150);
    let body = Fixture::html(&"x".repeat(30)).latency(head).trickle(10, Duration::from_millis(100));
    let server = ServerBuilder::new().fixture("/slow", body).start().await.unwrap();
    let r = downloader(DownloaderConfig::default()).fetch(get(&server.url("/slow"))).await.unwrap();
    assert_eq!(r.body.len(), 30);
    assert!(r.latency >= head, "waited for the head: {:?}", r.latency);
    assert!(
        r.elapsed >= r.latency + Duration::from_millis(250),
        "then for 3 trickled chunks: {:?}",
        r.elapsed
    );
}

/// A body cut short by the network (a reset mid-body; a connection closed before its
/// Content-Length) is a body error, which the crawl retries, said as what happened: not a
/// decoding error, which reqwest calls it.
#[tokio::test]
async fn a_body_cut_short_is_a_body_error() {
    let body = "z".repeat(5000);
    let server = ServerBuilder::new()
        .fixture("/reset", Fixture::html(&body).trickle(250, Duration::from_millis(10)).reset_after(1000))
        .fixture(
            "/short",
            Fixture::html(&body)
                .with_header("content-length", "5000")
                .trickle(250, Duration::from_millis(10))
                .reset_after(1000),
        )
        .start()
        .await
        .unwrap();
    let d = downloader(DownloaderConfig::default());
    for path in ["/reset", "/short"] {
        let e = d.fetch(get(&server.url(path))).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Body, "{path}: {e}");
        assert!(e.kind.is_retryable());
        assert!(!e.message.contains("decoding"), "{path}: {}", e.message);
        assert!(e.message.contains("connection broke"), "{path}: {}", e.message);
    }
}

/// Recording (for WARC), a response keeps what went over the wire: the coded body, the
/// request's headers as sent (cookies included), the server's address; a body over the cap
/// is kept up to the cap, marked truncated, and a bomb's coded bytes whole.
#[tokio::test]
async fn recording_keeps_the_exchange_as_it_went_over_the_wire() {
    let gzip = compressed("html-gzip.bin");
    let big = "x".repeat(30_000);
    let server = ServerBuilder::new()
        .fixture("/gzip", encoded(gzip.clone(), "gzip"))
        .fixture("/plain", Fixture::html("<p>plain</p>"))
        .fixture("/login", Fixture::html("hi").with_header("set-cookie", "session=abc; Path=/"))
        .fixture("/big", Fixture::html(&big))
        .fixture("/big-chunked", Fixture::html(&big).trickle(8192, Duration::ZERO))
        .fixture("/bomb", encoded(compressed("bomb-br.bin"), "br"))
        .start()
        .await
        .unwrap();
    let d = downloader(DownloaderConfig { record: true, max_body_bytes: 100_000, ..Default::default() });
    let r = d.fetch(get(&server.url("/gzip"))).await.unwrap();
    let wire = r.wire.as_ref().expect("recorded");
    assert_eq!(r.wire_body(), &gzip, "the coded bytes, as sent");
    assert_eq!(r.body.len(), 74_837, "and the decoded body beside them");
    assert_eq!(wire.remote, Some(server.addr()));
    assert_eq!(wire.version, http::Version::HTTP_11);
    assert!(!wire.truncated);
    let sent = &wire.request_headers;
    assert!(sent["user-agent"].to_str().unwrap().starts_with("kumo/"), "{sent:?}");
    assert_eq!(sent["accept-encoding"], "gzip, deflate, br, zstd");
    assert_eq!(sent["accept"], "*/*");
    let r = d.fetch(get(&server.url("/plain"))).await.unwrap();
    assert!(r.wire.as_ref().unwrap().coded_body.is_none(), "an uncoded body is not kept twice");
    assert_eq!(&r.wire_body()[..], b"<p>plain</p>");

    d.fetch(get(&server.url("/login"))).await.unwrap();
    let r = d.fetch(get(&server.url("/plain"))).await.unwrap();
    assert_eq!(
        r.wire.as_ref().unwrap().request_headers["cookie"],
        "session=abc",
        "the jar's cookie, as sent"
    );

    let cut = DownloaderConfig { record: true, max_body_bytes: 10_000, ..Default::default() };
    let d = downloader(cut);
    for path in ["/big", "/big-chunked"] {
        let e = d.fetch(get(&server.url(path))).await.unwrap_err();
        assert!(e.is_too_large(), "{path}: {e}");
        let partial = e.partial.as_ref().expect("kept for the archive");
        assert!(partial.wire.as_ref().unwrap().truncated, "{path}");
        assert_eq!(partial.wire_body().len(), 10_000, "{path}: up to the cap");
        assert_eq!(partial.status.as_u16(), 200);
    }
    let e = d.fetch(get(&server.url("/bomb"))).await.unwrap_err();
    assert!(e.is_too_large(), "{e}");
    let partial = e.partial.as_ref().expect("kept for the archive");
    assert!(!partial.wire.as_ref().unwrap().truncated, "the coded bytes came whole");
    assert_eq!(partial.wire_body(), &compressed("bomb-br.bin"));

    let plain = downloader(DownloaderConfig { max_body_bytes: 10_000, ..Default::default() });
    assert!(plain.fetch(get(&server.url("/plain"))).await.unwrap().wire.is_none(), "not recording");
    assert!(plain.fetch(get(&server.url("/big"))).await.unwrap_err().partial.is_none());
}
