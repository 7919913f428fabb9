//! The running web: one listener per address, all on one port, hosts told apart by `Host`,
//! a DNS server for every name, and the request log.

use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::model::{HostKind, Model};
use super::render::{Answer, error, not_found, respond};
use super::{Rules, Violations, WebConfig, WebTruth};
use crate::dns::{DnsBehaviour, DnsServer, DnsZone};
use crate::server::{accept_each, serve_http1};

/// How long open connections get to finish at shutdown.
const GRACE: Duration = Duration::from_millis(250);
/// Queued connections per listener before the kernel drops SYNs.
const BACKLOG: u32 = 1024;
/// Attempts at finding a port free on every address.
const BIND_ATTEMPTS: usize = 16;
/// File descriptors wanted beyond one per listener: connections, the DNS socket, the runtime.
const FD_HEADROOM: u64 = 256;

/// One request as the server saw it. Times count from the web's start on one monotonic clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebHit {
    /// When the first byte of the request's head was read (or, for a request whose head came
    /// with the previous one's, when its head had been parsed).
    pub arrived: Duration,
    /// When the response's last byte was handed to hyper, or the connection dropped;
    /// `Duration::MAX` while the response is still going.
    pub finished: Duration,
    /// The address the request arrived at.
    pub local_ip: IpAddr,
    /// The `Host` header, lower case, without the port ("" if none).
    pub host: String,
    /// The request target's path and query.
    pub path: String,
    /// The connection, numbered from 0 across the web in order of acceptance.
    pub conn: u64,
}

/// A running synthetic web. It serves until [`SyntheticWeb::shutdown`] or until dropped.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use std::time::Duration;
/// use kumo_testsite::{Rules, SyntheticWeb, WebConfig};
///
/// let web = SyntheticWeb::start(WebConfig { hosts: 1_000, ..WebConfig::default() }).await?;
/// let expected = web.truth().reachable(Some(3), true);
/// // ... crawl web.seeds() to depth 3, resolving names with web.dns_addr(), then:
/// let rules = Rules { host_delay: Duration::from_millis(100), max_depth: Some(3), ..Rules::default() };
/// let v = web.violations(&rules);
/// assert!(v.is_clean(), "{v}");
/// web.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SyntheticWeb {
    truth: WebTruth,
    dns: DnsServer,
    state: Arc<State>,
    stop: watch::Sender<()>,
    tasks: JoinSet<()>,
}

/// What the connections share.
#[derive(Debug)]
struct State {
    model: Arc<Model>,
    port: u16,
    epoch: Instant,
    log: Mutex<Vec<WebHit>>,
    count: AtomicUsize,
    conns: AtomicU64,
}

impl SyntheticWeb {
    /// Builds the web `cfg` describes, binds every address on one port, and starts the DNS
    /// server. Fails if the addresses cannot all be bound (after a few ports) or the process
    /// cannot have enough file descriptors.
    pub async fn start(cfg: WebConfig) -> io::Result<SyntheticWeb> {
        let model = Arc::new(Model::new(cfg));
        ensure_descriptors(model.addresses.len())?;
        let (listeners, port) = bind_all(&model.addresses)?;
        let dns = DnsServer::start(zone(&model)).await?;
        let state = Arc::new(State {
            model: Arc::clone(&model),
            port,
            epoch: Instant::now(),
            log: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            conns: AtomicU64::new(0),
        });
        let (stop, stop_rx) = watch::channel(());
        let mut tasks = JoinSet::new();
        for listener in listeners {
            let state = Arc::clone(&state);
            let serve = move |stream, stop| serve_connection(Arc::clone(&state), stream, stop);
            tasks.spawn(accept_each(listener, stop_rx.clone(), GRACE * 2, serve));
        }
        Ok(SyntheticWeb { truth: WebTruth::with_model(model, port), dns, state, stop, tasks })
    }

    /// The port every address listens on.
    pub fn port(&self) -> u16 {
        self.state.port
    }

    /// The DNS server's address, to give a resolver as its only name server.
    pub fn dns_addr(&self) -> SocketAddr {
        self.dns.addr()
    }

    /// The DNS server, for its query log.
    pub fn dns(&self) -> &DnsServer {
        &self.dns
    }

    /// The start URLs: the index pages of the most popular hosts.
    pub fn seeds(&self) -> Vec<String> {
        self.truth.seeds()
    }

    /// `http://{host}:{port}{path}`.
    pub fn url(&self, host: &str, path: &str) -> String {
        self.truth.url(host, path)
    }

    /// What the web holds and what a correct crawl of it does.
    pub fn truth(&self) -> &WebTruth {
        &self.truth
    }

    /// Every request so far, in arrival order.
    pub fn log(&self) -> Vec<WebHit> {
        self.state.lock().clone()
    }

    /// Requests so far, on every address.
    pub fn hit_count(&self) -> usize {
        self.state.count.load(Ordering::Acquire)
    }

    /// The log so far judged by `rules`.
    pub fn violations(&self, rules: &Rules) -> Violations {
        self.truth.judge(&self.log(), rules)
    }

    /// Stops accepting, gives open connections a moment, and stops the DNS server.
    pub async fn shutdown(self) {
        let SyntheticWeb { dns, stop, mut tasks, .. } = self;
        drop(stop);
        // The accept loops never panic; an error would mean the runtime is going away.
        while tasks.join_next().await.is_some() {}
        dns.shutdown().await;
    }
}

impl State {
    fn lock(&self) -> MutexGuard<'_, Vec<WebHit>> {
        // Entries are pushed or updated whole: a poisoned log is still a consistent one.
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn since_start(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.epoch)
    }
}

/// Raises the soft open-files limit toward the hard one when one listener per address would
/// not fit, and fails clearly if it still does not.
fn ensure_descriptors(addresses: usize) -> io::Result<()> {
    let needed = addresses as u64 + FD_HEADROOM;
    let (soft, _) = rlimit::Resource::NOFILE.get()?;
    if soft >= needed {
        return Ok(());
    }
    let raised = rlimit::increase_nofile_limit(u64::MAX)?;
    if raised < needed {
        return Err(io::Error::other(format!(
            "a synthetic web on {addresses} addresses needs about {needed} open files; \
             the limit is {raised} (raise `ulimit -n`)"
        )));
    }
    Ok(())
}

/// One listener per address, all on one port: the first on a random port, the others on it;
/// if another process holds that port on some address, all are closed and a new port tried.
fn bind_all(addresses: &[Ipv4Addr]) -> io::Result<(Vec<TcpListener>, u16)> {
    let mut last = None;
    for _ in 0..BIND_ATTEMPTS {
        let first = listen(SocketAddr::from((addresses[0], 0)))?;
        let port = first.local_addr()?.port();
        let mut listeners = vec![first];
        let bound = addresses[1..].iter().try_for_each(|&ip| {
            listeners.push(listen(SocketAddr::from((ip, port)))?);
            Ok::<_, io::Error>(())
        });
        match bound {
            Ok(()) => return Ok((listeners, port)),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no port free on every address")))
}

fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// An A record per host that has an address, NXDOMAIN and silence for the failing names.
pub(crate) fn zone(model: &Model) -> DnsZone {
    let ttl = model.cfg.ttl;
    let mut zone = DnsZone::new();
    for host in &model.hosts {
        let behaviour = match (host.kind, host.addr) {
            (HostKind::NxDomain, _) => DnsBehaviour::NxDomain { negative_ttl: ttl },
            (HostKind::Silent, _) => DnsBehaviour::Silent,
            (_, Some(addr)) => DnsBehaviour::a([addr], ttl),
            (_, None) => continue,
        };
        zone.insert(&host.name, behaviour);
    }
    zone
}

async fn serve_connection(state: Arc<State>, stream: TcpStream, mut stop: watch::Receiver<()>) {
    let _ = stream.set_nodelay(true);
    let conn = state.conns.fetch_add(1, Ordering::Relaxed);
    let local_ip = stream.local_addr().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip());
    let first_byte = Arc::new(AtomicU64::new(0));
    let io = Stamped { inner: stream, epoch: state.epoch, first_byte: Arc::clone(&first_byte) };
    let service = service_fn(move |req| {
        // Nanoseconds since the epoch plus one, 0 when the head came with an earlier one's.
        let stamp = first_byte.swap(0, Ordering::AcqRel);
        let arrived = match stamp {
            0 => state.since_start(Instant::now()),
            n => Duration::from_nanos(n - 1),
        };
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(handle(&state, req, Arrival { arrived, local_ip, conn }).await) }
    });
    serve_http1(io, service, &mut stop).await;
}

/// Where and when a request came in.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    arrived: Duration,
    local_ip: IpAddr,
    conn: u64,
}

async fn handle(state: &Arc<State>, req: Request<Incoming>, at: Arrival) -> Response<WebBody> {
    let (req, _body) = req.into_parts();
    let host = host_of(&req);
    let path = req.uri.path_and_query().map_or("/", |pq| pq.as_str()).to_owned();
    let guard = state.arrive(WebHit {
        arrived: at.arrived,
        finished: Duration::MAX,
        local_ip: at.local_ip,
        conn: at.conn,
        host: host.clone(),
        path,
    });
    let answer = if matches!(req.method, Method::GET | Method::HEAD) {
        route(state, &host, req.uri.path(), at.local_ip).await
    } else {
        error(StatusCode::METHOD_NOT_ALLOWED)
    };
    let mut resp = Response::new(WebBody { data: Some(Bytes::from(answer.body)), guard: Some(guard) });
    *resp.status_mut() = answer.status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(answer.content_type));
    resp
}

/// The answer for `path` on `host`, after the host's latency; 421 when the host does not
/// live on the address the request came to, 404 when the web has no such host.
async fn route(state: &State, host: &str, path: &str, local_ip: IpAddr) -> Answer {
    let model = &state.model;
    let Some(id) = model.id(host).filter(|&id| model.host(id).kind.serves()) else {
        return not_found();
    };
    let info = model.host(id);
    let latency = if info.slow { model.cfg.slow_latency } else { model.cfg.latency };
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if info.addr.map(IpAddr::V4) != Some(local_ip) {
        return error(StatusCode::MISDIRECTED_REQUEST);
    }
    respond(model, id, path, state.port)
}

/// The `Host` header (else the target's authority), lower case, without port or final dot.
fn host_of(req: &http::request::Parts) -> String {
    let raw = req
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri.authority().map(|a| a.as_str()))
        .unwrap_or_default();
    let name = match raw.rsplit_once(':') {
        Some((name, port)) if !raw.starts_with('[') && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => raw,
    };
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

impl State {
    /// Logs a request; the guard stamps its end when dropped.
    fn arrive(self: &Arc<Self>, hit: WebHit) -> Finish {
        self.count.fetch_add(1, Ordering::AcqRel);
        let mut log = self.lock();
        log.push(hit);
        Finish { state: Arc::clone(self), index: log.len() - 1 }
    }
}

/// Stamps a logged request's `finished` when dropped: with the body's last frame, or when the
/// connection (and so the response) is dropped.
#[derive(Debug)]
struct Finish {
    state: Arc<State>,
    index: usize,
}

impl Drop for Finish {
    fn drop(&mut self) {
        let now = self.state.since_start(Instant::now());
        if let Some(hit) = self.state.lock().get_mut(self.index) {
            hit.finished = now;
        }
    }
}

/// A whole response body carrying the request's [`Finish`] guard.
#[derive(Debug)]
struct WebBody {
    data: Option<Bytes>,
    guard: Option<Finish>,
}

impl hyper::body::Body for WebBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let data = this.data.take().filter(|d| !d.is_empty());
        if data.is_none() {
            this.guard = None;
        }
        Poll::Ready(data.map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.as_ref().is_none_or(Bytes::is_empty)
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

/// A stream that notes when a read first brings bytes after the previous request was taken:
/// the first byte of the next request's head.
#[derive(Debug)]
struct Stamped {
    inner: TcpStream,
    epoch: Instant,
    /// Nanoseconds since `epoch` plus one; 0 while no new head has begun.
    first_byte: Arc<AtomicU64>,
}

impl AsyncRead for Stamped {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before && this.first_byte.load(Ordering::Acquire) == 0 {
            let nanos = u64::try_from(this.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
            this.first_byte.store(nanos + 1, Ordering::Release);
        }
        polled
    }
}

impl AsyncWrite for Stamped {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
