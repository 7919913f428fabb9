//! The downloader itself: one pooled client, capped body reads, charset detection.

use std::sync::{Arc, Once};
use std::time::{Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use kumo_core::charset;
use kumo_core::{ErrorKind, ModuleCounters, ModuleId, ModuleKind, Request, Response};

use crate::decode;
use crate::error::{body_error, classify, describe};
use crate::{BuildError, CookieJar, DownloaderConfig, FetchError};

/// One downloader module: an ID, counters, and a pooled HTTP client.
pub struct Downloader {
    id: ModuleId,
    client: reqwest::Client,
    cfg: DownloaderConfig,
    counters: ModuleCounters,
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
                let url = url::Url::parse(p).map_err(|e| BuildError(format!("proxy {p:?}: {e}")))?;
                if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
                    id = id.with_addr(format!("{host}:{port}"));
                }
                let proxy = reqwest::Proxy::all(p)
                    .map_err(|e| BuildError(format!("proxy {p:?}: {}", describe(&e))))?;
                builder = builder.proxy(proxy);
            }
            None => builder = builder.no_proxy(),
        }
        if cfg.cookies {
            let jar = cfg.cookie_jar.clone().unwrap_or_else(|| Arc::new(CookieJar::in_memory()));
            builder = builder.cookie_provider(jar);
        }
        if !cfg.extra_roots.is_empty() {
            builder = builder.tls_certs_merge(cfg.extra_roots.certificates());
        }
        if cfg.accept_invalid_certs {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        let client = builder
            .connect_timeout(cfg.connect_timeout)
            .timeout(cfg.timeout)
            .pool_max_idle_per_host(cfg.pool_idle_per_host)
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .build()
            .map_err(|e| BuildError(describe(&e)))?;
        Ok(Downloader { id, client, cfg, counters: ModuleCounters::default() })
    }

    pub fn id(&self) -> &ModuleId {
        &self.id
    }

    pub fn counters(&self) -> &ModuleCounters {
        &self.counters
    }

    pub fn config(&self) -> &DownloaderConfig {
        &self.cfg
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
        let mut resp = match builder.send().await {
            Ok(r) => r,
            Err(e) => return Err(FetchError::new(classify(&e), describe(&e), req)),
        };
        let latency = started.elapsed();
        let cap = self.cfg.max_body_bytes;
        // The wire size: compressed bodies are capped again, layer by layer, once decoded.
        if let Some(len) = resp.content_length()
            && len as usize > cap
        {
            return Err(FetchError::new(
                ErrorKind::TooLarge,
                format!("Content-Length {len} exceeds the {cap}-byte cap"),
                req,
            ));
        }
        let status = resp.status();
        let headers = std::mem::take(resp.headers_mut());
        let url = resp.url().clone();
        let codings = match headers.get(http::header::CONTENT_ENCODING) {
            Some(v) if self.cfg.decompress => match v.to_str().ok().and_then(decode::codings) {
                Some(c) => c,
                None => {
                    let msg = format!("unsupported Content-Encoding {v:?}");
                    return Err(FetchError::new(ErrorKind::Decode, msg, req));
                }
            },
            _ => Vec::new(),
        };
        let body = match read_capped(&mut resp, cap).await {
            Ok(b) if codings.is_empty() => b,
            Ok(b) => match decode::decode(b, &codings, cap) {
                Ok(b) => b,
                Err((kind, msg)) => return Err(FetchError::new(kind, msg, req)),
            },
            Err((kind, msg)) => return Err(FetchError::new(kind, msg, req)),
        };
        let ct = headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let (encoding, _) = charset::detect(ct, &body);
        Ok(Response {
            request: req,
            status,
            headers,
            url,
            body,
            encoding,
            fetched_at,
            elapsed: started.elapsed(),
            latency,
        })
    }
}

/// Reads the (decompressed) body, refusing to hold more than `cap` bytes.
async fn read_capped(resp: &mut reqwest::Response, cap: usize) -> Result<Bytes, (ErrorKind, String)> {
    let hint = resp.content_length().map_or(16 * 1024, |n| n as usize).min(cap);
    let mut first: Option<Bytes> = None;
    let mut buf: Option<BytesMut> = None;
    let mut total = 0usize;
    loop {
        let chunk = match resp.chunk().await {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => return Err(body_error(&e, total)),
        };
        total += chunk.len();
        if total > cap {
            return Err((
                ErrorKind::TooLarge,
                format!("body exceeds the {cap}-byte cap (after decompression)"),
            ));
        }
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
    }
    Ok(match (first, buf) {
        (Some(f), _) => f,
        (None, Some(b)) => b.freeze(),
        (None, None) => Bytes::new(),
    })
}
