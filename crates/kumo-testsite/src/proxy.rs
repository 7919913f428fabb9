//! A tiny forward HTTP proxy for tests: it relays plain-HTTP requests in absolute form to
//! loopback targets and counts (and lists) what passes through it. Targets outside 127.0.0.0/8 are refused,
//! so a test can never send traffic off the machine through it.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// A running forward proxy on a loopback address.
#[derive(Debug)]
pub struct ForwardProxy {
    addr: SocketAddr,
    relayed: Arc<AtomicUsize>,
    targets: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl ForwardProxy {
    /// Starts a proxy on `ip` (a loopback address), random port.
    pub async fn start(ip: IpAddr) -> io::Result<ForwardProxy> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
        let addr = listener.local_addr()?;
        let relayed = Arc::new(AtomicUsize::new(0));
        let targets = Arc::new(Mutex::new(Vec::new()));
        let client: Client<HttpConnector, Incoming> = Client::builder(TokioExecutor::new()).build_http();
        let log = Log { count: relayed.clone(), targets: targets.clone() };
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (client, log) = (client.clone(), log.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req| relay(client.clone(), log.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok(ForwardProxy { addr, relayed, targets, task })
    }

    /// `http://ip:port`, to give to a crawler as its proxy.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests relayed so far.
    pub fn relayed(&self) -> usize {
        self.relayed.load(Ordering::Relaxed)
    }

    /// The absolute URLs relayed so far (`http://127.0.0.1:8080/page`), in arrival order.
    pub fn relayed_targets(&self) -> Vec<String> {
        self.targets.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What the proxy keeps of each relayed request.
#[derive(Clone)]
struct Log {
    count: Arc<AtomicUsize>,
    targets: Arc<Mutex<Vec<String>>>,
}

impl Drop for ForwardProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn plain(status: StatusCode, msg: &'static str) -> Response<ProxyBody> {
    let body = Full::new(Bytes::from_static(msg.as_bytes())).map_err(|never| match never {}).boxed();
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r
}

async fn relay(
    client: Client<HttpConnector, Incoming>,
    log: Log,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, hyper::Error> {
    let loopback = req.uri().host().and_then(|h| h.parse::<IpAddr>().ok()).is_some_and(|ip| ip.is_loopback());
    if req.uri().scheme_str() != Some("http") || !loopback {
        return Ok(plain(StatusCode::FORBIDDEN, "this test proxy relays http:// to loopback only\n"));
    }
    log.targets.lock().unwrap_or_else(|p| p.into_inner()).push(req.uri().to_string());
    log.count.fetch_add(1, Ordering::Relaxed);
    match client.request(req).await {
        Ok(resp) => Ok(resp.map(|b| b.boxed())),
        Err(_) => Ok(plain(StatusCode::BAD_GATEWAY, "upstream failed\n")),
    }
}
