//! The downloader itself: one pooled client, capped body reads, charset detection.

use std::sync::{Arc, Once};
use std::time::{Duration, Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue};
use kumo_core::charset;
use kumo_core::{ErrorKind, ModuleCounters, ModuleId, ModuleKind, Request, Response, Wire};

use crate::decode;
use crate::error::{body_error, describe, fetch_failed};
use crate::{BuildError, CookieJar, DownloaderConfig, FetchError};

/// One downloader module: an ID, counters, and a pooled HTTP client.
pub struct Downloader {
    id: ModuleId,
    client: reqwest::Client,
    cfg: DownloaderConfig,
    counters: ModuleCounters,
    /// The jar the client sends cookies from, to say what it sent (`record`).
    jar: Option<Arc<CookieJar>>,
}

static CRYPTO: Once = Once::new();

impl Downloader {
    /// Builds downloader number `serial`. Its ID is `D{serial}`, with the proxy's address when
    /// it has one (`D2|127.0.0.1:3128`).
    pub fn new(serial: u64, cfg: DownloaderConfig) -> Result<Self, BuildError> {
        // rustls needs one process-wide crypto provider; installing twice is harmless.
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let mut id = ModuleId::new(ModuleKind::Downloader, serial);
        let mut builder = reqwest::Client::builder();
        match &cfg.proxy {
            Some(p) => {
                let url = crate::check_proxy(p).map_err(|e| BuildError(e.to_string()))?;
                if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
                    id = id.with_addr(format!("{host}:{port}"));
                }
                let proxy = reqwest::Proxy::all(p)
                    .map_err(|e| BuildError(format!("proxy {p:?}: {}", describe(&e))))?;
                builder = builder.proxy(proxy);
            }
            None => builder = builder.no_proxy(),
        }
        let jar =
            cfg.cookies.then(|| cfg.cookie_jar.clone().unwrap_or_else(|| Arc::new(CookieJar::in_memory())));
        if let Some(jar) = &jar {
            builder = builder.cookie_provider(jar.clone());
        }
        if !cfg.extra_roots.is_empty() {
            builder = builder.tls_certs_merge(cfg.extra_roots.certificates());
        }
        if cfg.accept_invalid_certs {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        if let Some(dns) = &cfg.dns {
            builder = builder.dns_resolver(dns.clone());
        }
        let client = builder
            .connect_timeout(cfg.connect_timeout)
            .timeout(cfg.timeout)
            .pool_max_idle_per_host(if cfg.keep_alive.is_zero() { 0 } else { cfg.pool_idle_per_host })
            .pool_idle_timeout(Some(cfg.keep_alive).filter(|d| !d.is_zero()))
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            // A no-op without reqwest's `hickory-dns` feature; a guard should it ever come
            // in (its resolver cannot be configured and falls back to a public one).
            .no_hickory_dns()
            .build()
            .map_err(|e| BuildError(describe(&e)))?;
        Ok(Downloader { id, client, cfg, counters: ModuleCounters::default(), jar })
    }

    /// Its module ID: `D{serial}`, with the proxy's address when it has one.
    pub fn id(&self) -> &ModuleId {
        &self.id
    }

    /// Counters of its fetches: made, under way, and completed without error.
    pub fn counters(&self) -> &ModuleCounters {
        &self.counters
    }

    /// The settings it was built with.
    pub fn config(&self) -> &DownloaderConfig {
        &self.cfg
    }

    /// The jar it keeps cookies in, when it keeps them.
    pub fn cookie_jar(&self) -> Option<&Arc<CookieJar>> {
        self.jar.as_ref()
    }

    /// Fetches `req`. Any status is a response (a 404 is an answer, not an error); only a
    /// failure to get a complete answer is an error.
    pub async fn fetch(&self, req: Request) -> Result<Response, FetchError> {
        self.counters.called();
        self.counters.accepted();
        let result = match &self.cfg.http_cache {
            Some(cache) => cache.fetch(req, |r| self.fetch_inner(r)).await,
            None => self.fetch_inner(req).await,
        }
        .map_err(|mut e| {
            e.module = Some(self.id.clone());
            e
        });
        self.counters.finished(result.is_ok());
        result
    }

    async fn fetch_inner(&self, req: Request) -> Result<Response, FetchError> {
        // Held until the body is read: the exchange's connection is in use until then.
        let _connection = match &self.cfg.connections {
            Some(limit) => limit.acquire().await,
            None => None,
        };
        let started = Instant::now();
        let fetched_at = SystemTime::now();
        let mut builder = self.client.request(req.method.clone(), req.url.clone());
        if self.cfg.decompress && !req.headers.contains_key(http::header::ACCEPT_ENCODING) {
            builder = builder.header(http::header::ACCEPT_ENCODING, "gzip, deflate, br, zstd");
        }
        if !req.headers.contains_key(http::header::USER_AGENT) {
            builder = builder.header(http::header::USER_AGENT, self.cfg.user_agent.next().as_ref());
        }
        if !req.headers.is_empty() {
            builder = builder.headers(req.headers.clone());
        }
        if !req.body.is_empty() {
            builder = builder.body(req.body.clone());
        }
        let request = match builder.build() {
            Ok(r) => r,
            Err(e) => return Err(fetch_failed(&e, req)),
        };
        let sent = self.cfg.record.then(|| self.sent_headers(&request));
        let mut resp = match self.client.execute(request).await {
            Ok(r) => r,
            Err(e) => return Err(fetch_failed(&e, req)),
        };
        let latency = started.elapsed();
        let cap = self.cfg.max_body_bytes;
        // The wire size: compressed bodies are capped again, layer by layer, once decoded.
        // Recording, the body is read up to the cap instead, for the archive to keep.
        if let Some(len) = resp.content_length()
            && len as usize > cap
            && sent.is_none()
        {
            return Err(FetchError::new(
                ErrorKind::TooLarge,
                format!("Content-Length {len} exceeds the {cap}-byte cap"),
                req,
            ));
        }
        let status = resp.status();
        let version = resp.version();
        let remote = resp.remote_addr();
        let headers = std::mem::take(resp.headers_mut());
        let url = resp.url().clone();
        let mut response = Response {
            request: req,
            status,
            headers,
            url,
            body: Bytes::new(),
            encoding: encoding_rs::UTF_8,
            fetched_at,
            elapsed: Duration::ZERO,
            latency,
            wire: sent.map(|request_headers| {
                Box::new(Wire { request_headers, version, remote, coded_body: None, truncated: false })
            }),
        };
        let codings = match response.headers.get(http::header::CONTENT_ENCODING) {
            Some(v) if self.cfg.decompress => match v.to_str().ok().and_then(decode::codings) {
                Some(c) => c,
                None => {
                    let msg = format!("unsupported Content-Encoding {v:?}");
                    return Err(self.failed(ErrorKind::Decode, msg, response, None));
                }
            },
            _ => Vec::new(),
        };
        let wire_body = match read_capped(&mut resp, cap, Meter::new(&self.cfg)).await {
            Ok(Read::Whole(b)) => b,
            Ok(cut) => {
                let msg = format!("body exceeds the {cap}-byte cap");
                return Err(self.failed(ErrorKind::TooLarge, msg, response, Some(cut)));
            }
            Err(Broken::Net(kind, msg)) => return Err(FetchError::new(kind, msg, response.request)),
            Err(Broken::Slow(msg)) => {
                let mut e = FetchError::new(ErrorKind::Timeout, msg, response.request);
                e.retry_limit = Some(1);
                return Err(e);
            }
        };
        let body = if codings.is_empty() {
            wire_body
        } else {
            match decode::decode(wire_body.clone(), &codings, cap) {
                Ok(b) => {
                    if let Some(w) = &mut response.wire {
                        w.coded_body = Some(wire_body);
                    }
                    b
                }
                Err((kind, msg)) => {
                    return Err(self.failed(kind, msg, response, Some(Read::Whole(wire_body))));
                }
            }
        };
        let ct = response.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        response.encoding = charset::detect(ct, &body).0;
        response.body = body;
        response.elapsed = started.elapsed();
        Ok(response)
    }

    /// A failure after the answer's head came: with recording on, what came of it is kept for
    /// the archive (`came`: the body read, and whether it was cut at the cap).
    fn failed(
        &self,
        kind: ErrorKind,
        message: String,
        mut response: Response,
        came: Option<Read>,
    ) -> FetchError {
        let Some(mut wire) = response.wire.take() else {
            return FetchError::new(kind, message, response.request);
        };
        let (body, truncated) = match came {
            Some(Read::Whole(b)) => (b, false),
            Some(Read::Cut(b)) => (b, true),
            None => (Bytes::new(), false),
        };
        wire.truncated = truncated;
        wire.coded_body = Some(body);
        response.wire = Some(wire);
        let mut e = FetchError::new(kind, message, response.request.clone());
        e.partial = Some(Box::new(response));
        e
    }

    /// The request's headers as they go out: the client's defaults where the request has
    /// none, and the cookies the jar sends with it.
    fn sent_headers(&self, request: &reqwest::Request) -> HeaderMap {
        let mut h = request.headers().clone();
        if !h.contains_key(http::header::ACCEPT) {
            // reqwest's default, added when the request has none.
            h.insert(http::header::ACCEPT, HeaderValue::from_static("*/*"));
        }
        if !h.contains_key(http::header::COOKIE)
            && let Some(c) =
                self.jar.as_ref().and_then(|j| reqwest::cookie::CookieStore::cookies(&**j, request.url()))
        {
            h.insert(http::header::COOKIE, c);
        }
        h
    }
}

/// A body read within the cap, or cut at it.
enum Read {
    Whole(Bytes),
    Cut(Bytes),
}

/// Why a body could not be read whole.
enum Broken {
    /// The network (a reset, a timeout): its kind and what happened.
    Net(ErrorKind, String),
    /// It came slower than `DownloaderConfig::min_body_rate`.
    Slow(String),
}

/// Checks a body's pace window by window (`DownloaderConfig::min_body_rate`): each window
/// from the answer's head on must bring `least` bytes. Tumbling windows, so a trickle is cut
/// one window after its head, and a stall as soon as its window ends.
struct Meter {
    least: u64,
    window: Duration,
    ends: tokio::time::Instant,
    got: u64,
}

impl Meter {
    fn new(cfg: &DownloaderConfig) -> Option<Meter> {
        let window = cfg.min_body_window;
        if cfg.min_body_rate == 0 || window.is_zero() {
            return None;
        }
        // `as` saturates: an absurd rate asks for all there is.
        let least = (cfg.min_body_rate as f64 * window.as_secs_f64()).ceil() as u64;
        Some(Meter { least, window, ends: tokio::time::Instant::now() + window, got: 0 })
    }

    /// At the end of a window (or past it): refuses one that brought too little, else starts
    /// the next.
    fn window_ended(&mut self, total: usize) -> Result<(), Broken> {
        if self.got < self.least {
            let rate = self.least as f64 / self.window.as_secs_f64();
            return Err(Broken::Slow(format!(
                "the body came slower than {rate:.0} bytes/s: {} bytes in {:.1} s, {total} in all",
                self.got,
                self.window.as_secs_f64()
            )));
        }
        // From when this one was found over: a chunk that came late opens the next in full.
        self.ends = self.ends.max(tokio::time::Instant::now()) + self.window;
        self.got = 0;
        Ok(())
    }
}

/// Reads the body as it comes (its content coding kept), holding at most `cap` bytes: one
/// longer is cut there. With a `meter`, a body slower than its minimum is given up.
async fn read_capped(
    resp: &mut reqwest::Response,
    cap: usize,
    mut meter: Option<Meter>,
) -> Result<Read, Broken> {
    let hint = resp.content_length().map_or(16 * 1024, |n| n as usize).min(cap);
    let mut first: Option<Bytes> = None;
    let mut buf: Option<BytesMut> = None;
    let mut total = 0usize;
    let mut cut = false;
    // Ends with the body, its cap, a failure, or a window that brought too little.
    loop {
        let next = match &mut meter {
            // `chunk` takes a frame only when it is ready, so the timer may drop it unharmed.
            Some(m) => match tokio::time::timeout_at(m.ends, resp.chunk()).await {
                Ok(next) => next,
                Err(_) => {
                    m.window_ended(total)?;
                    continue;
                }
            },
            None => resp.chunk().await,
        };
        let mut chunk = match next {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => {
                let (kind, message) = body_error(&e, total);
                return Err(Broken::Net(kind, message));
            }
        };
        if let Some(m) = &mut meter {
            m.got += chunk.len() as u64;
            if tokio::time::Instant::now() >= m.ends {
                m.window_ended(total + chunk.len())?;
            }
        }
        if total + chunk.len() > cap {
            chunk.truncate(cap - total);
            cut = true;
        }
        total += chunk.len();
        // The common single-chunk body is kept as is, without a copy.
        match (&mut first, &mut buf) {
            (None, None) => first = Some(chunk),
            (Some(f), None) => {
                let mut b = BytesMut::with_capacity(hint.max(f.len() + chunk.len()));
                b.extend_from_slice(f);
                b.extend_from_slice(&chunk);
                first = None;
                buf = Some(b);
            }
            (_, Some(b)) => b.extend_from_slice(&chunk),
        }
        if cut {
            break;
        }
    }
    let body = match (first, buf) {
        (Some(f), _) => f,
        (None, Some(b)) => b.freeze(),
        (None, None) => Bytes::new(),
    };
    Ok(if cut { Read::Cut(body) } else { Read::Whole(body) })
}
