//! Typed outcomes that are not pages: skips (expected, counted) and errors (by stage and kind).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a request was not fetched. A skip is a normal outcome, not an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Not http or https (`mailto:`, `javascript:`, `ftp:`…).
    Scheme,
    /// The host is outside the allowed registrable domains.
    Domain,
    /// Deeper than the maximum depth.
    Depth,
    /// Matched a deny pattern, or no allow pattern.
    Pattern,
    /// Already seen (de-duplicated).
    Seen,
    /// More redirects in a row than allowed.
    TooManyRedirects,
    /// The crawl reached its page limit before this request was fetched.
    PageLimit,
    /// The site's robots.txt disallows it.
    Robots,
    /// Longer than the URL length limit (8 KiB by default): servers refuse such requests.
    UrlTooLong,
    /// A URL shape that only spider traps make: a path whose segments repeat (`/a/b/a/b/a/b`)
    /// or that is deeper than the segment limit.
    Trap,
    /// Its host or its registrable domain has used its page budget (`max_pages_per_host`,
    /// `max_pages_per_domain`).
    Budget,
}

impl SkipReason {
    /// The reason's name, as it is serialized (`too-many-redirects`, `robots`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Scheme => "scheme",
            SkipReason::Domain => "domain",
            SkipReason::Depth => "depth",
            SkipReason::Pattern => "pattern",
            SkipReason::Seen => "seen",
            SkipReason::TooManyRedirects => "too-many-redirects",
            SkipReason::PageLimit => "page-limit",
            SkipReason::Robots => "robots",
            SkipReason::UrlTooLong => "url-too-long",
            SkipReason::Trap => "trap",
            SkipReason::Budget => "budget",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stage an error came from (the seeds wrap errors by module type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Queueing requests and keeping the crawl's state.
    Scheduler,
    /// Fetching requests.
    Downloader,
    /// Analyzing responses for links and items.
    Parser,
    /// Processing items and writing them out.
    Pipeline,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Scheduler => "scheduler",
            Stage::Downloader => "downloader",
            Stage::Parser => "parser",
            Stage::Pipeline => "pipeline",
        })
    }
}

/// What kind of failure, for counting and for deciding whether to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The connection could not be made: refused, reset or unreachable.
    Connect,
    /// The host name has no address: the name does not exist (NXDOMAIN) or has no address
    /// record (NODATA), or the lookup timed out or failed at the name server. Only the
    /// crawl's own resolver tells these apart (without it a failed lookup is a `Connect`).
    /// Never connected, so no request was sent. Not retried at once: the resolver's cache
    /// would give the same answer (a failure stands for its negative TTL or back-off);
    /// `kumo failures requeue --kind dns` tries again later.
    Dns,
    /// The server took too long: to answer, or to send the body.
    Timeout,
    /// TLS handshake or certificate problem.
    Tls,
    /// The connection broke while the body was read.
    Body,
    /// The body (after decompression) exceeded the size cap.
    TooLarge,
    /// The body's content-encoding could not be decoded.
    Decode,
    /// A redirect without a usable `Location`.
    BadRedirect,
    /// The server kept answering with a retryable status (5xx, 429).
    Status,
    /// The site's robots.txt stayed unavailable (5xx or unreachable) through every try, which
    /// RFC 9309 reads as "disallow everything": the request was never sent. Not retried (its
    /// robots.txt was); `kumo failures requeue --kind robots` tries again later.
    Robots,
    /// A URL that could not be parsed.
    InvalidUrl,
    /// The output could not be written.
    Io,
    /// The storage backend failed.
    Storage,
    /// A page read only in part: an unparseable link or base URL, an item missing a required
    /// field (an analyzer's issues; the page itself counts as fetched).
    Content,
    /// A spider's script hook failed on the page (threw, ran past its budget or out of
    /// memory, or answered what its hook cannot take): the page is failed, its items not
    /// written, its links followed as they were before the hook.
    Script,
    /// The page was past a limit of model extraction (elements nested deeper than the cap,
    /// the extraction time budget, the size of its values): the page is failed, its items
    /// not written, its links followed. Not retried on its own (the same page would fail
    /// again); `kumo failures requeue --kind extract` tries again later.
    Extract,
    /// Anything no other kind covers.
    Other,
}

/// A kind by its name (`connect`, `status`, ...), as [`ErrorKind::as_str`] writes it;
/// the error lists the names there are.
impl std::str::FromStr for ErrorKind {
    type Err = serde::de::value::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        use serde::de::IntoDeserializer;
        ErrorKind::deserialize(s.into_deserializer())
    }
}

impl ErrorKind {
    /// The kind's name, as it is serialized (`connect`, `too-large`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Dns => "dns",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Tls => "tls",
            ErrorKind::Body => "body",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::Decode => "decode",
            ErrorKind::BadRedirect => "bad-redirect",
            ErrorKind::Status => "status",
            ErrorKind::Robots => "robots",
            ErrorKind::InvalidUrl => "invalid-url",
            ErrorKind::Io => "io",
            ErrorKind::Storage => "storage",
            ErrorKind::Content => "content",
            ErrorKind::Script => "script",
            ErrorKind::Extract => "extract",
            ErrorKind::Other => "other",
        }
    }

    /// Whether trying again later may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Body | ErrorKind::Status)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_is_a_kind_of_its_own() {
        let kind: ErrorKind = "dns".parse().unwrap();
        assert_eq!(kind, ErrorKind::Dns);
        assert_eq!((kind.as_str(), kind.to_string()), ("dns", "dns".to_owned()));
        assert_eq!(serde_json::to_string(&kind).unwrap(), "\"dns\"");
        assert!(!kind.is_retryable());
        let unknown = "dsn".parse::<ErrorKind>().unwrap_err().to_string();
        assert!(unknown.contains("`dns`"), "{unknown}");
    }

    #[test]
    fn skip_reasons_serialize_as_they_display() {
        for r in [SkipReason::UrlTooLong, SkipReason::Trap, SkipReason::TooManyRedirects] {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        assert_eq!(SkipReason::Trap.as_str(), "trap");
    }
}
