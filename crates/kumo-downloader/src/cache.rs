//! A development HTTP cache (`--http-cache DIR`), as Scrapy's HttpCacheMiddleware with its
//! "always" policy (DummyPolicy): every answer is kept on disk and replayed instead of fetched,
//! so a spider's selectors can be worked on again and again without touching the site.
//!
//! One file per request, `DIR/ab/cdef….kumo` named by the xxh3-128 of method, URL and body:
//! a magic line, one JSON line (final URL, status, headers, fetch time), then the decoded
//! body. Files are written to a temporary name and renamed, so a crash never leaves half of
//! one. Answers that say "try later" (429, 5xx) are not kept: a dead server met once must not
//! be replayed forever. Header values that are not UTF-8 are kept lossily (a development
//! cache; the body is kept exactly).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use kumo_core::{Request, Response, Url, charset};
use serde::{Deserialize, Serialize};

const MAGIC: &[u8] = b"KUMO-HTTP-CACHE 1\n";

/// The cache directory and what it did this run.
#[derive(Debug)]
pub struct HttpCache {
    dir: PathBuf,
    hits: AtomicU64,
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
}

impl HttpCache {
    /// Opens (creating it if need be) the cache in `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(HttpCache { dir, hits: AtomicU64::new(0), stored: AtomicU64::new(0) })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Answers replayed from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Answers written to the cache so far.
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

    /// The kept answer to `req`, if there is one. A file that cannot be read back (damaged,
    /// from another version) counts as a miss, and the fetch that follows replaces it.
    pub async fn load(&self, req: &Request) -> Option<Response> {
        let bytes = tokio::fs::read(self.path(req)).await.ok()?;
        let resp = decode(req, Bytes::from(bytes))?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(resp)
    }

    /// Keeps `resp` unless it says "try later". Errors are the caller's to report: the crawl
    /// goes on without the cache entry.
    pub async fn store(&self, resp: &Response) -> io::Result<()> {
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
}

/// A kept file back into a response to `req`.
fn decode(req: &Request, file: Bytes) -> Option<Response> {
    let rest = file.strip_prefix(MAGIC)?;
    let newline = rest.iter().position(|&b| b == b'\n')?;
    let head: Head = serde_json::from_slice(&rest[..newline]).ok()?;
    let body_at = MAGIC.len() + newline + 1;
    let mut headers = HeaderMap::with_capacity(head.headers.len());
    for (n, v) in &head.headers {
        headers.append(HeaderName::from_bytes(n.as_bytes()).ok()?, HeaderValue::from_str(v).ok()?);
    }
    let body = file.slice(body_at..);
    let ct = headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let (encoding, _) = charset::detect(ct, &body);
    Some(Response {
        request: req.clone(),
        status: StatusCode::from_u16(head.status).ok()?,
        headers,
        url: Url::parse(&head.url).ok()?,
        body,
        encoding,
        fetched_at: UNIX_EPOCH + Duration::from_millis(head.fetched_at_ms),
        elapsed: Duration::ZERO,
        latency: Duration::ZERO,
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

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
        }
    }

    #[tokio::test]
    async fn an_answer_comes_back_as_it_was_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::open(dir.path()).unwrap();
        let resp = response("http://h/p?q=1", 404, b"<title>x</title>\0\xff binary");
        assert!(cache.load(&resp.request).await.is_none());
        cache.store(&resp).await.unwrap();
        let back = cache.load(&resp.request).await.expect("kept");
        assert_eq!((back.status, &back.url, &back.body), (resp.status, &resp.url, &resp.body));
        assert_eq!(back.headers, resp.headers, "repeated headers too");
        let ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis();
        assert_eq!(ms(back.fetched_at), ms(resp.fetched_at));
        assert_eq!((cache.hits(), cache.stored()), (1, 1));
        // Another URL, or another method, is another entry.
        assert!(cache.load(&Request::get(Url::parse("http://h/p?q=2").unwrap())).await.is_none());
        let mut post = resp.request.clone();
        post.method = http::Method::POST;
        assert!(cache.load(&post).await.is_none());
    }

    #[tokio::test]
    async fn try_later_answers_are_not_kept_and_damaged_files_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = HttpCache::open(dir.path()).unwrap();
        for status in [429, 500, 503] {
            let resp = response("http://h/busy", status, b"later");
            cache.store(&resp).await.unwrap();
            assert!(cache.load(&resp.request).await.is_none(), "{status} kept");
        }
        let resp = response("http://h/ok", 200, b"fine");
        cache.store(&resp).await.unwrap();
        std::fs::write(cache.path(&resp.request), b"KUMO-HTTP-CACHE 1\n{not json").unwrap();
        assert!(cache.load(&resp.request).await.is_none());
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
