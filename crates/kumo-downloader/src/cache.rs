//! The HTTP cache (`--http-cache DIR`), as Scrapy's HttpCacheMiddleware, with two policies:
//!
//! - **always** (Scrapy's DummyPolicy, the default): every answer is kept on disk and replayed
//!   instead of fetched, forever, so a spider's selectors can be worked on again and again
//!   without touching the site;
//! - **rfc9111** (Scrapy's RFC2616Policy): the sites' own rules, as a private cache, decided by
//!   the http-cache-semantics crate: an answer is replayed while it is fresh, revalidated with
//!   its stored validators (`If-None-Match`, `If-Modified-Since`) once stale, and a `304` both
//!   reuses the kept body and refreshes the kept headers and lifetime (so a `304` carrying a
//!   new `max-age` stops revalidation, unlike scrapy#3778); `no-store` is never kept.
//!
//! One file per request, `DIR/ab/cdef….kumo` named by the xxh3-128 of method, URL and body:
//! a magic line, one JSON line (final URL, status, headers, fetch time, the RFC 9111 policy),
//! then the decoded body. Files are written to a temporary name and renamed, so a crash never
//! leaves half of one. Answers that say "try later" (429, 5xx) are not kept: a dead server met
//! once must not be replayed forever. Header values that are not UTF-8 are kept lossily (the
//! body is kept exactly).

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use http_cache_semantics::{AfterResponse, BeforeRequest, CacheOptions, CachePolicy};
use kumo_core::{Request, Response, Url, charset};
use serde::{Deserialize, Serialize};

use crate::FetchError;

const MAGIC: &[u8] = b"KUMO-HTTP-CACHE 1\n";

/// When a kept answer may be replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheRules {
    /// Whenever it is kept: the site is asked only for what the cache lacks.
    #[default]
    Always,
    /// While the site's own headers say it is fresh (RFC 9111), then after revalidation.
    Http,
}

/// The cache directory, its rules, and what it did this run.
#[derive(Debug)]
pub struct HttpCache {
    dir: PathBuf,
    rules: CacheRules,
    hits: AtomicU64,
    revalidated: AtomicU64,
    stored: AtomicU64,
}

/// The head of a kept answer.
#[derive(Serialize, Deserialize)]
struct Head {
    url: String,
    status: u16,
    headers: Vec<(String, String)>,
    /// When it was fetched, in milliseconds since 1970.
    fetched_at_ms: u64,
    /// With the RFC 9111 rules: what they made of the exchange.
    #[serde(default)]
    policy: Option<CachePolicy>,
}

/// A kept answer, read back.
struct Kept {
    head: Head,
    headers: HeaderMap,
    body: Bytes,
}

impl HttpCache {
    /// Opens (creating it if need be) the cache in `dir`, replaying by `rules`.
    pub fn open(dir: impl Into<PathBuf>, rules: CacheRules) -> io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(HttpCache {
            dir,
            rules,
            hits: AtomicU64::new(0),
            revalidated: AtomicU64::new(0),
            stored: AtomicU64::new(0),
        })
    }

    /// The directory the answers are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Answers replayed from the cache without asking the site.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Answers replayed after the site said `304 Not Modified`.
    pub fn revalidated(&self) -> u64 {
        self.revalidated.load(Ordering::Relaxed)
    }

    /// Answers written to the cache.
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::Relaxed)
    }

    fn path(&self, req: &Request) -> PathBuf {
        let mut key = Vec::with_capacity(req.url.as_str().len() + req.body.len() + 16);
        key.extend_from_slice(req.method.as_str().as_bytes());
        key.push(0);
        key.extend_from_slice(req.url.as_str().as_bytes());
        key.push(0);
        key.extend_from_slice(&req.body);
        let hex = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&key));
        self.dir.join(&hex[..2]).join(format!("{}.kumo", &hex[2..]))
    }

    /// `req` answered from the cache where the rules allow, else by `network` (with the
    /// validators added when a stale answer can be revalidated), keeping what may be kept.
    pub(crate) async fn fetch<F, Fut>(&self, req: Request, network: F) -> Result<Response, FetchError>
    where
        F: FnOnce(Request) -> Fut,
        Fut: Future<Output = Result<Response, FetchError>>,
    {
        let kept = self.read(&req).await;
        let now = SystemTime::now();
        let parts = match self.rules {
            CacheRules::Always => {
                if let Some(kept) = kept {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(kept.replay(req, None));
                }
                let resp = network(req).await?;
                self.keep(&resp, None).await;
                return Ok(resp);
            }
            CacheRules::Http => match request_parts(&req) {
                Some(parts) => parts,
                // A URL `http` cannot name: fetched, never kept.
                None => return network(req).await,
            },
        };
        // An entry kept by the "always" rules has no policy: not for these rules.
        if let Some(kept) = kept
            && let Some(policy) = &kept.head.policy
        {
            match policy.before_request(&parts, now) {
                BeforeRequest::Fresh(res) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(kept.replay(req, Some(res)));
                }
                BeforeRequest::Stale { request, matches: true } => {
                    let mut ask = req.clone();
                    for name in [http::header::IF_NONE_MATCH, http::header::IF_MODIFIED_SINCE] {
                        if let Some(v) = request.headers.get(&name) {
                            ask.headers.insert(name, v.clone());
                        }
                    }
                    let mut resp = network(ask).await?;
                    resp.request = req;
                    if resp.status == StatusCode::NOT_MODIFIED
                        && let AfterResponse::NotModified(policy, res) =
                            policy.after_response(&parts, &response_parts(&resp), now)
                    {
                        self.revalidated.fetch_add(1, Ordering::Relaxed);
                        let replayed = kept.replay(resp.request, Some(res));
                        self.keep(&replayed, Some(policy)).await;
                        return Ok(replayed);
                    }
                    self.keep_by_rules(&resp, &parts, now).await;
                    return Ok(resp);
                }
                // Another representation (Vary): fetched as if nothing were kept.
                BeforeRequest::Stale { matches: false, .. } => {}
            }
        }
        let resp = network(req).await?;
        self.keep_by_rules(&resp, &parts, now).await;
        Ok(resp)
    }

    /// Keeps `resp` if the RFC 9111 rules let a private cache store it.
    async fn keep_by_rules(&self, resp: &Response, parts: &http::request::Parts, asked: SystemTime) {
        let opts = CacheOptions { shared: false, ..CacheOptions::default() };
        let policy = CachePolicy::new_options(parts, &response_parts(resp), asked, opts);
        if policy.is_storable() {
            self.keep(resp, Some(policy)).await;
        }
    }

    /// Keeps `resp` unless it says "try later"; a failure to write is logged, and the crawl
    /// goes on without the entry.
    async fn keep(&self, resp: &Response, policy: Option<CachePolicy>) {
        if let Err(e) = self.store(resp, policy).await {
            tracing::warn!(url = %resp.url, error = %e, "cannot keep the answer in the HTTP cache");
        }
    }

    async fn store(&self, resp: &Response, policy: Option<CachePolicy>) -> io::Result<()> {
        let s = resp.status.as_u16();
        if s == 429 || resp.status.is_server_error() {
            return Ok(());
        }
        let head = Head {
            url: resp.url.to_string(),
            status: s,
            headers: resp
                .headers
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            fetched_at_ms: resp.fetched_at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            policy,
        };
        let mut file = MAGIC.to_vec();
        serde_json::to_writer(&mut file, &head).map_err(io::Error::other)?;
        file.push(b'\n');
        file.extend_from_slice(&resp.body);
        let path = self.path(&resp.request);
        let parent = path.parent().unwrap_or(&self.dir);
        tokio::fs::create_dir_all(parent).await?;
        let tmp = parent.join(format!(".{}.tmp", fastrand::u64(..)));
        tokio::fs::write(&tmp, &file).await?;
        if let Err(e) = tokio::fs::rename(&tmp, &path).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        self.stored.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The kept answer to `req`, if there is one. A file that cannot be read back (damaged,
    /// from another version) counts as a miss, and the fetch that follows replaces it.
    async fn read(&self, req: &Request) -> Option<Kept> {
        let file = Bytes::from(tokio::fs::read(self.path(req)).await.ok()?);
        let rest = file.strip_prefix(MAGIC)?;
        let newline = rest.iter().position(|&b| b == b'\n')?;
        let head: Head = serde_json::from_slice(&rest[..newline]).ok()?;
        let mut headers = HeaderMap::with_capacity(head.headers.len());
        for (n, v) in &head.headers {
            headers.append(HeaderName::from_bytes(n.as_bytes()).ok()?, HeaderValue::from_str(v).ok()?);
        }
        let body = file.slice(MAGIC.len() + newline + 1..);
        Some(Kept { head, headers, body })
    }
}

impl Kept {
    /// The kept answer as the response to `req`; `fresh` carries the status and headers the
    /// RFC 9111 rules give it now (an updated `Age`, headers a `304` refreshed).
    fn replay(self, req: Request, fresh: Option<http::response::Parts>) -> Response {
        let (status, headers) = match fresh {
            Some(p) => (p.status, p.headers),
            None => (StatusCode::from_u16(self.head.status).unwrap_or(StatusCode::OK), self.headers),
        };
        let ct = headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let (encoding, _) = charset::detect(ct, &self.body);
        let url = Url::parse(&self.head.url).unwrap_or_else(|_| req.url.clone());
        Response {
            request: req,
            status,
            headers,
            url,
            body: self.body,
            encoding,
            fetched_at: UNIX_EPOCH + Duration::from_millis(self.head.fetched_at_ms),
            elapsed: Duration::ZERO,
            latency: Duration::ZERO,
            wire: None,
        }
    }
}

/// `req` as the cache rules read a request; `None` for a URL `http` cannot hold.
fn request_parts(req: &Request) -> Option<http::request::Parts> {
    let (mut parts, ()) =
        http::Request::builder().method(req.method.clone()).uri(req.url.as_str()).body(()).ok()?.into_parts();
    parts.headers = req.headers.clone();
    Some(parts)
}

fn response_parts(resp: &Response) -> http::response::Parts {
    let (mut parts, ()) = http::Response::new(()).into_parts();
    parts.status = resp.status;
    parts.headers = resp.headers.clone();
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(url: &str, status: u16, body: &'static [u8]) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        headers.append("set-cookie", HeaderValue::from_static("b=2"));
        let url = Url::parse(url).unwrap();
        Response {
            request: Request::get(url.clone()),
            status: StatusCode::from_u16(status).unwrap(),
            headers,
            url,
            body: Bytes::from_static(body),
            encoding: charset::detect(Some("text/html; charset=utf-8"), b"").0,
            fetched_at: SystemTime::now(),
            elapsed: Duration::from_millis(5),
            latency: Duration::from_millis(3),
            wire: None,
        }
    }

    /// Fetches `req` through `cache`, the network answering with `answer` (and counting).
    async fn through(cache: &HttpCache, req: &Request, answer: &Response, asked: &mut u32) -> Response {
        let r = cache
            .fetch(req.clone(), |_| {
                *asked += 1;
                std::future::ready(Ok(answer.clone()))
            })
            .await;
        r.unwrap()
    }

    #[tokio::test]
    async fn an_answer_comes_back_as_it_was_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::open(dir.path(), CacheRules::Always).unwrap();
        let resp = response("http://h/p?q=1", 404, b"<title>x</title>\0\xff binary");
        let mut asked = 0;
        through(&cache, &resp.request, &resp, &mut asked).await;
        let back = through(&cache, &resp.request, &resp, &mut asked).await;
        assert_eq!(asked, 1, "the second answer came from the cache");
        assert_eq!((back.status, &back.url, &back.body), (resp.status, &resp.url, &resp.body));
        assert_eq!(back.headers, resp.headers, "repeated headers too");
        let ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis();
        assert_eq!(ms(back.fetched_at), ms(resp.fetched_at));
        assert_eq!((cache.hits(), cache.stored()), (1, 1));
        // Another URL, or another method, is another entry.
        let other = Request::get(Url::parse("http://h/p?q=2").unwrap());
        through(&cache, &other, &resp, &mut asked).await;
        let mut post = resp.request.clone();
        post.method = http::Method::POST;
        through(&cache, &post, &resp, &mut asked).await;
        assert_eq!(asked, 3);
    }

    #[tokio::test]
    async fn try_later_answers_are_not_kept_and_damaged_files_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::open(dir.path(), CacheRules::Always).unwrap();
        let mut asked = 0;
        for status in [429, 500, 503] {
            let resp = response("http://h/busy", status, b"later");
            through(&cache, &resp.request, &resp, &mut asked).await;
        }
        assert_eq!(cache.stored(), 0);
        let resp = response("http://h/ok", 200, b"fine");
        through(&cache, &resp.request, &resp, &mut asked).await;
        std::fs::write(cache.path(&resp.request), b"KUMO-HTTP-CACHE 1\n{not json").unwrap();
        through(&cache, &resp.request, &resp, &mut asked).await;
        assert_eq!(asked, 5, "the damaged entry was fetched again");
        // Nothing but entries in the directory: no temporary files left behind.
        let mut names = Vec::new();
        for sub in std::fs::read_dir(dir.path()).unwrap() {
            for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
                names.push(f.unwrap().file_name().into_string().unwrap());
            }
        }
        assert!(names.iter().all(|n| n.ends_with(".kumo")), "{names:?}");
    }
}
