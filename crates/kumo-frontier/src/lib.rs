//! The frontier: what to fetch next, from which host, and when.
//!
//! - [`Frontier`] is the storage-neutral interface: batches in, leases out, completions back.
//!   A request leaves the frontier only when its lease is completed; a lease that is never
//!   completed comes back after its time-to-live, so a dead worker never loses work.
//! - [`SeenSet`] remembers fingerprints so each request is queued once.
//! - [`Scope`] decides what may be crawled at all (schemes, domains, depth, URL patterns).
//! - [`Politeness`] holds the per-host rules (parallelism, delay, random delay, [`RateLimit`]s
//!   over several windows; matched by glob or regex) that the
//!   frontier enforces when it hands out work. (The engine's departure gate then holds a leased
//!   request only for what is left of its host's or address's spacing.)
//! - [`MemoryFrontier`] and [`MemorySeenSet`] are the in-memory backends; [`conformance`] is the
//!   test suite every backend must pass.
//!
//! Architecture invariant: nothing here does network I/O or knows about HTTP beyond the
//! `Request` type; politeness is a property of *when* a lease is handed out, never a sleep.

#![warn(missing_docs)]

pub mod conformance;
mod error;
mod exact_seen;
mod exchange;
mod frontier;
mod instant;
mod memory;
mod packed;
mod politeness;
mod revisit;
pub mod robots;
pub mod schedule;
mod scope;
mod seen;

pub use error::FrontierError;
pub use exact_seen::{ExactMemorySeenSet, ExactSeenSet};
pub use exchange::{FailureLine, QueueLine, RequeueReport, StoredFailure};
pub use frontier::{
    Commit, CommitReport, Completion, CountersFn, FailureRecord, Frontier, FrontierStats, HostAdjustment,
    HostFigures, Lease, LeaseId, PageRecord, PushReport, Readiness,
};
pub use instant::{FAR, later};
pub use memory::{MemoryFrontier, MemoryFrontierConfig};
pub use politeness::{
    BadRateLimit, Budget, HostPolicy, HostRule, IpPolicy, Politeness, RateLimit, bare_host,
};
pub use revisit::{Revisits, round_counters};
pub use schedule::{HostQueue, HostView, LiftedPause, QueuedRequest};
pub use scope::{
    MAX_PATH_SEGMENTS, MAX_SEGMENT_REPEATS, MAX_URL_BYTES, Scope, ScopeConfig, ScopeError, UrlPattern,
    UrlPatterns,
};
pub use seen::{MemorySeenSet, SeenSet};
