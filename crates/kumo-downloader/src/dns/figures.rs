//! The resolver's counters, and the snapshot of them the crawl summary and `/metrics` read.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use super::DnsErrorKind;

/// Counters, bumped lock-free by every lookup.
#[derive(Debug, Default)]
pub(super) struct Figures {
    lookups: AtomicU64,
    overridden: AtomicU64,
    cache_hits: AtomicU64,
    joined: AtomicU64,
    queries: AtomicU64,
    resolved: AtomicU64,
    no_such_name: AtomicU64,
    no_address: AtomicU64,
    timeout: AtomicU64,
    server_failure: AtomicU64,
    other: AtomicU64,
}

/// What a lookup was answered with, for counting.
#[derive(Debug, Clone, Copy)]
pub(super) enum Counted {
    Lookup,
    Override,
    CacheHit,
    Joined,
    Query,
    Resolved,
    Failed(DnsErrorKind),
}

impl Figures {
    pub(super) fn count(&self, what: Counted) {
        let counter = match what {
            Counted::Lookup => &self.lookups,
            Counted::Override => &self.overridden,
            Counted::CacheHit => &self.cache_hits,
            Counted::Joined => &self.joined,
            Counted::Query => &self.queries,
            Counted::Resolved => &self.resolved,
            Counted::Failed(DnsErrorKind::NoSuchName) => &self.no_such_name,
            Counted::Failed(DnsErrorKind::NoAddress) => &self.no_address,
            Counted::Failed(DnsErrorKind::Timeout) => &self.timeout,
            Counted::Failed(DnsErrorKind::ServerFailure) => &self.server_failure,
            Counted::Failed(DnsErrorKind::Other) => &self.other,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self, entries: usize, in_flight: usize) -> DnsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        DnsSnapshot {
            lookups: get(&self.lookups),
            overridden: get(&self.overridden),
            cache_hits: get(&self.cache_hits),
            joined: get(&self.joined),
            queries: get(&self.queries),
            resolved: get(&self.resolved),
            failures: DnsFailures {
                no_such_name: get(&self.no_such_name),
                no_address: get(&self.no_address),
                timeout: get(&self.timeout),
                server_failure: get(&self.server_failure),
                other: get(&self.other),
            },
            entries: entries as u64,
            in_flight: in_flight as u64,
        }
    }
}

/// The resolver's figures at one moment.
///
/// Every lookup is answered exactly one way, so once none is under way (and none was
/// cancelled): `lookups == overridden + cache_hits + joined + resolved + failures.total()`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DnsSnapshot {
    /// Host names asked for (IP literals are not lookups).
    pub lookups: u64,
    /// Answered by an override (`--resolve`), without a query.
    pub overridden: u64,
    /// Answered from the cache: an address, or a failure still within its TTL or back-off.
    pub cache_hits: u64,
    /// Answered by another lookup of the same name already under way (single flight).
    pub joined: u64,
    /// Questions put to the name servers: an A, and an AAAA when a name has no A record. (A
    /// UDP resend of an unanswered question, or a CNAME chased, is not counted again.)
    pub queries: u64,
    /// Lookups that went to the name servers and found addresses.
    pub resolved: u64,
    /// Lookups that went to the name servers (or were refused before) and found none.
    pub failures: DnsFailures,
    /// Names in the cache now, answered or under way.
    pub entries: u64,
    /// Lookups at the name servers now (at most `DnsConfig::max_in_flight`).
    pub in_flight: u64,
}

/// Failed lookups by kind (cached failures served again are cache hits, not counted here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DnsFailures {
    /// NXDOMAIN: the name does not exist.
    pub no_such_name: u64,
    /// NODATA: the name has no address of the kinds asked for.
    pub no_address: u64,
    /// No answer in time.
    pub timeout: u64,
    /// The name server answered with a failure code (SERVFAIL, REFUSED, ...).
    pub server_failure: u64,
    /// Any other failure.
    pub other: u64,
}

impl DnsFailures {
    /// Failed lookups of every kind.
    pub fn total(&self) -> u64 {
        self.no_such_name + self.no_address + self.timeout + self.server_failure + self.other
    }

    /// The count of one kind.
    pub fn of(&self, kind: DnsErrorKind) -> u64 {
        match kind {
            DnsErrorKind::NoSuchName => self.no_such_name,
            DnsErrorKind::NoAddress => self.no_address,
            DnsErrorKind::Timeout => self.timeout,
            DnsErrorKind::ServerFailure => self.server_failure,
            DnsErrorKind::Other => self.other,
        }
    }
}
