//! What can go wrong with a crawl kept in Redis.

use std::time::Duration;

use kumo_frontier::FrontierError;

/// The Redis backend failed.
#[derive(Debug, thiserror::Error)]
pub enum RedisStoreError {
    /// The URL is not one the client understands.
    #[error("Redis URL {url:?}: {reason}")]
    Url { url: String, reason: String },
    /// Redis could not be reached within the time allowed for an outage.
    #[error("Redis at {url} unreachable for {waited:?}: {last}")]
    Unreachable { url: String, waited: Duration, last: String },
    /// Redis may evict keys: a crawl there could lose queued work or its seen set silently.
    #[error(
        "Redis at {url} has maxmemory-policy {policy}, which evicts keys: a crawl there could lose \
         work. Set it to noeviction (CONFIG SET maxmemory-policy noeviction)"
    )]
    Evicting { url: String, policy: String },
    /// The crawl in Redis was started with another configuration.
    #[error("{0}; run the same spider configuration, or another crawl name (--crawl), or --fresh")]
    OtherConfig(String),
    /// This worker is no longer part of the crawl: another process took over its name, or
    /// the crawl was cleared.
    #[error("{0}: another process took over its name, or the crawl was cleared (--fresh); this one stops")]
    Superseded(String),
    /// `--fresh` while workers are still in the crawl would pull it from under them.
    #[error("crawl {crawl:?} has {workers} live worker(s); stop them before clearing it with --fresh")]
    InUse { crawl: String, workers: u64 },
    /// No crawl of that name in that Redis.
    #[error("no crawl {crawl:?} in Redis at {url} (kumo crawl --redis … --crawl NAME names it)")]
    NoCrawl { url: String, crawl: String },
    /// Redis answered something this version does not understand.
    #[error("unexpected reply from Redis: {0}")]
    Protocol(String),
    /// A value could not be encoded or decoded.
    #[error("encoding: {0}")]
    Encoding(#[from] serde_json::Error),
    /// Any other error Redis reported.
    #[error("Redis: {0}")]
    Redis(String),
}

impl From<RedisStoreError> for FrontierError {
    fn from(e: RedisStoreError) -> Self {
        FrontierError::Storage(e.to_string())
    }
}
