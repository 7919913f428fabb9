//! The server itself: builder, accept loop, per-connection HTTP/1.1, routing and shutdown.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::{HttpService, service_fn};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::body::Body;
use crate::directory::Directory;
use crate::fixture::{Fixture, Prepared, error_page};
use crate::record::{Hit, Recorder};
use crate::synthetic::{Site, SiteConfig};
use crate::tls::TlsIdentity;

/// How long open connections get to finish their current response at shutdown.
const GRACE: Duration = Duration::from_millis(250);

/// Enough queued connections that a benchmark opening hundreds at once never waits for a
/// SYN retransmit (the usual default of 128 can cost a whole second).
const BACKLOG: u32 = 1024;

/// Configures and starts a [`TestServer`].
#[derive(Debug)]
pub struct ServerBuilder {
    ip: IpAddr,
    port: u16,
    site: Option<SiteConfig>,
    dir: Option<PathBuf>,
    fixtures: Vec<(String, Vec<Fixture>)>,
    record: bool,
    tls: Option<TlsIdentity>,
    routes: Option<Arc<dyn Routes>>,
}

/// Paths answered by code rather than by a canned response (the hostile site's traps and its
/// huge body). `respond` returns `None` for a path it does not serve.
pub(crate) trait Routes: Send + Sync + std::fmt::Debug {
    fn respond(&self, path: &str, query: Option<&str>) -> Option<Response<Body>>;
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder::new()
    }
}

impl ServerBuilder {
    /// A server on `127.0.0.1`, a random port, recording on, serving nothing yet (all 404).
    pub fn new() -> Self {
        ServerBuilder {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            site: None,
            dir: None,
            fixtures: Vec::new(),
            record: true,
            tls: None,
            routes: None,
        }
    }

    /// Listens on `ip` instead, e.g. `127.0.0.2` to act as a second host.
    pub fn ip(mut self, ip: IpAddr) -> Self {
        self.ip = ip;
        self
    }

    /// Listens on a fixed port instead of a random one (`0`, the default, picks one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serves the synthetic site described by `cfg`.
    pub fn synthetic(mut self, cfg: SiteConfig) -> Self {
        self.site = Some(cfg);
        self
    }

    /// Serves static files from `root`, like `python3 -m http.server`.
    pub fn directory(mut self, root: impl Into<PathBuf>) -> Self {
        self.dir = Some(root.into());
        self
    }

    /// Answers the exact path `path` (no query) with `f`. A later fixture for the same path
    /// replaces an earlier one.
    pub fn fixture(self, path: &str, f: Fixture) -> Self {
        self.fixture_sequence(path, vec![f])
    }

    /// Answers the n-th request for `path` with the n-th fixture, and every request after the
    /// last with the last one: `[503, 503, ok]` is a page that fails twice, then works.
    pub fn fixture_sequence(mut self, path: &str, fs: Vec<Fixture>) -> Self {
        self.fixtures.retain(|(p, _)| p != path);
        self.fixtures.push((path.to_owned(), fs));
        self
    }

    /// Serves the scripted shop under `/js/` ([`crate::scripted`]): pages whose links and
    /// fields only a browser sees.
    pub fn scripted(mut self, site: crate::ScriptedSite) -> Self {
        for (path, f) in site.fixtures() {
            self = self.fixture(&path, f);
        }
        self
    }

    /// Serves HTTPS with this certificate chain and key instead of plain HTTP.
    pub fn tls(mut self, identity: TlsIdentity) -> Self {
        self.tls = Some(identity);
        self
    }

    /// Answers GET and HEAD with `routes` where it has an answer, after the fixtures.
    pub(crate) fn routes(mut self, routes: Arc<dyn Routes>) -> Self {
        self.routes = Some(routes);
        self
    }

    /// With `false`, keeps no request log (only the atomic count), for benchmarks.
    pub fn record(mut self, on: bool) -> Self {
        self.record = on;
        self
    }

    /// Binds and starts serving on the current tokio runtime.
    ///
    /// Fails if the address cannot be bound, the directory does not exist, or a fixture has
    /// an invalid status or header.
    pub async fn start(self) -> io::Result<TestServer> {
        let mut fixtures = HashMap::with_capacity(self.fixtures.len());
        for (path, fs) in self.fixtures {
            let responses =
                fs.into_iter().map(|f| Prepared::new(&path, f)).collect::<io::Result<Vec<_>>>()?;
            if responses.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("fixture {path}: empty sequence"),
                ));
            }
            fixtures.insert(path, FixtureRoute { responses, served: AtomicUsize::new(0) });
        }
        let dir = match self.dir {
            Some(root) => {
                if !tokio::fs::metadata(&root).await?.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} is not a directory", root.display()),
                    ));
                }
                Some(Directory::new(root))
            }
            None => None,
        };

        let tls = self.tls.as_ref().map(crate::tls::acceptor).transpose()?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let listener = bind(SocketAddr::new(self.ip, self.port))?;
        let addr = listener.local_addr()?;
        let recorder = Arc::new(Recorder::new(self.record));
        let site = self.site.map(|cfg| Arc::new(Site::new(cfg, addr.to_string())));
        let router = Arc::new(Router {
            fixtures,
            // Absolute links name the address actually bound, port included.
            site: site.clone(),
            dir,
            routes: self.routes,
            recorder: Arc::clone(&recorder),
        });
        let (stop_tx, stop_rx) = watch::channel(());
        let task = tokio::spawn(accept_loop(listener, router, tls, stop_rx));
        Ok(TestServer { addr, scheme, recorder, site, stop: stop_tx, task })
    }
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    // Lets a fixed port be re-bound right after a previous server on it stopped.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// A running server. It serves until [`TestServer::shutdown`] or until it is dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    scheme: &'static str,
    recorder: Arc<Recorder>,
    site: Option<Arc<Site>>,
    /// Dropping the sender is the stop signal, so dropping the server stops it too.
    stop: watch::Sender<()>,
    task: JoinHandle<()>,
}

impl TestServer {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://IP:PORT` (`https://` with [`ServerBuilder::tls`]), without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// `base_url() + path`; `path` should start with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// Every request served so far, in arrival order (empty when recording is off).
    pub fn hits(&self) -> Vec<Hit> {
        self.recorder.hits()
    }

    /// How many requests have arrived, recording on or off.
    pub fn hit_count(&self) -> usize {
        self.recorder.count()
    }

    /// The most requests that were being handled at the same moment (from arrival to the
    /// last byte of the response body).
    pub fn max_in_flight(&self) -> usize {
        self.recorder.max_in_flight()
    }

    /// Changes the synthetic site's pages `pages` (numbers past the last page are ignored):
    /// each gets a new price, and with [`SiteConfig::validators`] a new `ETag` and a later
    /// `Last-Modified`. Links stay as they were, so the ground truth holds.
    pub fn change_pages(&self, pages: &[usize]) {
        if let Some(site) = &self.site {
            site.change(pages);
        }
    }

    /// Stops accepting, gives open connections a moment to finish, closes them, and returns
    /// once the listening socket is closed.
    pub async fn shutdown(self) {
        let TestServer { stop, task, .. } = self;
        drop(stop);
        // The accept task never panics; a JoinError would only mean the runtime is going away.
        let _ = task.await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    router: Arc<Router>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: watch::Receiver<()>,
) {
    let serve = move |stream: TcpStream, stop| {
        // Trickled chunks must leave at once, not wait for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        let (router, tls) = (Arc::clone(&router), tls.clone());
        async move {
            match tls {
                None => serve_connection(stream, router, stop).await,
                // A client that refuses the certificate ends its handshake: nothing to serve.
                Some(tls) => {
                    if let Ok(stream) = tls.accept(stream).await {
                        serve_connection(stream, router, stop).await;
                    }
                }
            }
        }
    };
    accept_each(listener, stop, GRACE * 2, serve).await;
}

/// Accepts connections until `stop` changes, each served by its own task; then gives those
/// still open `grace` to finish and cuts off the rest.
pub(crate) async fn accept_each<F, Fut>(
    listener: TcpListener,
    mut stop: watch::Receiver<()>,
    grace: Duration,
    mut serve: F,
) where
    F: FnMut(TcpStream, watch::Receiver<()>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    conns.spawn(serve(stream, stop.clone()));
                }
                // Out of file descriptors and the like: back off briefly instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
            // Reap finished connections so the set does not grow for the server's lifetime.
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let drained = async { while conns.join_next().await.is_some() {} };
    // Connections still busy after their grace period are cut off by dropping the set.
    let _ = tokio::time::timeout(grace, drained).await;
}

async fn serve_connection<S>(stream: S, router: Arc<Router>, mut stop: watch::Receiver<()>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let router = Arc::clone(&router);
        async move { Ok::<_, Infallible>(router.handle(req).await) }
    });
    serve_http1(stream, service, &mut stop).await;
}

/// Serves one HTTP/1 connection with keep-alive until the client leaves or `stop` changes;
/// then lets the response under way finish within a grace period.
pub(crate) async fn serve_http1<I, S>(io: I, service: S, stop: &mut watch::Receiver<()>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService<Incoming>,
    S::ResBody: 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        // Connection errors (a client hanging up mid-response) are the client's business.
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(GRACE, conn).await;
        }
    }
}

/// The responses of one fixture path, served in order.
#[derive(Debug)]
struct FixtureRoute {
    responses: Vec<Prepared>,
    served: AtomicUsize,
}

/// Everything a request needs: the routes and the recorder.
#[derive(Debug)]
struct Router {
    fixtures: HashMap<String, FixtureRoute>,
    site: Option<Arc<Site>>,
    dir: Option<Directory>,
    routes: Option<Arc<dyn Routes>>,
    recorder: Arc<Recorder>,
}

impl Router {
    async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        // Request bodies are never read; dropping this one lets hyper discard it.
        let (req, _body) = req.into_parts();
        let guard = self.recorder.arrive(&req);
        let mut resp = self.route(&req).await;
        resp.body_mut().attach(guard);
        resp
    }

    /// Fixtures first, then the coded routes, the synthetic site, the directory, else 404.
    async fn route(&self, req: &Parts) -> Response<Body> {
        let path = req.uri.path();
        if let Some(f) = self.fixtures.get(path) {
            let n = f.served.fetch_add(1, Ordering::Relaxed);
            let fixture = &f.responses[n.min(f.responses.len() - 1)];
            if !fixture.latency.is_zero() {
                tokio::time::sleep(fixture.latency).await;
            }
            return fixture.respond_to(req);
        }
        if !matches!(req.method, Method::GET | Method::HEAD) {
            return error_page(StatusCode::METHOD_NOT_ALLOWED);
        }
        if let Some(routes) = &self.routes
            && let Some(resp) = routes.respond(path, req.uri.query())
        {
            return resp;
        }
        if let Some(site) = &self.site
            && let Some(doc) = site.route(path)
        {
            return site.respond(doc, &req.headers);
        }
        if let Some(dir) = &self.dir {
            return dir.serve(path, req.uri.query()).await;
        }
        error_page(StatusCode::NOT_FOUND)
    }
}
