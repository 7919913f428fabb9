//! The synthetic web over real sockets, loopback only: pages by `Host` on the right address,
//! 404 and 421, the request log, and the judge on real traffic (its DNS: `tests/dns.rs`).

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::timeout;
use url::Url;

use super::model::{HostKind, REFUSING_ADDRESS, Robots};
use super::render::respond;
use super::{Rules, SyntheticWeb, WebConfig, WebTruth};

/// A bound for every wait on something that should come at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// Forty hosts on three addresses, answering at once (no slow hosts either).
fn small() -> WebConfig {
    WebConfig { hosts: 40, addresses: 3, latency: Duration::ZERO, slow_hosts: 0, ..WebConfig::default() }
}

#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// One HTTP/1.1 connection; its requests go one after another on it.
struct Client {
    sender: http1::SendRequest<Empty<Bytes>>,
}

impl Client {
    async fn connect(ip: Ipv4Addr, port: u16) -> io::Result<Client> {
        let stream = timeout(PATIENCE, TcpStream::connect((ip, port))).await??;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.map_err(io::Error::other)?;
        // Ends when the connection closes, with the test's runtime at the latest.
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Client { sender })
    }

    async fn send(&mut self, method: &str, host: &str, port: u16, path: &str) -> Reply {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("{host}:{port}"))
            .body(Empty::new())
            .unwrap();
        let resp =
            timeout(PATIENCE, self.sender.send_request(req)).await.expect("an answer in time").unwrap();
        let (parts, body) = resp.into_parts();
        let body = timeout(PATIENCE, body.collect()).await.expect("a body in time").unwrap().to_bytes();
        Reply { status: parts.status, headers: parts.headers, body }
    }
}

/// `method host path` on a fresh connection to `ip`.
async fn fetch(web: &SyntheticWeb, ip: Ipv4Addr, method: &str, host: &str, path: &str) -> Reply {
    Client::connect(ip, web.port()).await.unwrap().send(method, host, web.port(), path).await
}

/// GET `url` on a fresh connection to the address the truth gives its host.
async fn get(web: &SyntheticWeb, url: &str) -> Reply {
    let url = Url::parse(url).unwrap();
    let host = url.host_str().unwrap();
    let ip = web.truth().host(host).and_then(|h| h.addr).unwrap();
    fetch(web, ip, "GET", host, url.path()).await
}

/// The first ordinary host whose robots.txt is `robots`, if any.
fn with_robots(truth: &WebTruth, robots: fn(Robots) -> bool) -> Option<&super::WebHost> {
    truth.hosts().iter().find(|h| h.kind == HostKind::Ordinary && robots(h.robots))
}

#[tokio::test]
async fn pages_are_served_by_host_on_their_address() {
    let web = SyntheticWeb::start(small()).await.unwrap();
    let truth = web.truth().clone();
    let seed = Url::parse(&web.seeds()[0]).unwrap();
    let name = seed.host_str().unwrap();
    let id = truth.model.id(name).unwrap();
    let ip = truth.host(name).unwrap().addr.unwrap();

    let page = fetch(&web, ip, "GET", name, "/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.body, respond(&truth.model, id, "/", web.port()).body);
    let head = fetch(&web, ip, "HEAD", name, "/").await;
    assert_eq!((head.status, head.body.len()), (StatusCode::OK, 0));
    assert_eq!(head.headers["content-length"], page.body.len().to_string().as_str());
    assert_eq!(fetch(&web, ip, "GET", name, "/p/999999.html").await.status, StatusCode::NOT_FOUND);
    assert_eq!(fetch(&web, ip, "POST", name, "/").await.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(fetch(&web, ip, "GET", "nowhere.test", "/").await.status, StatusCode::NOT_FOUND);
    let elsewhere = *truth.addresses().iter().find(|&&a| a != ip).unwrap();
    assert_eq!(fetch(&web, elsewhere, "GET", name, "/").await.status, StatusCode::MISDIRECTED_REQUEST);

    let log = web.log();
    assert_eq!((log.len(), web.hit_count()), (6, 6));
    let paths: Vec<(&str, &str)> = log.iter().map(|h| (h.host.as_str(), h.path.as_str())).collect();
    assert_eq!(paths[..3], [(name, "/"), (name, "/"), (name, "/p/999999.html")]);
    assert_eq!(paths[4], ("nowhere.test", "/"));
    assert!(log[..5].iter().all(|h| h.local_ip == IpAddr::V4(ip)));
    assert_eq!(log[5].local_ip, IpAddr::V4(elsewhere));
    for (i, hit) in log.iter().enumerate() {
        assert_eq!(hit.conn, i as u64, "one connection each");
        assert!(hit.arrived <= hit.finished && hit.finished != Duration::MAX, "{hit:?}");
    }
    assert!(log.windows(2).all(|w| w[0].finished <= w[1].arrived), "one after another");

    // Keep-alive: two requests on one connection, the second after the first's end.
    let mut client = Client::connect(ip, web.port()).await.unwrap();
    for path in ["/robots.txt", "/"] {
        client.send("GET", name, web.port(), path).await;
    }
    let log = web.log();
    let [first, second] = &log[6..] else { panic!("two more hits: {log:?}") };
    assert_eq!((first.conn, second.conn), (6, 6));
    assert!(first.finished <= second.arrived);

    // A refusing name's address has no listener.
    let refused = TcpStream::connect((REFUSING_ADDRESS, web.port())).await.unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
    web.shutdown().await;
}

#[tokio::test]
async fn every_kind_of_robots_txt_is_served() {
    let web = SyntheticWeb::start(small()).await.unwrap();
    let truth = web.truth().clone();
    type Kind = fn(Robots) -> bool;
    let kinds: [(Kind, u16, &str); 5] = [
        (|r| r == Robots::NotFound, 404, "Not Found"),
        (|r| r == Robots::AllowAll, 200, "Allow: /\n"),
        (|r| r == Robots::Disallow, 200, "Disallow: /private/\n"),
        (|r| r.crawl_delay().is_some(), 200, "Crawl-delay: "),
        (|r| r == Robots::ServerError, 500, ""),
    ];
    for (kind, status, text) in kinds {
        let host = with_robots(&truth, kind).expect("the small web has every kind");
        let reply = fetch(&web, host.addr.unwrap(), "GET", &host.name, "/robots.txt").await;
        assert_eq!(reply.status.as_u16(), status, "{:?}", host.robots);
        assert!(String::from_utf8_lossy(&reply.body).contains(text), "{:?}: {reply:?}", host.robots);
        if let Some(delay) = host.robots.crawl_delay() {
            let line = format!("Crawl-delay: {}\n", delay.as_secs_f64());
            assert!(String::from_utf8_lossy(&reply.body).contains(&line));
        }
    }
    web.shutdown().await;
}

#[tokio::test]
async fn the_served_web_is_the_truth() {
    let web = SyntheticWeb::start(small()).await.unwrap();
    let truth = web.truth().clone();
    // Robots.txt first, then every page within depth 2, robots.txt ignored, one at a time.
    let robots = truth.robots_fetches(Some(2));
    for url in &robots {
        assert!(get(&web, url).await.status != StatusCode::MISDIRECTED_REQUEST, "{url}");
    }
    let pages = truth.reachable(Some(2), false);
    assert!(pages.len() > 20, "{pages:?}");
    for url in &pages {
        let reply = get(&web, url).await;
        let parsed = Url::parse(url).unwrap();
        let id = truth.model.id(parsed.host_str().unwrap()).unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{url}");
        assert_eq!(reply.body, respond(&truth.model, id, parsed.path(), web.port()).body, "{url}");
    }
    assert_eq!(web.hit_count(), robots.len() + pages.len());

    let rules = Rules { per_ip: 1, max_depth: Some(2), ..Rules::default() };
    let v = web.violations(&rules);
    let obeyed = truth.reachable(Some(2), true);
    // The pages robots.txt forbids, and those linked only from them, are what the obeying
    // crawl leaves out.
    assert!(v.disallowed.count > 0, "{v}");
    assert_eq!(v.disallowed.count + v.outside.count, pages.difference(&obeyed).count(), "{v}");
    for tally in [&v.host_overlap, &v.ip_overlap, &v.misrouted, &v.dead_names] {
        assert_eq!(tally.count, 0, "{v}");
    }
    assert_eq!(v.requests, robots.len() + pages.len());
    web.shutdown().await;
}

#[tokio::test]
async fn the_judge_reads_real_traffic() {
    // Responses that take 50 ms: two requests sent together surely overlap.
    let latency = Duration::from_millis(50);
    let cfg = WebConfig { latency, slow_hosts: 1, slow_latency: Duration::from_millis(200), ..small() };
    let web = SyntheticWeb::start(cfg).await.unwrap();
    let seed = Url::parse(&web.seeds()[0]).unwrap();
    let name = seed.host_str().unwrap();
    let ip = web.truth().host(name).unwrap().addr.unwrap();

    // Polite: one after another on one connection.
    let mut client = Client::connect(ip, web.port()).await.unwrap();
    for _ in 0..2 {
        assert_eq!(client.send("GET", name, web.port(), "/").await.status, StatusCode::OK);
    }
    let rules = Rules { per_host: 1, per_ip: 1, ..Rules::default() };
    let v = web.violations(&rules);
    assert!(v.is_clean(), "{v}");

    // Rude: two at once, on two connections.
    let (a, b) = tokio::join!(fetch(&web, ip, "GET", name, "/"), fetch(&web, ip, "GET", name, "/"));
    assert_eq!((a.status, b.status), (StatusCode::OK, StatusCode::OK));
    // Misrouted: on an address the name does not resolve to.
    let elsewhere = *web.truth().addresses().iter().find(|&&a| a != ip).unwrap();
    fetch(&web, elsewhere, "GET", name, "/").await;

    let v = web.violations(&rules);
    assert_eq!((v.host_overlap.count, v.ip_overlap.count, v.misrouted.count), (1, 1, 1), "{v}");
    assert_eq!((v.outside.count, v.host_gap.count, v.requests), (0, 0, 5), "{v}");
    let gaps = web.violations(&Rules { host_delay: Duration::from_millis(40), ..rules });
    assert!(gaps.host_gap.count >= 1, "the rude pair started together: {gaps}");

    // Slow: the answer waits `slow_latency`, and the log shows it.
    let slow = web.truth().hosts().iter().find(|h| h.slow).unwrap();
    fetch(&web, slow.addr.unwrap(), "GET", &slow.name, "/").await;
    let last = web.log().pop().unwrap();
    assert_eq!(last.host, slow.name);
    assert!(last.finished - last.arrived >= Duration::from_millis(200), "{last:?}");
    web.shutdown().await;
}

#[tokio::test]
async fn many_addresses_share_one_port() {
    let cfg = WebConfig { hosts: 600, addresses: 500, ..small() };
    let web = SyntheticWeb::start(cfg).await.unwrap();
    let addresses = web.truth().addresses().to_vec();
    assert_eq!(addresses.len(), 500);
    for ip in addresses {
        let stream = TcpStream::connect((ip, web.port())).await.unwrap();
        assert_eq!(stream.peer_addr().unwrap(), SocketAddr::from((ip, web.port())));
    }
    web.shutdown().await;
}
