//! The compact, serializable form of a [`Request`], for queues and storage.
//!
//! A queued request spends most of its life waiting, so queues keep this form: the URLs as
//! plain strings and the rarely used parts (method other than GET, headers, body, user data)
//! boxed away. A plain GET link costs about a third of a `Request` (≈ 150 bytes against ≈ 530),
//! and the same form is what persistent backends write.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::{Request, RequestKind, UserData};

/// A request as stored in a queue or on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRequest {
    /// The URL to fetch.
    pub url: Box<str>,
    /// Link depth: 0 for seeds ([`Request::depth`]).
    pub depth: u32,
    /// Scheduling priority: higher is fetched first.
    pub priority: i32,
    /// Failed tries so far.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retries: u32,
    /// Redirects followed to reach it.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub redirects: u8,
    /// The task (site) of a multi-site crawl it belongs to.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub task: u32,
    /// The page it was found on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Box<str>>,
    /// What the response is for.
    #[serde(default, skip_serializing_if = "is_page")]
    pub kind: RequestKind,
    /// The rarely used parts; `None` for a plain GET without headers, body, redirect origin
    /// or user data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Box<StoredExtra>>,
    /// A retried request waits out its back-off until then (Unix milliseconds). Queue state,
    /// not part of the request: kept by durable queues, so a restart does not retry at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before_ms: Option<u64>,
}

/// The parts most requests do not have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredExtra {
    /// The method; `None` for GET.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Header names and raw values, in order; a name comes once per value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, Vec<u8>)>,
    /// The request body; empty for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<u8>,
    /// The URL whose redirect led to the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirected_from: Option<String>,
    /// The request's [`UserData`] as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

fn is_page(k: &RequestKind) -> bool {
    *k == RequestKind::Page
}

/// A stored request that cannot be turned back into a [`Request`] (corrupt or foreign data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoredRequestError {
    /// A stored URL (the request's, its source's or its redirect origin's) does not parse.
    #[error("stored URL {url:?} does not parse: {error}")]
    Url {
        /// The URL as stored.
        url: String,
        /// Why it does not parse.
        error: url::ParseError,
    },
    /// The stored method is not a valid HTTP method.
    #[error("stored method {0:?} is not an HTTP method")]
    Method(String),
    /// A stored header's name or value is not valid; the error holds the name.
    #[error("stored header {0:?} is not a valid header")]
    Header(String),
}

impl From<&Request> for StoredRequest {
    fn from(r: &Request) -> Self {
        let has_extra = r.method != Method::GET
            || !r.headers.is_empty()
            || !r.body.is_empty()
            || r.redirected_from.is_some()
            || !r.data.is_empty();
        let extra = has_extra.then(|| {
            Box::new(StoredExtra {
                method: (r.method != Method::GET).then(|| r.method.as_str().to_string()),
                headers: r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
                    .collect(),
                body: r.body.to_vec(),
                redirected_from: r.redirected_from.as_ref().map(|u| u.as_str().to_string()),
                data: r.data.as_json().cloned(),
            })
        });
        StoredRequest {
            url: r.url.as_str().into(),
            depth: r.depth,
            priority: r.priority,
            retries: r.retries,
            redirects: r.redirects,
            task: r.task,
            source: r.source.as_ref().map(|u| u.as_str().into()),
            kind: r.kind,
            extra,
            not_before_ms: None,
        }
    }
}

fn parse(url: &str) -> Result<Url, StoredRequestError> {
    Url::parse(url).map_err(|error| StoredRequestError::Url { url: url.to_string(), error })
}

impl StoredRequest {
    /// Rebuilds the full request.
    pub fn to_request(&self) -> Result<Request, StoredRequestError> {
        let mut r = Request::get(parse(&self.url)?);
        r.depth = self.depth;
        r.priority = self.priority;
        r.retries = self.retries;
        r.redirects = self.redirects;
        r.task = self.task;
        r.kind = self.kind;
        r.source = self.source.as_deref().map(parse).transpose()?;
        if let Some(x) = &self.extra {
            if let Some(m) = &x.method {
                r.method =
                    Method::from_bytes(m.as_bytes()).map_err(|_| StoredRequestError::Method(m.clone()))?;
            }
            let mut headers = HeaderMap::with_capacity(x.headers.len());
            for (k, v) in &x.headers {
                let name = HeaderName::from_bytes(k.as_bytes())
                    .map_err(|_| StoredRequestError::Header(k.clone()))?;
                let value = HeaderValue::from_bytes(v).map_err(|_| StoredRequestError::Header(k.clone()))?;
                headers.append(name, value);
            }
            r.headers = headers;
            r.body = Bytes::from(x.body.clone());
            r.redirected_from = x.redirected_from.as_deref().map(parse).transpose()?;
            r.data = UserData::from_json(x.data.clone());
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_link_round_trips_without_extra() {
        let seed = Request::get(Url::parse("http://h/a").unwrap());
        let mut link = seed.follow(Url::parse("http://h/b?q=1").unwrap()).with_priority(-4);
        link.retries = 2;
        let s = StoredRequest::from(&link);
        assert!(s.extra.is_none());
        let back = s.to_request().unwrap();
        assert_eq!(back.url, link.url);
        assert_eq!(back.source, link.source);
        assert_eq!((back.depth, back.priority, back.retries), (1, -4, 2));
    }

    #[test]
    fn everything_else_round_trips_through_json() {
        let mut r =
            Request::get(Url::parse("http://h/form").unwrap()).redirect_to(Url::parse("http://h/x").unwrap());
        r.method = Method::POST;
        r.headers.insert("x-token", HeaderValue::from_static("abc"));
        r.body = Bytes::from_static(b"a=1");
        r.data.set(&vec![1, 2, 3]).unwrap();
        let json = serde_json::to_string(&StoredRequest::from(&r)).unwrap();
        let back: StoredRequest = serde_json::from_str(&json).unwrap();
        let back = back.to_request().unwrap();
        assert_eq!(back.method, Method::POST);
        assert_eq!(back.headers["x-token"], "abc");
        assert_eq!(&back.body[..], b"a=1");
        assert_eq!(back.redirected_from, r.redirected_from);
        assert_eq!(back.redirects, 1);
        assert_eq!(back.data.get::<Vec<i32>>(), Some(vec![1, 2, 3]));
    }

    #[test]
    fn corrupt_data_is_an_error() {
        let mut s = StoredRequest::from(&Request::get(Url::parse("http://h/").unwrap()));
        s.url = "not a url".into();
        assert!(matches!(s.to_request(), Err(StoredRequestError::Url { .. })));
    }
}
