//! Recording: the hit log, the count, in-flight concurrency, and stopping the server.

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};
use tokio::net::TcpStream;

#[tokio::test]
async fn hits_are_logged_in_arrival_order() {
    let server = ServerBuilder::new().synthetic(SiteConfig::default()).start().await.unwrap();
    let addr = server.addr();
    common::get(addr, "/index.html").await;
    common::get(addr, "/page/50.html?view=print").await;
    common::request(addr, "HEAD", "/missing").await;

    let hits = server.hits();
    let seen: Vec<(&str, &str)> = hits.iter().map(|h| (h.method.as_str(), h.target.as_str())).collect();
    assert_eq!(seen, [("GET", "/index.html"), ("GET", "/page/50.html?view=print"), ("HEAD", "/missing"),]);
    assert!(hits.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(hits[0].host.as_deref(), Some(addr.to_string().as_str()));
    assert_eq!(server.hit_count(), 3);
    assert_eq!(server.max_in_flight(), 1);
}

#[tokio::test]
async fn with_recording_off_requests_are_only_counted() {
    let server = ServerBuilder::new().synthetic(SiteConfig::default()).record(false).start().await.unwrap();
    for k in 0..5 {
        let r = common::get(server.addr(), &format!("/page/{k}.html")).await;
        assert_eq!(r.status, 200);
    }
    assert!(server.hits().is_empty());
    assert_eq!(server.hit_count(), 5);
}

#[tokio::test]
async fn max_in_flight_counts_overlapping_requests() {
    // 100 pieces, 20 ms apart: each response stays open for about two seconds, far longer
    // than it takes to see the first piece of all three.
    let server = ServerBuilder::new()
        .fixture(
            "/slow",
            Fixture { body: Bytes::from(vec![b'x'; 100]), ..Fixture::default() }
                .trickle(1, Duration::from_millis(20)),
        )
        .start()
        .await
        .unwrap();
    let mut conns = Vec::new();
    for _ in 0..3 {
        conns.push(common::send(server.addr(), "GET", "/slow", "close").await);
    }
    for c in &mut conns {
        common::read_head_and_some(c, 1).await;
    }
    assert_eq!(server.max_in_flight(), 3);
    assert_eq!(server.hit_count(), 3);
    drop(conns);
    server.shutdown().await;
}

async fn refuses(addr: SocketAddr) -> bool {
    TcpStream::connect(addr).await.is_err()
}

#[tokio::test]
async fn shutdown_and_drop_both_close_the_port() {
    let server = ServerBuilder::new().start().await.unwrap();
    let addr = server.addr();
    assert_eq!(server.base_url(), format!("http://{addr}"));
    assert_eq!(server.url("/x"), format!("http://{addr}/x"));
    // An idle keep-alive connection must not hold shutdown up.
    let _idle = common::send(addr, "GET", "/", "keep-alive").await;
    assert_eq!(common::get(addr, "/").await.status, 404);
    server.shutdown().await;
    assert!(refuses(addr).await);

    let server = ServerBuilder::new().ip("127.0.0.2".parse().unwrap()).start().await.unwrap();
    let addr = server.addr();
    assert_eq!(addr.ip().to_string(), "127.0.0.2");
    assert_eq!(common::get(addr, "/").await.status, 404);
    drop(server);
    // Dropping only signals; the accept task closes the socket on its next turn.
    let mut closed = false;
    for _ in 0..200 {
        if refuses(addr).await {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(closed, "the port stayed open after drop");
}
