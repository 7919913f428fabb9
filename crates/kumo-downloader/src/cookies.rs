//! The crawl's cookie jar: RFC 6265 matching by the `cookie_store` crate (what reqwest's own
//! jar uses), loaded from a [`CookieStorage`] when the crawl starts and written through to it
//! whenever a response sets or deletes a cookie. Every downloader of a crawl shares one jar,
//! so a cookie set through one proxy is sent through the others too.
//!
//! Loading drops expired cookies (and removes them from the storage); session cookies are
//! kept, since a crawl, resumed or not, is one session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use cookie::time::OffsetDateTime;
use cookie_store::{Cookie, CookieDomain, CookieExpiration, CookieStore, RawCookie};
use http::HeaderValue;
use kumo_core::{CookieStorage, CookieStorageError, MemoryCookieStorage, StoredCookie};
use url::Url;

/// A cookie jar over a [`CookieStorage`], for [`DownloaderConfig::cookie_jar`](crate::DownloaderConfig).
pub struct CookieJar {
    store: RwLock<CookieStore>,
    storage: Arc<dyn CookieStorage>,
    /// Saves the storage refused (the cookies stay in the jar for this run).
    save_errors: AtomicU64,
}

impl std::fmt::Debug for CookieJar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CookieJar").field("save_errors", &self.save_errors()).finish_non_exhaustive()
    }
}

impl CookieJar {
    /// A jar holding what `storage` kept, less the expired cookies (which are removed from it).
    pub fn open(storage: Arc<dyn CookieStorage>) -> Result<Self, CookieStorageError> {
        let mut store = CookieStore::default();
        let now = SystemTime::now();
        let mut expired = Vec::new();
        for c in storage.load()? {
            if c.is_expired_at(now) {
                expired.push(c);
            } else if let Some((cookie, url)) = restore(&c) {
                // Refused only if the stored form is inconsistent; such a cookie is dropped.
                let _ = store.insert(cookie, &url);
            }
        }
        if !expired.is_empty() {
            storage.save(&expired)?;
        }
        Ok(CookieJar { store: RwLock::new(store), storage, save_errors: AtomicU64::new(0) })
    }

    /// An empty jar kept in memory only.
    pub fn in_memory() -> Self {
        CookieJar {
            store: RwLock::new(CookieStore::default()),
            storage: Arc::new(MemoryCookieStorage::new()),
            save_errors: AtomicU64::new(0),
        }
    }

    /// Every unexpired cookie in the jar.
    pub fn snapshot(&self) -> Vec<StoredCookie> {
        self.read().iter_unexpired().map(stored).collect()
    }

    /// How many times the storage failed to save a response's cookies.
    pub fn save_errors(&self) -> u64 {
        self.save_errors.load(Ordering::Relaxed)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CookieStore> {
        // Every write leaves the store consistent before it can panic.
        self.store.read().unwrap_or_else(|p| p.into_inner())
    }
}

impl CookieJar {
    /// The `name=value` pairs the jar sends to `url` (what a browser given the crawl's
    /// cookies sends too).
    pub fn request_values(&self, url: &Url) -> Vec<(String, String)> {
        self.read().get_request_values(url).map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    /// Takes `Set-Cookie` values as if `url` had answered with them (the cookies a browser
    /// ended a page with), saved as any other.
    pub fn set_from(&self, url: &Url, set_cookies: &[String]) {
        let values: Vec<HeaderValue> =
            set_cookies.iter().filter_map(|c| HeaderValue::from_str(c).ok()).collect();
        reqwest::cookie::CookieStore::set_cookies(self, &mut values.iter(), url);
    }
}

impl reqwest::cookie::CookieStore for CookieJar {
    fn set_cookies(&self, cookie_headers: &mut dyn Iterator<Item = &HeaderValue>, url: &Url) {
        let mut changed = Vec::new();
        {
            let mut store = self.store.write().unwrap_or_else(|p| p.into_inner());
            for header in cookie_headers {
                let Ok(text) = std::str::from_utf8(header.as_bytes()) else { continue };
                let Ok(raw) = RawCookie::parse(text) else { continue };
                let Ok(cookie) = Cookie::try_from_raw_cookie(&raw, url) else { continue };
                let cookie = cookie.into_owned();
                let kept = stored(&cookie);
                // Inserted, replaced, or (an expired one) deleted an existing cookie: save it.
                if store.insert(cookie, url).is_ok() {
                    changed.push(kept);
                }
            }
        }
        if !changed.is_empty() && self.storage.save(&changed).is_err() {
            self.save_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn cookies(&self, url: &Url) -> Option<HeaderValue> {
        let header = self
            .read()
            .get_request_values(url)
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        if header.is_empty() { None } else { HeaderValue::from_str(&header).ok() }
    }
}

/// A jar cookie as storage keeps it.
fn stored(c: &Cookie<'_>) -> StoredCookie {
    StoredCookie {
        domain: String::from(&c.domain),
        host_only: matches!(c.domain, CookieDomain::HostOnly(_)),
        path: String::from(&c.path),
        name: c.name().to_string(),
        value: c.value().to_string(),
        secure: c.secure().unwrap_or(false),
        http_only: c.http_only().unwrap_or(false),
        expires: match &c.expires {
            CookieExpiration::AtUtc(t) => Some(t.unix_timestamp()),
            CookieExpiration::SessionEnd => None,
        },
    }
}

/// A stored cookie back as a jar cookie, with a URL it may be inserted for.
fn restore(c: &StoredCookie) -> Option<(Cookie<'static>, Url)> {
    let scheme = if c.secure { "https" } else { "http" };
    let url = Url::parse(&format!("{scheme}://{}{}", c.domain, c.path)).ok()?;
    let mut raw = RawCookie::build((c.name.clone(), c.value.clone()))
        .path(c.path.clone())
        .secure(c.secure)
        .http_only(c.http_only);
    if !c.host_only {
        raw = raw.domain(c.domain.clone());
    }
    let mut cookie = Cookie::try_from_raw_cookie(&raw.build(), &url).ok()?.into_owned();
    cookie.expires = match c.expires {
        Some(at) => CookieExpiration::from(OffsetDateTime::from_unix_timestamp(at).ok()?),
        None => CookieExpiration::SessionEnd,
    };
    Some((cookie, url))
}

#[cfg(test)]
mod tests {
    use reqwest::cookie::CookieStore as _;

    use super::*;

    fn set(jar: &CookieJar, url: &str, headers: &[&str]) {
        let values: Vec<HeaderValue> = headers.iter().map(|h| HeaderValue::from_str(h).unwrap()).collect();
        jar.set_cookies(&mut values.iter(), &Url::parse(url).unwrap());
    }

    /// The `Cookie` header sent to `url`, its pairs sorted (the jar's order is unspecified).
    fn sent(jar: &CookieJar, url: &str) -> String {
        let header = jar.cookies(&Url::parse(url).unwrap());
        let mut pairs: Vec<String> =
            header.map(|v| v.to_str().unwrap().split("; ").map(str::to_string).collect()).unwrap_or_default();
        pairs.sort();
        pairs.join("; ")
    }

    #[test]
    fn cookies_survive_a_reload_from_storage_with_their_scope() {
        let storage = Arc::new(MemoryCookieStorage::new());
        let jar = CookieJar::open(storage.clone()).unwrap();
        set(
            &jar,
            "http://www.shop.test/cart/view",
            &[
                "sid=abc",
                "wide=1; Domain=shop.test; Path=/",
                "pref=dark; Max-Age=3600; Path=/",
                "tok=s; Secure; HttpOnly; Path=/",
            ],
        );
        let again = CookieJar::open(storage.clone()).unwrap();
        for j in [&jar, &again] {
            assert_eq!(
                sent(j, "http://www.shop.test/cart/x"),
                "pref=dark; sid=abc; wide=1",
                "no secure one on http"
            );
            assert_eq!(
                sent(j, "https://www.shop.test/"),
                "pref=dark; tok=s; wide=1",
                "sid is for /cart only"
            );
            assert_eq!(sent(j, "http://api.shop.test/"), "wide=1", "host-only cookies stay on their host");
        }
        let pref = again.snapshot().into_iter().find(|c| c.name == "pref").unwrap();
        let left = pref.expires.unwrap() - OffsetDateTime::now_utc().unix_timestamp();
        assert!((3590..=3600).contains(&left), "an absolute expiry, not a fresh Max-Age: {left}");
    }

    #[test]
    fn a_server_deleting_a_cookie_deletes_it_from_storage() {
        let storage = Arc::new(MemoryCookieStorage::new());
        let jar = CookieJar::open(storage.clone()).unwrap();
        set(&jar, "http://a.test/", &["keep=1", "gone=1; Max-Age=600"]);
        assert_eq!(storage.load().unwrap().len(), 2);
        set(&jar, "http://a.test/", &["gone=; Max-Age=0"]);
        let left: Vec<String> = storage.load().unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(left, ["keep"]);
        assert_eq!(sent(&jar, "http://a.test/"), "keep=1");
    }

    /// A storage holding fixed cookies, recording what is saved to it.
    struct Fixed {
        cookies: Vec<StoredCookie>,
        saved: std::sync::Mutex<Vec<StoredCookie>>,
    }

    impl CookieStorage for Fixed {
        fn load(&self) -> Result<Vec<StoredCookie>, CookieStorageError> {
            Ok(self.cookies.clone())
        }

        fn save(&self, cookies: &[StoredCookie]) -> Result<(), CookieStorageError> {
            self.saved.lock().unwrap().extend_from_slice(cookies);
            Ok(())
        }
    }

    #[test]
    fn on_load_expired_cookies_are_dropped_and_deleted_session_cookies_kept() {
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let cookie = |name: &str, expires| StoredCookie {
            domain: "a.test".into(),
            host_only: true,
            path: "/".into(),
            name: name.into(),
            value: "1".into(),
            secure: false,
            http_only: false,
            expires,
        };
        let old = cookie("old", Some(now - 10));
        let storage = Arc::new(Fixed {
            cookies: vec![cookie("session", None), old.clone(), cookie("later", Some(now + 600))],
            saved: Default::default(),
        });
        let jar = CookieJar::open(storage.clone()).unwrap();
        assert_eq!(sent(&jar, "http://a.test/"), "later=1; session=1");
        assert_eq!(*storage.saved.lock().unwrap(), [old], "the expired cookie saved back, which deletes it");
    }
}
