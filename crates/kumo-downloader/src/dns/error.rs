//! A failed lookup, typed: the host and what went wrong. reqwest carries it in its error's
//! source chain, where `crate::error::classify` finds it and calls the fetch a `dns` failure.

use std::fmt;

use serde::Serialize;

/// What went wrong with a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DnsErrorKind {
    /// NXDOMAIN: the name does not exist. A definitive answer, cached for its negative TTL.
    NoSuchName,
    /// NODATA: the name exists but has no address of the kinds asked for. Definitive too.
    NoAddress,
    /// No answer in time (the name servers' or kumo's own deadline). Backed off, not cached
    /// as an answer.
    Timeout,
    /// The server answered with a failure code (SERVFAIL, REFUSED, ...). Backed off.
    ServerFailure,
    /// Anything else: a name DNS cannot carry, no usable name server, a socket error.
    Other,
}

impl DnsErrorKind {
    /// The kind's name, as it is serialized (`no-such-name`, `timeout`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            DnsErrorKind::NoSuchName => "no-such-name",
            DnsErrorKind::NoAddress => "no-address",
            DnsErrorKind::Timeout => "timeout",
            DnsErrorKind::ServerFailure => "server-failure",
            DnsErrorKind::Other => "other",
        }
    }

    /// Whether the name servers gave a definitive answer (the name has no address), rather
    /// than failing to give one.
    pub fn is_definitive(self) -> bool {
        matches!(self, DnsErrorKind::NoSuchName | DnsErrorKind::NoAddress)
    }

    /// The words a message uses for it.
    fn words(self) -> &'static str {
        match self {
            DnsErrorKind::NoSuchName => "no such name (NXDOMAIN)",
            DnsErrorKind::NoAddress => "the name has no address (NODATA)",
            DnsErrorKind::Timeout => "timed out",
            DnsErrorKind::ServerFailure => "the name server failed",
            DnsErrorKind::Other => "lookup failed",
        }
    }
}

impl fmt::Display for DnsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lookup that found no address for `host`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsError {
    /// The host name as it was looked up (lower case, without a trailing dot).
    pub host: String,
    pub kind: DnsErrorKind,
    /// What the name servers or the resolver said beyond the kind (`SERVFAIL`, a deadline);
    /// may be empty.
    pub detail: String,
}

impl fmt::Display for DnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot resolve {}: {}", self.host, self.kind.words())?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for DnsError {}
