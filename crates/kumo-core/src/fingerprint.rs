//! Request fingerprints: 128-bit xxh3 of method + canonical URL + body.
//!
//! 128 bits because a 64-bit hash has a ≈2.7 % chance of at least one collision at 10⁹ URLs,
//! and a collision silently drops a page. Backends that keep fewer bits say so.

use std::fmt;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

/// Spiderman's two de-duplication modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DedupMode {
    /// A URL (with method and body) is fetched once per crawl.
    #[default]
    Strict,
    /// The same URL found from a different source page counts as new.
    NonStrict,
}

/// The identity of a request for de-duplication.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Fingerprint(pub u128);

impl Fingerprint {
    /// Hashes the parts of a request that make it the same request.
    pub fn compute(method: &str, canonical_url: &str, body: &[u8], source: Option<&str>) -> Self {
        let mut h = Xxh3::new();
        h.update(method.as_bytes());
        h.update(&[0]);
        h.update(canonical_url.as_bytes());
        h.update(&[0]);
        h.update(body);
        if let Some(src) = source {
            h.update(&[0]);
            h.update(src.as_bytes());
        }
        Fingerprint(h.digest128())
    }

    /// The 16 bytes, big-endian, as a storage key.
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// The fingerprint whose [`to_bytes`](Self::to_bytes) are `b`.
    pub fn from_bytes(b: [u8; 16]) -> Self {
        Fingerprint(u128::from_be_bytes(b))
    }

    /// The high 64 bits, for backends that keep 64-bit keys.
    pub fn high64(self) -> u64 {
        (self.0 >> 64) as u64
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({:032x})", self.0)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_url_body_and_source_all_count() {
        let a = Fingerprint::compute("GET", "http://h/", b"", None);
        assert_eq!(a, Fingerprint::compute("GET", "http://h/", b"", None));
        assert_ne!(a, Fingerprint::compute("POST", "http://h/", b"", None));
        assert_ne!(a, Fingerprint::compute("GET", "http://h/x", b"", None));
        assert_ne!(a, Fingerprint::compute("GET", "http://h/", b"x", None));
        assert_ne!(a, Fingerprint::compute("GET", "http://h/", b"", Some("http://s/")));
    }

    #[test]
    fn separators_prevent_ambiguous_concatenation() {
        let a = Fingerprint::compute("GET", "http://h/a", b"b", None);
        let b = Fingerprint::compute("GET", "http://h/ab", b"", None);
        assert_ne!(a, b);
    }

    #[test]
    fn bytes_round_trip() {
        let a = Fingerprint::compute("GET", "http://h/", b"", None);
        assert_eq!(Fingerprint::from_bytes(a.to_bytes()), a);
        assert_eq!(a.to_string().len(), 32);
    }
}
