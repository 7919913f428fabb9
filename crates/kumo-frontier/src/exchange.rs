//! The stored and exported forms every persistent backend shares: a failure as kept (so it can
//! be re-queued as it was), the JSON lines `kumo frontier export` and `kumo failures export`
//! write, and what a re-queue of failures did. One definition, so a queue exported from one
//! backend reads the same as from another.

use kumo_core::StoredRequest;
use serde::{Deserialize, Serialize};

use crate::FailureRecord;

/// A failure as stored: the record, and the request so it can be re-queued as it was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredFailure {
    /// What is recorded of the failure.
    pub record: FailureRecord,
    /// The request as it was queued.
    pub request: StoredRequest,
}

/// A line of a queue export: the stored request, its host and its place in the queue.
#[derive(Debug, Serialize)]
pub struct QueueLine<'a> {
    /// The request, its fields at the top level of the line.
    #[serde(flatten)]
    pub request: &'a StoredRequest,
    /// Its host's key (`host[:port]`).
    pub host: &'a str,
    /// Its sequence number: first come, first out within a host's priority level.
    pub seq: u64,
}

/// A line of a failures export.
#[derive(Debug, Serialize)]
pub struct FailureLine<'a> {
    /// The failure's number in the store, oldest lowest.
    pub seq: u64,
    /// The failure, its fields at the top level of the line.
    #[serde(flatten)]
    pub failure: &'a StoredFailure,
}

/// What re-queueing failures did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RequeueReport {
    /// Failures put back in the queue.
    pub requeued: usize,
    /// Failures of the kinds asked for that stay: their URL does not parse.
    pub invalid: usize,
    /// Failures left in all.
    pub remaining: usize,
}
