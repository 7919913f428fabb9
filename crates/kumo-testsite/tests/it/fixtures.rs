//! Fixtures: canned statuses, headers and bodies, redirects, and slow trickled bodies.

use crate::common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};

#[tokio::test]
async fn fixtures_send_their_status_headers_and_body() {
    let server = ServerBuilder::new()
        .fixture(
            "/busy",
            Fixture {
                status: 503,
                headers: vec![
                    ("retry-after".into(), "7".into()),
                    ("x-dup".into(), "a".into()),
                    ("x-dup".into(), "b".into()),
                ],
                body: Bytes::from_static(b"come back later"),
                ..Fixture::default()
            },
        )
        .fixture("/hello", Fixture::html("<p>hi</p>"))
        .fixture("/moved", Fixture::redirect(302, "/hello?from=moved"))
        .start()
        .await
        .unwrap();
    let addr = server.addr();

    let busy = common::get(addr, "/busy").await;
    assert_eq!(busy.status, 503);
    assert_eq!(busy.header("retry-after"), Some("7"));
    assert_eq!(busy.header_all("x-dup"), ["a", "b"]);
    assert_eq!(busy.body, b"come back later");
    assert_eq!(busy.header("content-length"), Some("15"));

    // Matching ignores the query, and a fixture answers any method.
    assert_eq!(common::get(addr, "/busy?attempt=2").await.status, 503);
    assert_eq!(common::request(addr, "POST", "/busy").await.status, 503);

    let hello = common::get(addr, "/hello").await;
    assert_eq!(hello.status, 200);
    assert_eq!(hello.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(hello.text(), "<p>hi</p>");

    let moved = common::get(addr, "/moved").await;
    assert_eq!(moved.status, 302);
    assert_eq!(moved.header("location"), Some("/hello?from=moved"));

    assert_eq!(common::get(addr, "/hello/").await.status, 404);
}

#[tokio::test]
async fn a_trickle_body_arrives_in_delayed_pieces() {
    let delay = Duration::from_millis(20);
    let body: Vec<u8> = (0..64u8).collect();
    let server = ServerBuilder::new()
        .fixture(
            "/slow",
            Fixture { body: Bytes::from(body.clone()), ..Fixture::default() }.trickle(16, delay),
        )
        .fixture(
            "/sized",
            Fixture::html("0123456789").with_header("content-length", "10").trickle(3, Duration::ZERO),
        )
        .start()
        .await
        .unwrap();

    let started = Instant::now();
    let slow = common::get(server.addr(), "/slow").await;
    assert_eq!(slow.status, 200);
    assert_eq!(slow.body, body);
    assert_eq!(slow.header("transfer-encoding"), Some("chunked"));
    assert_eq!(slow.chunks, 4, "one HTTP chunk per piece");
    // A lower bound only: the pauses happened (never an upper bound on a shared machine).
    assert!(started.elapsed() >= delay * 4);

    // With its own Content-Length, a trickled fixture is sent unchunked.
    let sized = common::get(server.addr(), "/sized").await;
    assert_eq!(sized.header("content-length"), Some("10"));
    assert_eq!(sized.text(), "0123456789");
}

#[tokio::test]
async fn fixtures_take_precedence_over_the_site() {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig::default())
        .fixture("/index.html", Fixture::html("overridden"))
        .fixture("/page/1.html", Fixture::redirect(301, "/page/2.html"))
        .start()
        .await
        .unwrap();
    assert_eq!(common::get(server.addr(), "/index.html").await.text(), "overridden");
    assert_eq!(common::get(server.addr(), "/page/1.html").await.status, 301);
    assert_eq!(common::get(server.addr(), "/page/2.html").await.status, 200);
    // `/` is not `/index.html` as far as fixtures are concerned.
    assert!(common::get(server.addr(), "/").await.text().contains("SKU-INDEX"));
}

#[tokio::test]
async fn invalid_fixtures_fail_to_start() {
    let bad_status =
        ServerBuilder::new().fixture("/x", Fixture { status: 1000, ..Fixture::default() }).start().await;
    assert_eq!(bad_status.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    let bad_header =
        ServerBuilder::new().fixture("/x", Fixture::default().with_header("bad name", "v")).start().await;
    assert_eq!(bad_header.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
}
