//! The seen set: which fingerprints were already queued.
//!
//! [`MemorySeenSet`] is exact on the high 64 bits of each fingerprint and small: it is the
//! [`ExactSeenSet`](crate::ExactSeenSet)'s structure on 64-bit keys, whose top 16 bits choose a
//! bucket and the other 48 are stored in 6 bytes, so it holds about 6.2 bytes per URL where a
//! hash set holds 17–34. The 64-bit key gives a collision chance of about 3·10⁻⁶ at 10⁷ URLs;
//! larger crawls belong on the exact set or a persistent backend that keeps all 128 bits.

use std::sync::Mutex;

use async_trait::async_trait;
use kumo_core::Fingerprint;

use crate::FrontierError;
use crate::packed::Packed;

/// A set of fingerprints. Backends: memory (here), embedded, Redis.
#[async_trait]
pub trait SeenSet: Send + Sync {
    /// Inserts each fingerprint; the result says, per fingerprint, whether it was new.
    /// A fingerprint repeated within one call is new only at its first position.
    async fn insert_many(&self, fps: &[Fingerprint]) -> Result<Vec<bool>, FrontierError>;

    /// Whether `fp` is in the set.
    async fn contains(&self, fp: Fingerprint) -> Result<bool, FrontierError>;

    /// Fingerprints held.
    async fn len(&self) -> Result<usize, FrontierError>;

    /// Which of `fps` the set holds, answered at once (no I/O, no waiting on other work);
    /// `None` when this set cannot answer so cheaply. A hint for skipping work on links a
    /// push would drop, never a replacement for [`SeenSet::insert_many`].
    fn known_now(&self, _fps: &[Fingerprint]) -> Option<Vec<bool>> {
        None
    }

    /// Whether it holds no fingerprint.
    async fn is_empty(&self) -> Result<bool, FrontierError> {
        Ok(self.len().await? == 0)
    }
}

/// The in-memory seen set, exact on 64 bits.
#[derive(Debug, Default)]
pub struct MemorySeenSet {
    inner: Mutex<Packed<6>>,
}

/// The set's key: the high 64 bits, the low 64 cleared.
fn key(fp: Fingerprint) -> u128 {
    u128::from(fp.high64()) << 64
}

impl MemorySeenSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes held, for the bytes-per-URL figure.
    pub fn heap_bytes(&self) -> usize {
        self.lock().heap_bytes()
    }

    /// Synchronous insert for callers that already hold no lock (the memory frontier).
    pub fn insert_sync(&self, fps: &[Fingerprint]) -> Vec<bool> {
        let mut s = self.lock();
        fps.iter().map(|&fp| s.insert(key(fp))).collect()
    }

    /// Keys held: distinct high 64 bits of the fingerprints inserted.
    pub fn len_sync(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Packed<6>> {
        // Poisoning is ignored: an insert panics only at the 2³²-key limit, before changing
        // anything, so the set is never left half-updated.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SeenSet for MemorySeenSet {
    async fn insert_many(&self, fps: &[Fingerprint]) -> Result<Vec<bool>, FrontierError> {
        Ok(self.insert_sync(fps))
    }

    async fn contains(&self, fp: Fingerprint) -> Result<bool, FrontierError> {
        Ok(self.lock().contains(key(fp)))
    }

    fn known_now(&self, fps: &[Fingerprint]) -> Option<Vec<bool>> {
        let s = self.lock();
        Some(fps.iter().map(|&fp| s.contains(key(fp))).collect())
    }

    async fn len(&self) -> Result<usize, FrontierError> {
        Ok(self.len_sync())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn fp(i: u64) -> Fingerprint {
        Fingerprint::compute("GET", &format!("http://h/{i}"), b"", None)
    }

    #[test]
    fn agrees_with_a_hash_set() {
        let s = MemorySeenSet::new();
        let mut reference = HashSet::new();
        for i in 0..20_000u64 {
            let f = fp(i % 15_000);
            assert_eq!(s.insert_sync(&[f])[0], reference.insert(f.high64()));
        }
        assert_eq!(s.len_sync(), 15_000);
        let b = s.lock();
        b.check(); // buckets stay sorted, each in its segment; pending and stored keys disjoint
        let all: HashSet<u64> = b.iter().map(|k| (k >> 64) as u64).collect();
        assert_eq!(all, reference);
    }

    #[test]
    fn flushes_keep_order_and_exactness() {
        let s = MemorySeenSet::new();
        let contains = |k: u64| s.lock().contains(u128::from(k) << 64);
        let mut reference = HashSet::new();
        let mut rng = fastrand::Rng::with_seed(7);
        // Small keys too: 0 marks a free slot in the pending table, and small keys share a
        // bucket. The low 64 bits of a fingerprint are ignored.
        let keys: Vec<u64> = (0..200).chain((0..30_000).map(|_| rng.u64(..))).collect();
        let mut flushes = 0;
        for _ in 0..100_000 {
            let k = keys[rng.usize(..keys.len())];
            let before = s.heap_bytes();
            let new = s.insert_sync(&[Fingerprint((u128::from(k) << 64) | u128::from(rng.u64(..)))])[0];
            assert_eq!(new, reference.insert(k));
            flushes += usize::from(s.heap_bytes() != before);
            let probe = keys[rng.usize(..keys.len())] ^ rng.u64(..2);
            assert_eq!(contains(probe), reference.contains(&probe));
        }
        assert!(flushes > 5, "{flushes} flushes");
        assert_eq!(s.len_sync(), reference.len());
        assert!(reference.iter().all(|&k| contains(k)));
        let b = s.lock();
        b.check();
        let all: Vec<u64> = b.iter().map(|k| (k >> 64) as u64).collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "iter is ascending");
        assert_eq!(all.len(), reference.len());
    }

    #[test]
    fn repeats_within_one_batch_count_once() {
        let s = MemorySeenSet::new();
        assert_eq!(s.insert_sync(&[fp(1), fp(2), fp(1)]), vec![true, true, false]);
    }

    #[test]
    fn at_most_16_bytes_per_url() {
        let s = MemorySeenSet::new();
        let n = 300_000u64;
        let batch: Vec<_> = (0..n).map(fp).collect();
        s.insert_sync(&batch);
        let per_url = s.heap_bytes() as f64 / n as f64;
        assert!(per_url <= 16.0, "{per_url:.1} bytes per URL");
    }
}
