//! What the server remembers about the requests it served: a hit log, a count, and concurrency.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One request as it arrived at the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// When the request's head had been read.
    pub at: Instant,
    /// The request method, e.g. `GET`.
    pub method: String,
    /// The request target's path and query, e.g. `/page/3.html?view=print`.
    pub target: String,
    /// The `Host` header, if the client sent one.
    pub host: Option<String>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
    /// The `Cookie` header.
    pub cookie: Option<String>,
    /// The `If-None-Match` header: a conditional request's stored ETag.
    pub if_none_match: Option<String>,
    /// The `If-Modified-Since` header: a conditional request's stored Last-Modified.
    pub if_modified_since: Option<String>,
}

/// Counters shared by every connection of one server.
///
/// The count and the in-flight numbers are plain atomics so that a benchmark run with
/// recording off never serialises requests on a lock.
#[derive(Debug)]
pub(crate) struct Recorder {
    record: bool,
    hits: Mutex<Vec<Hit>>,
    count: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Recorder {
    pub(crate) fn new(record: bool) -> Self {
        Recorder {
            record,
            hits: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        }
    }

    /// Notes a request's arrival; the returned guard marks it finished when dropped.
    ///
    /// The guard travels inside the response body, so a request stays "in flight" until its
    /// whole body has been written (or the connection dropped), not just until its headers.
    pub(crate) fn arrive(self: &Arc<Self>, req: &http::request::Parts) -> InFlight {
        self.count.fetch_add(1, Ordering::Relaxed);
        let now = self.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
        self.max_in_flight.fetch_max(now, Ordering::AcqRel);
        if self.record {
            let header = |name: http::header::HeaderName| {
                req.headers.get(name).and_then(|h| h.to_str().ok()).map(str::to_owned)
            };
            let hit = Hit {
                at: Instant::now(),
                method: req.method.as_str().to_owned(),
                target: req
                    .uri
                    .path_and_query()
                    .map_or_else(|| req.uri.path().to_owned(), |pq| pq.as_str().to_owned()),
                host: header(http::header::HOST),
                user_agent: header(http::header::USER_AGENT),
                cookie: header(http::header::COOKIE),
                if_none_match: header(http::header::IF_NONE_MATCH),
                if_modified_since: header(http::header::IF_MODIFIED_SINCE),
            };
            self.lock().push(hit);
        }
        InFlight(Arc::clone(self))
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.lock().clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::Acquire)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Hit>> {
        // A panic while holding this lock cannot leave the Vec half-written, so a poisoned
        // lock still holds a usable log.
        self.hits.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Marks one request as in flight for as long as it lives.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Recorder>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}
