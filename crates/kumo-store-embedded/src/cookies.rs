//! The crawl's cookies in the state directory, so a resumed crawl sends what the sites set
//! before the stop. They live in the `meta` keyspace under `cookie/` (a new keyspace would
//! make older state directories refuse to open): key `cookie/DOMAIN\0PATH\0NAME`, value the
//! [`StoredCookie`] as JSON. Each save is one write batch.

use kumo_core::{CookieStorage, CookieStorageError, StoredCookie};

use crate::EmbeddedStore;

const PREFIX: &[u8] = b"cookie/";

/// `cookie/DOMAIN\0PATH\0NAME`: NUL appears in no domain, path or cookie name.
fn key(c: &StoredCookie) -> Vec<u8> {
    let mut k = Vec::with_capacity(PREFIX.len() + c.domain.len() + c.path.len() + c.name.len() + 2);
    k.extend_from_slice(PREFIX);
    for (i, part) in [&c.domain, &c.path, &c.name].into_iter().enumerate() {
        if i > 0 {
            k.push(0);
        }
        k.extend_from_slice(part.as_bytes());
    }
    k
}

fn storage(e: impl std::fmt::Display) -> CookieStorageError {
    CookieStorageError::Storage(e.to_string())
}

impl CookieStorage for EmbeddedStore {
    fn load(&self) -> Result<Vec<StoredCookie>, CookieStorageError> {
        let mut out = Vec::new();
        for kv in self.sp.meta.prefix(PREFIX) {
            let (k, v) = kv.map_err(storage)?;
            let cookie = serde_json::from_slice(&v).map_err(|e| CookieStorageError::Corrupt {
                key: String::from_utf8_lossy(&k).replace('\0', "|"),
                message: e.to_string(),
            })?;
            out.push(cookie);
        }
        Ok(out)
    }

    fn save(&self, cookies: &[StoredCookie]) -> Result<(), CookieStorageError> {
        let now = std::time::SystemTime::now();
        let mut b = self.batch();
        for c in cookies {
            if c.is_expired_at(now) {
                self.sp.meta.remove(&mut b, key(c));
            } else {
                self.sp.meta.insert(&mut b, key(c), serde_json::to_vec(c).map_err(storage)?);
            }
        }
        self.halt.commit(b, &self.dir).map_err(storage)
    }
}
