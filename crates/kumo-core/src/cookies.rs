//! Where a crawl's cookies are kept: the [`CookieStorage`] interface (as Colly's storage keeps
//! cookies beside the visited URLs), the form a cookie is stored in, and the in-memory
//! implementation. The durable one lives with the crawl state (kumo-store-embedded); the jar
//! that reads and writes through it lives in the downloader.
//!
//! The interface is synchronous and small: the jar loads every cookie once when the crawl
//! starts, and saves the few a response sets as it arrives.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One cookie as a jar keeps it (RFC 6265 §5.3). A cookie is identified by its domain, path
/// and name: saving another with the same three replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCookie {
    /// The host that set it (when `host_only`) or its `Domain` attribute.
    pub domain: String,
    /// Sent only to `domain` itself (it had no `Domain` attribute), not to its subdomains.
    pub host_only: bool,
    /// The path it is sent for, with the paths below it (RFC 6265 §5.1.4 path-match).
    pub path: String,
    /// Its name: with `domain` and `path`, what identifies it.
    pub name: String,
    /// Its value, as the server set it.
    pub value: String,
    /// Sent over secure connections only (the `Secure` attribute).
    pub secure: bool,
    /// Hidden from page scripts, still sent with requests (the `HttpOnly` attribute).
    pub http_only: bool,
    /// When it expires, in Unix seconds; `None` for a session cookie. A crawl is one session,
    /// resumes included, so session cookies are kept until the crawl's state is discarded.
    pub expires: Option<i64>,
}

impl StoredCookie {
    /// Whether it has expired at `now` (a session cookie never has).
    pub fn is_expired_at(&self, now: SystemTime) -> bool {
        let now = match now.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
        };
        self.expires.is_some_and(|at| at <= now)
    }

    /// `(domain, path, name)`: what identifies it.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.domain, &self.path, &self.name)
    }
}

/// Why cookies could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum CookieStorageError {
    /// The storage itself failed (a database or disk error).
    #[error("cookie storage: {0}")]
    Storage(String),
    /// A stored cookie cannot be read back.
    #[error("cookie storage: the cookie stored as {key:?} is unreadable: {message}")]
    Corrupt {
        /// The key it is stored under.
        key: String,
        /// Why it cannot be read.
        message: String,
    },
}

/// Keeps a crawl's cookies. Implementations must be cheap to call from the download path:
/// `save` runs when a response sets cookies, which is rare next to the fetches.
pub trait CookieStorage: Send + Sync {
    /// Every cookie kept. Expired ones may be among them: the caller drops them (and saves
    /// them back, which removes them).
    fn load(&self) -> Result<Vec<StoredCookie>, CookieStorageError>;

    /// Keeps `cookies`, each replacing the stored one with the same domain, path and name.
    /// A cookie that has expired removes the stored one instead (that is how a server deletes
    /// a cookie).
    fn save(&self, cookies: &[StoredCookie]) -> Result<(), CookieStorageError>;
}

/// Cookies in memory: gone with the process (`kumo crawl --memory`, tests).
#[derive(Debug, Default)]
pub struct MemoryCookieStorage {
    cookies: Mutex<BTreeMap<(String, String, String), StoredCookie>>,
}

impl MemoryCookieStorage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }
}

impl CookieStorage for MemoryCookieStorage {
    fn load(&self) -> Result<Vec<StoredCookie>, CookieStorageError> {
        Ok(self.cookies.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect())
    }

    fn save(&self, cookies: &[StoredCookie]) -> Result<(), CookieStorageError> {
        let now = SystemTime::now();
        let mut map = self.cookies.lock().unwrap_or_else(|p| p.into_inner());
        for c in cookies {
            let key = (c.domain.clone(), c.path.clone(), c.name.clone());
            if c.is_expired_at(now) {
                map.remove(&key);
            } else {
                map.insert(key, c.clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn cookie(name: &str, value: &str, expires: Option<i64>) -> StoredCookie {
        StoredCookie {
            domain: "a.test".into(),
            host_only: true,
            path: "/".into(),
            name: name.into(),
            value: value.into(),
            secure: false,
            http_only: false,
            expires,
        }
    }

    #[test]
    fn expiry_is_in_unix_seconds_and_session_cookies_never_expire() {
        let at = UNIX_EPOCH + Duration::from_secs(1_000);
        assert!(cookie("a", "1", Some(1_000)).is_expired_at(at));
        assert!(!cookie("a", "1", Some(1_001)).is_expired_at(at));
        assert!(cookie("a", "1", Some(-5)).is_expired_at(UNIX_EPOCH));
        assert!(!cookie("a", "1", None).is_expired_at(at + Duration::from_secs(1 << 40)));
    }

    #[test]
    fn memory_storage_replaces_by_key_and_an_expired_cookie_removes() {
        let s = MemoryCookieStorage::new();
        s.save(&[cookie("sid", "1", None), cookie("pref", "x", Some(i64::MAX))]).unwrap();
        s.save(&[cookie("sid", "2", None)]).unwrap();
        let mut got = s.load().unwrap();
        got.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(got, [cookie("pref", "x", Some(i64::MAX)), cookie("sid", "2", None)]);
        s.save(&[cookie("pref", "", Some(0))]).unwrap();
        assert_eq!(s.load().unwrap(), [cookie("sid", "2", None)], "deleted by an expired one");
    }
}
