//! A failed lookup, typed: the host and what went wrong. reqwest carries it in its error's
//! source chain, where `crate::error::classify` finds it and calls the fetch a `dns` failure.

use std::fmt;

pub use kumo_core::DnsErrorKind;

/// A lookup that found no address for `host`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsError {
    /// The host name as it was looked up (lower case, without a trailing dot).
    pub host: String,
    /// What kind of failure it was (NXDOMAIN, NODATA, a timeout, ...).
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
