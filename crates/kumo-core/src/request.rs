//! What the crawler wants fetched: a URL with method, headers, body and crawl bookkeeping.

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde::{Serialize, de::DeserializeOwned};
use url::Url;

use crate::{CanonicalOptions, DedupMode, Fingerprint, canonicalize};

/// Scheduling priority: higher is fetched first. Any `i32` is a level of its own, so there are
/// as many levels as a crawl needs (the gocrawler course's two-level queue was the limitation).
pub type Priority = i32;

/// Typed data a page passes to the requests it produces (a product id, a category…).
///
/// It is stored as JSON so that it survives a restart with the request it belongs to; the
/// typed accessors make the untyped storage invisible to callers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserData(Option<Box<serde_json::Value>>);

impl UserData {
    /// Stores `value`; a value that cannot be represented as JSON is an error.
    pub fn set<T: Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        self.0 = Some(Box::new(serde_json::to_value(value)?));
        Ok(())
    }

    /// Reads the stored value back as `T`; `None` when nothing is stored or it is not a `T`.
    pub fn get<T: DeserializeOwned>(&self) -> Option<T> {
        self.0.as_deref().and_then(|v| T::deserialize(v).ok())
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The raw JSON, for storage backends.
    pub fn as_json(&self) -> Option<&serde_json::Value> {
        self.0.as_deref()
    }

    /// Wraps raw JSON read back from storage; `None` is no value.
    pub fn from_json(v: Option<serde_json::Value>) -> Self {
        UserData(v.map(Box::new))
    }
}

/// What a request's response is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestKind {
    /// A page: analyzed for links and items.
    #[default]
    Page,
    /// A sitemap or sitemap index; `nesting` counts the indexes above it.
    Sitemap {
        /// Sitemap indexes above this one: 0 for one given to the crawl or named by robots.txt.
        nesting: u8,
    },
    /// A page fetched by an earlier run, asked again (`--recrawl`) with its validators in the
    /// request's headers: `hash` is the xxh3 of the body it had, `bytes` its size, so an
    /// unchanged answer (a `304`, or the same body) is known as such; `interval_ms` is the
    /// re-visit interval it had, for an adaptive schedule to move.
    Revisit {
        /// xxh3-64 of the body the page had.
        hash: u64,
        /// The size of that body, in bytes.
        bytes: u64,
        /// The re-visit interval it had, in milliseconds; 0 when the stored request has none.
        #[serde(default)]
        interval_ms: u64,
    },
}

/// A request to fetch. `url` is fetched as written (less its fragment); de-duplication uses
/// the canonical form through [`Request::fingerprint`].
#[derive(Debug, Clone)]
pub struct Request {
    /// The URL to fetch; the constructors drop its fragment.
    pub url: Url,
    /// The HTTP method: GET unless set.
    pub method: Method,
    /// The request's own headers; the downloader adds its defaults (`User-Agent`,
    /// `Accept-Encoding`) where these have none.
    pub headers: HeaderMap,
    /// The request body; empty for none.
    pub body: Bytes,
    /// 0 for seeds; a link found on a page at depth `d` gets `d + 1` (Colly's rule).
    pub depth: u32,
    /// Scheduling priority: higher is fetched first.
    pub priority: Priority,
    /// The page on which this request was found (the referrer).
    pub source: Option<Url>,
    /// The URL whose redirect led here, when this request follows a redirect.
    pub redirected_from: Option<Url>,
    /// How many redirects were followed to reach this request.
    pub redirects: u8,
    /// How many times this request was tried and failed before.
    pub retries: u32,
    /// The task (site) of a multi-site crawl this request belongs to.
    pub task: u32,
    /// What the response is for: a page, a sitemap, or a page asked again.
    pub kind: RequestKind,
    /// Data for whoever handles the response; kept across redirects, not passed on by
    /// [`Request::follow`].
    pub data: UserData,
}

impl Request {
    /// A GET request for `url` at depth 0 (a seed). The fragment is dropped: it never reaches
    /// the server.
    pub fn get(mut url: Url) -> Self {
        url.set_fragment(None);
        Request {
            url,
            method: Method::GET,
            headers: HeaderMap::new(),
            body: Bytes::new(),
            depth: 0,
            priority: 0,
            source: None,
            redirected_from: None,
            redirects: 0,
            retries: 0,
            task: 0,
            kind: RequestKind::Page,
            data: UserData::default(),
        }
    }

    /// A request for a link found on the page `self` fetched: one level deeper, same task and
    /// priority, with `self` as its source.
    pub fn follow(&self, url: Url) -> Self {
        let mut r = Request::get(url);
        r.depth = self.depth + 1;
        r.priority = self.priority;
        r.task = self.task;
        r.source = Some(self.url.clone());
        r
    }

    /// The request that follows a redirect from `self` to `location`: same depth (a redirect
    /// is not a link), one more redirect hop.
    pub fn redirect_to(&self, location: Url) -> Self {
        let mut r = Request::get(location);
        r.depth = self.depth;
        r.priority = self.priority;
        r.task = self.task;
        r.source = self.source.clone();
        r.redirected_from = Some(self.url.clone());
        r.redirects = self.redirects.saturating_add(1);
        // A page asked again that moved is a new page where it went.
        r.kind = match self.kind {
            RequestKind::Revisit { .. } => RequestKind::Page,
            kind => kind,
        };
        r.data = self.data.clone();
        r
    }

    /// Sets the priority, builder style.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// The host this request is queued under for politeness: `host[:port]`.
    pub fn host_key(&self) -> String {
        host_key(&self.url)
    }

    /// The de-duplication identity of this request.
    pub fn fingerprint(&self, opts: &CanonicalOptions, mode: DedupMode) -> Fingerprint {
        let canonical = canonicalize(&self.url, opts);
        let source = match mode {
            DedupMode::Strict => None,
            DedupMode::NonStrict => self.source.as_ref().map(|s| canonicalize(s, opts)),
        };
        Fingerprint::compute(self.method.as_str(), &canonical, &self.body, source.as_deref())
    }
}

/// `host[:port]` of a URL (the port only when not the scheme's default).
pub fn host_key(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_goes_one_deeper_and_redirect_does_not() {
        let seed = Request::get(Url::parse("http://h/a#x").unwrap()).with_priority(3);
        assert_eq!(seed.url.as_str(), "http://h/a");
        let child = seed.follow(Url::parse("http://h/b").unwrap());
        assert_eq!((child.depth, child.priority), (1, 3));
        assert_eq!(child.source.as_ref().unwrap().as_str(), "http://h/a");
        let hop = child.redirect_to(Url::parse("http://h/b/").unwrap());
        assert_eq!((hop.depth, hop.redirects), (1, 1));
        assert_eq!(hop.redirected_from.unwrap().as_str(), "http://h/b");
    }

    #[test]
    fn user_data_is_typed() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Ctx {
            category: String,
        }
        let mut d = UserData::default();
        d.set(&Ctx { category: "books".into() }).unwrap();
        assert_eq!(d.get::<Ctx>(), Some(Ctx { category: "books".into() }));
        assert_eq!(d.get::<u32>(), None);
    }

    #[test]
    fn strict_and_non_strict_fingerprints() {
        let opts = CanonicalOptions::default();
        let a = Request::get(Url::parse("http://h/").unwrap());
        let x = a.follow(Url::parse("http://h/x").unwrap());
        let b = Request::get(Url::parse("http://h/b").unwrap());
        let y = b.follow(Url::parse("http://H:80/x#f").unwrap());
        assert_eq!(x.fingerprint(&opts, DedupMode::Strict), y.fingerprint(&opts, DedupMode::Strict));
        assert_ne!(x.fingerprint(&opts, DedupMode::NonStrict), y.fingerprint(&opts, DedupMode::NonStrict));
    }

    #[test]
    fn host_key_keeps_only_non_default_ports() {
        assert_eq!(host_key(&Url::parse("http://a.b:80/").unwrap()), "a.b");
        assert_eq!(host_key(&Url::parse("http://127.0.0.1:8088/").unwrap()), "127.0.0.1:8088");
    }
}
