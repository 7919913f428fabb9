//! What a crawl keeps of its DNS answers: the kinds of failed lookup ([`DnsErrorKind`]), an
//! answer as it is stored ([`StoredAnswer`]), and where answers are kept ([`AnswerStorage`]).
//! The resolver that asks and caches lives in the downloader; the durable storage with the
//! crawl state (kumo-store-embedded), so that a resumed crawl does not ask again for the names
//! an earlier run of it resolved, while their answers stand.

use std::fmt;
use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// What went wrong with a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    pub fn words(self) -> &'static str {
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

/// What a lookup of a name found: its addresses (IPv4 first), or why it has none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoredOutcome {
    /// The name's addresses, IPv4 first.
    Addresses(Vec<IpAddr>),
    /// The lookup failed.
    Failed {
        /// How it failed.
        kind: DnsErrorKind,
        /// The resolver's message.
        detail: String,
    },
}

/// One name's answer as the storage keeps it; saving another for the same host replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAnswer {
    /// The name as the resolver keys it (lower case, no trailing dot).
    pub host: String,
    /// The addresses found, or why there are none.
    pub outcome: StoredOutcome,
    /// Until when the answer stands (its TTL within the resolver's bounds), in Unix
    /// milliseconds: wall-clock time, so that it means the same to the next run.
    pub expires_ms: u64,
}

impl StoredAnswer {
    /// Whether it no longer stands at `now`.
    pub fn is_expired_at(&self, now: SystemTime) -> bool {
        self.expires_ms <= unix_ms(now)
    }
}

/// `t` in Unix milliseconds (0 before the epoch, saturating far after it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Why answers could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
#[error("DNS answer storage: {0}")]
pub struct AnswerStorageError(pub String);

/// Keeps a crawl's DNS answers. As [`crate::CookieStorage`], it is synchronous and small: the
/// resolver loads every answer once when the crawl starts, and saves each new answer as it
/// comes (one per name and TTL, rare next to the fetches).
pub trait AnswerStorage: Send + Sync {
    /// Every answer kept. Expired or unreadable ones may be left out or among them: the
    /// caller drops what has expired.
    fn load(&self) -> Result<Vec<StoredAnswer>, AnswerStorageError>;

    /// Keeps `answers`, each replacing the one stored for its host.
    fn save(&self, answers: &[StoredAnswer]) -> Result<(), AnswerStorageError>;
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_answer_expires_at_its_wall_clock_time() {
        let now = SystemTime::now();
        let answer = StoredAnswer {
            host: "a.test".into(),
            outcome: StoredOutcome::Addresses(vec!["127.0.0.2".parse().unwrap()]),
            expires_ms: unix_ms(now + Duration::from_secs(60)),
        };
        assert!(!answer.is_expired_at(now));
        assert!(answer.is_expired_at(now + Duration::from_secs(61)));
        let json = serde_json::to_string(&answer).unwrap();
        assert_eq!(serde_json::from_str::<StoredAnswer>(&json).unwrap(), answer);
    }
}
