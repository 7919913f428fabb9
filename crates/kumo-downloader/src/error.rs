//! Downloader errors: typed by kind, and a failed fetch hands its request back.

use std::fmt;

use kumo_core::{ErrorKind, ModuleId, Request};

use crate::DnsError;

/// The HTTP client could not be built (bad User-Agent, TLS set-up).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct BuildError(pub String);

/// A fetch that produced no response. The request comes back so it can be retried or
/// recorded: a failed fetch never loses its request.
#[derive(Debug)]
pub struct FetchError {
    /// What kind of failure it was.
    pub kind: ErrorKind,
    /// What happened, for people, with its causes.
    pub message: String,
    /// The request that failed, to be retried or recorded.
    pub request: Box<Request>,
    /// The downloader that failed, when one did.
    pub module: Option<ModuleId>,
    /// The status of another answer that caused the failure (robots.txt's 5xx), if one did.
    pub status: Option<u16>,
    /// What an archive still keeps of an answer that failed, when the downloader records: a
    /// body cut at the cap (`Wire::truncated`), or one that did not decode. Its `body` is
    /// empty; its wire holds what came.
    pub partial: Option<Box<kumo_core::Response>>,
    /// At most this many retries for this failure, when it deserves fewer than the crawl
    /// allows: a body under the minimum rate is tried again once (the server may have been
    /// busy a moment; a second trickle is how it serves that URL).
    pub retry_limit: Option<u32>,
}

impl FetchError {
    /// A failure of `kind` for `request`, with nothing more known: no module, status,
    /// partial answer or retry limit.
    pub fn new(kind: ErrorKind, message: impl Into<String>, request: Request) -> Self {
        FetchError {
            kind,
            message: message.into(),
            request: Box::new(request),
            module: None,
            status: None,
            partial: None,
            retry_limit: None,
        }
    }

    /// Whether the fetch ran out of time (a body slower than the minimum rate too).
    pub fn is_timeout(&self) -> bool {
        self.kind == ErrorKind::Timeout
    }

    /// Whether no connection could be made (with the system's resolver, a failed lookup too).
    pub fn is_connect(&self) -> bool {
        self.kind == ErrorKind::Connect
    }

    /// Whether the body was over the cap (by its `Content-Length`, or once decoded).
    pub fn is_too_large(&self) -> bool {
        self.kind == ErrorKind::TooLarge
    }

    /// Whether the host name could not be resolved (by the crawl's resolver).
    pub fn is_dns(&self) -> bool {
        self.kind == ErrorKind::Dns
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} fetching {}: {}", self.kind, self.request.url, self.message)
    }
}

impl std::error::Error for FetchError {}

/// A request that failed in reqwest, as a fetch error: a failed lookup of the crawl's resolver
/// says so in its own words (the host and what went wrong); others by their causes.
pub(crate) fn fetch_failed(e: &reqwest::Error, request: Request) -> FetchError {
    match dns_failure(e) {
        Some(dns) => FetchError::new(ErrorKind::Dns, dns.to_string(), request),
        None => FetchError::new(classify(e), describe(e), request),
    }
}

/// The crawl resolver's error in `e`'s source chain, if a lookup failed. reqwest wraps it (as
/// a connect error, the resolver's own inside its own DNS error), so the chain is walked.
pub(crate) fn dns_failure(e: &reqwest::Error) -> Option<&DnsError> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(dns) = s.downcast_ref::<DnsError>() {
            return Some(dns);
        }
        src = s.source();
    }
    None
}

/// Classifies a reqwest error. TLS failures surface as connect errors in reqwest, so the
/// source chain is searched for rustls' own error; a failed lookup, for the resolver's (a DNS
/// timeout is a `dns` failure, not a `timeout`: it comes first).
pub(crate) fn classify(e: &reqwest::Error) -> ErrorKind {
    if dns_failure(e).is_some() {
        return ErrorKind::Dns;
    }
    if e.is_timeout() {
        return ErrorKind::Timeout;
    }
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<rustls::Error>() {
            return ErrorKind::Tls;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return ErrorKind::Timeout;
            }
            if wraps_rustls(io) {
                return ErrorKind::Tls;
            }
        }
        src = s.source();
    }
    if e.is_connect() {
        ErrorKind::Connect
    } else if e.is_decode() {
        ErrorKind::Decode
    } else if e.is_body() || e.is_request() {
        ErrorKind::Body
    } else {
        ErrorKind::Other
    }
}

/// Whether an I/O error wraps rustls' own, maybe inside other I/O errors (an untrusted
/// certificate arrives so: an I/O error's `source()` skips the error it wraps, so the chain
/// walk alone never meets it).
fn wraps_rustls(io: &std::io::Error) -> bool {
    let mut inner = io.get_ref();
    // Bounded: wrappers nest a level or two.
    for _ in 0..8 {
        let Some(e) = inner else { return false };
        if e.is::<rustls::Error>() {
            return true;
        }
        inner = e.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
    }
    false
}

/// A failure while the body was read. reqwest calls every one a decoding error, but kumo
/// decodes bodies itself (reqwest is built without decoders): one here is the network (a
/// reset mid-body, a connection closed before its Content-Length), which a retry may get
/// past, so it is a body error (or a timeout), worded as what happened.
pub(crate) fn body_error(e: &reqwest::Error, received: usize) -> (ErrorKind, String) {
    let kind = if classify(e) == ErrorKind::Timeout { ErrorKind::Timeout } else { ErrorKind::Body };
    // reqwest's own top line ("error decoding response body") says what it is not.
    let cause = std::error::Error::source(e).map_or_else(|| e.to_string(), describe);
    (kind, format!("the connection broke after {received} bytes of the body: {cause}"))
}

/// The error's message with its causes, which reqwest keeps in the source chain.
pub(crate) fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}
