//! The frontier's error type.

/// A frontier or seen-set backend failed. The in-memory backend only fails on misuse;
/// persistent and networked backends fail on I/O.
#[derive(Debug, thiserror::Error)]
pub enum FrontierError {
    /// A completion named a lease that is not out (already completed, or expired and re-queued).
    #[error("lease {0} is not out (completed twice, or expired and re-queued)")]
    UnknownLease(u64),
    /// The storage behind the frontier failed.
    #[error("frontier storage: {0}")]
    Storage(String),
    /// The crawl's state is gone from its storage (a Redis restarted without persistence or
    /// flushed, or the crawl cleared from outside): nothing of it can be resumed, and going on
    /// would start the crawl over.
    #[error("{0}")]
    StateLost(String),
}
