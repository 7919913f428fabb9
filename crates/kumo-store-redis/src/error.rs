//! What can go wrong with a crawl kept in Redis.

use std::time::Duration;

use kumo_frontier::FrontierError;

/// The Redis backend failed.
#[derive(Debug, thiserror::Error)]
pub enum RedisStoreError {
    /// The URL is not one the client understands.
    #[error("Redis URL {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What the client found wrong with it.
        reason: String,
    },
    /// Redis could not be reached within the time allowed for an outage.
    #[error("Redis at {url} unreachable for {waited:?}: {last}")]
    Unreachable {
        /// The server's URL.
        url: String,
        /// How long the call was retried.
        waited: Duration,
        /// The last attempt's error.
        last: String,
    },
    /// Redis may evict keys: a crawl there could lose queued work or its seen set silently.
    #[error(
        "Redis at {url} has maxmemory-policy {policy}, which evicts keys: a crawl there could lose \
         work. Set it to noeviction (CONFIG SET maxmemory-policy noeviction)"
    )]
    Evicting {
        /// The server's URL.
        url: String,
        /// Its `maxmemory-policy`, which is not `noeviction`.
        policy: String,
    },
    /// The crawl in Redis was started with another configuration.
    #[error("{0}; run the same spider configuration, or another crawl name (--crawl), or --fresh")]
    OtherConfig(String),
    /// This worker is no longer part of the crawl: another process took over its name.
    #[error("{0}: another process took over its name; this one stops")]
    Superseded(String),
    /// The crawl's keys (under this prefix) vanished from Redis while this worker was in it:
    /// its queue, seen set, leases and the items not yet written are gone with them.
    #[error(
        "{STATE_LOST}: no key of crawl {:?} is left there (Redis restarted without persistence, or \
         was flushed); this worker stops rather than start the crawl over",
        crawl_of(.0)
    )]
    StateLost(String),
    /// The crawl (under this prefix) was cleared with `--fresh` while this worker was away
    /// (counted dead: `--fresh` waits for live workers), and perhaps started again.
    #[error(
        "{CLEARED}: crawl {:?} was cleared with --fresh while this worker was away (its heartbeat \
         stopped for longer than --dead-after); this one stops",
        crawl_of(.0)
    )]
    Cleared(String),
    /// `--fresh` while workers are still in the crawl would pull it from under them.
    #[error("crawl {crawl:?} has {workers} live worker(s); stop them before clearing it with --fresh")]
    InUse {
        /// The crawl's name.
        crawl: String,
        /// How many of its workers are alive (their liveness deadline not passed).
        workers: u64,
    },
    /// No crawl of that name in that Redis.
    #[error("no crawl {crawl:?} in Redis at {url} (kumo crawl --redis … --crawl NAME names it)")]
    NoCrawl {
        /// The server's URL.
        url: String,
        /// The crawl's name.
        crawl: String,
    },
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

/// How the error of a crawl whose keys vanished begins, wherever it is passed on as text.
const STATE_LOST: &str = "the crawl's state vanished from Redis";
/// How the error of a crawl cleared under a worker begins.
const CLEARED: &str = "the crawl's state was cleared in Redis";

/// The crawl's name in its key prefix `kumo:{NAME}:`.
fn crawl_of(prefix: &str) -> &str {
    prefix.strip_prefix("kumo:{").and_then(|p| p.strip_suffix("}:")).unwrap_or(prefix)
}

/// What became of a crawl's state in Redis that a worker stopped for, as its errors say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateGone {
    /// Its keys vanished: Redis restarted without persistence, or was flushed.
    Lost,
    /// `--fresh` cleared it while the worker was away.
    Cleared,
}

impl StateGone {
    /// Reads it from an error's text: the engine keeps a stopped crawl's error as text (its
    /// summary's `stop_error`), whichever path (lease, commit, item journal) met it first.
    pub fn in_message(message: &str) -> Option<StateGone> {
        if message.contains(STATE_LOST) {
            Some(StateGone::Lost)
        } else if message.contains(CLEARED) {
            Some(StateGone::Cleared)
        } else {
            None
        }
    }
}

impl From<RedisStoreError> for FrontierError {
    fn from(e: RedisStoreError) -> Self {
        match e {
            RedisStoreError::StateLost(_) | RedisStoreError::Cleared(_) => {
                FrontierError::StateLost(e.to_string())
            }
            e => FrontierError::Storage(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_state_is_read_back_from_its_error_wherever_it_went() {
        let lost = RedisStoreError::StateLost("kumo:{site}:".into());
        assert!(lost.to_string().contains("crawl \"site\""), "{lost}");
        let text = FrontierError::from(lost).to_string();
        assert_eq!(StateGone::in_message(&text), Some(StateGone::Lost), "{text}");
        let journal = format!("item journal: {}", RedisStoreError::StateLost("kumo:{site}:".into()));
        assert_eq!(StateGone::in_message(&journal), Some(StateGone::Lost));
        let cleared = FrontierError::from(RedisStoreError::Cleared("kumo:{site}:".into())).to_string();
        assert_eq!(StateGone::in_message(&cleared), Some(StateGone::Cleared), "{cleared}");
        let other = FrontierError::from(RedisStoreError::Superseded("worker w".into())).to_string();
        assert_eq!(StateGone::in_message(&other), None, "{other}");
    }
}
