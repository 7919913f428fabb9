//! An exact seen set on all 128 bits: no collision can drop a URL, at about 14.2 bytes per URL.
//!
//! The top 16 bits of a fingerprint choose one of 2¹⁶ buckets and only the other 112 are
//! stored, as 14 bytes, in [`Packed`] (whose documentation says why it is laid out as it is).
//! Counted, that is the keys, 256 KiB of offsets and up to 2 MiB of pending table: 14.2 bytes
//! per URL at 10⁷ URLs, 14.7 at 10⁶.

use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use kumo_core::Fingerprint;

use crate::packed::Packed;
use crate::{FrontierError, SeenSet};

/// The exact seen set. Synchronous: callers keep it behind their own lock.
#[derive(Default, Clone)]
pub struct ExactSeenSet {
    set: Packed<14>,
}

impl ExactSeenSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inserts `fp`; true if it was new.
    pub fn insert(&mut self, fp: Fingerprint) -> bool {
        self.set.insert(fp.0)
    }

    /// Bulk load for fingerprints in ascending order (as [`iter`](Self::iter) yields them):
    /// each is appended without a search. One that does not sort after everything in the set
    /// goes through [`insert`](Self::insert), so any input is correct.
    pub fn extend_from_sorted(&mut self, fps: impl IntoIterator<Item = Fingerprint>) {
        self.set.extend_from_sorted(fps.into_iter().map(|f| f.0));
    }

    /// Whether `fp` is in the set.
    pub fn contains(&self, fp: Fingerprint) -> bool {
        self.set.contains(fp.0)
    }

    /// Fingerprints held.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether it holds no fingerprint.
    pub fn is_empty(&self) -> bool {
        self.set.len() == 0
    }

    /// Heap bytes held (tables included), for the bytes-per-URL figure.
    pub fn heap_bytes(&self) -> usize {
        self.set.heap_bytes()
    }

    /// All fingerprints in ascending order, ready for [`extend_from_sorted`](Self::extend_from_sorted).
    pub fn iter(&self) -> impl Iterator<Item = Fingerprint> + '_ {
        self.set.iter().map(Fingerprint)
    }
}

/// Not derived: printing millions of entries is never what a log wants.
impl std::fmt::Debug for ExactSeenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExactSeenSet")
            .field("len", &self.len())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

/// [`ExactSeenSet`] behind a mutex, as a [`SeenSet`] for
/// [`MemoryFrontier::with_seen`](crate::MemoryFrontier::with_seen).
#[derive(Debug, Default)]
pub struct ExactMemorySeenSet {
    inner: Mutex<ExactSeenSet>,
}

impl From<ExactSeenSet> for ExactMemorySeenSet {
    fn from(set: ExactSeenSet) -> Self {
        ExactMemorySeenSet { inner: Mutex::new(set) }
    }
}

impl ExactMemorySeenSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes held (tables included), for the bytes-per-URL figure.
    pub fn heap_bytes(&self) -> usize {
        self.lock().heap_bytes()
    }

    /// Inserts each of `fps`; says, per fingerprint, whether it was new.
    pub fn insert_sync(&self, fps: &[Fingerprint]) -> Vec<bool> {
        let mut s = self.lock();
        fps.iter().map(|&fp| s.insert(fp)).collect()
    }

    /// Fingerprints held.
    pub fn len_sync(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, ExactSeenSet> {
        // Poisoning is ignored: an insert panics only at the 2³²-key limit, before changing
        // anything, so the set is never left half-updated.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SeenSet for ExactMemorySeenSet {
    async fn insert_many(&self, fps: &[Fingerprint]) -> Result<Vec<bool>, FrontierError> {
        Ok(self.insert_sync(fps))
    }

    async fn contains(&self, fp: Fingerprint) -> Result<bool, FrontierError> {
        Ok(self.lock().contains(fp))
    }

    fn known_now(&self, fps: &[Fingerprint]) -> Option<Vec<bool>> {
        let s = self.lock();
        Some(fps.iter().map(|&fp| s.contains(fp)).collect())
    }

    async fn len(&self) -> Result<usize, FrontierError> {
        Ok(self.len_sync())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};
    use std::sync::Arc;

    use super::*;
    use crate::packed::tests::random_fps;
    use crate::{MemoryFrontier, MemoryFrontierConfig, MemorySeenSet, conformance};

    #[test]
    fn agrees_with_a_hash_set() {
        let fps = random_fps(15_000, 1);
        let mut s = ExactSeenSet::new();
        let mut reference = HashSet::new();
        let mut rng = fastrand::Rng::with_seed(2);
        for _ in 0..40_000 {
            let f = fps[rng.usize(..fps.len())];
            assert_eq!(s.contains(f), reference.contains(&f.0));
            assert_eq!(s.insert(f), reference.insert(f.0));
        }
        assert_eq!(s.len(), reference.len());
        for f in random_fps(1_000, 3) {
            assert!(!s.contains(f), "never inserted");
        }
        let all: Vec<u128> = s.iter().map(|f| f.0).collect();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "iter is ascending");
        assert_eq!(all.into_iter().collect::<HashSet<_>>(), reference);
    }

    #[test]
    fn keeps_fingerprints_sharing_the_high_64_bits() {
        let a = Fingerprint(0xdead_beef_0000_0001 << 64 | 1);
        let b = Fingerprint(a.0 ^ 2);
        let c = Fingerprint(a.0 & !(1 << 111)); // the highest stored bit cleared
        let mut s = ExactSeenSet::new();
        assert_eq!([a, b, c, a, b, c].map(|f| s.insert(f)), [true, true, true, false, false, false]);
        assert!(s.contains(a) && s.contains(b) && s.contains(c));
        // The 64-bit set cannot tell them apart; this is why the exact set exists.
        assert_eq!(MemorySeenSet::new().insert_sync(&[a, b]), [true, false]);

        let ends = [Fingerprint(0), Fingerprint(u128::MAX)];
        assert_eq!(ends.map(|f| s.insert(f)), [true, true]);
        assert_eq!(s.iter().collect::<Vec<_>>(), [ends[0], c, a, b, ends[1]]);
    }

    #[test]
    fn bulk_load_equals_individual_inserts() {
        let mut fps = random_fps(20_000, 4);
        fps.extend_from_within(..500); // repeats
        fps.sort();
        let mut one_by_one = ExactSeenSet::new();
        fps.iter().for_each(|&f| _ = one_by_one.insert(f));

        let mut bulk = ExactSeenSet::new();
        bulk.extend_from_sorted(fps.iter().copied());
        assert_eq!(bulk.len(), 20_000);
        assert!(bulk.iter().eq(one_by_one.iter()));

        // Out-of-order input, and loading into a set that already has entries, fall back.
        let mut mixed = ExactSeenSet::new();
        mixed.extend_from_sorted(fps[10_000..].iter().copied());
        mixed.extend_from_sorted(fps[..10_000].iter().rev().copied());
        mixed.extend_from_sorted(random_fps(100, 4));
        assert!(mixed.iter().eq(one_by_one.iter()));
        let reference: BTreeSet<_> = fps.iter().copied().collect();
        assert!(mixed.iter().eq(reference.into_iter()));
    }

    #[test]
    fn at_most_16_bytes_per_url() {
        assert_eq!(ExactSeenSet::new().heap_bytes(), 0, "an unused set holds no heap");
        let n = 1_000_000;
        let mut s = ExactSeenSet::new();
        random_fps(n, 5).into_iter().for_each(|f| _ = s.insert(f));
        assert_eq!(s.len(), n);
        let per_url = s.heap_bytes() as f64 / n as f64;
        assert!(per_url <= 16.0, "{per_url:.2} bytes per URL");
    }

    #[tokio::test]
    async fn serves_the_memory_frontier() {
        let make = || {
            MemoryFrontier::with_seen(MemoryFrontierConfig::default(), Arc::new(ExactMemorySeenSet::new()))
        };
        conformance::dedup_on_push(&make()).await;
        conformance::discoveries_are_seen_checked(&make()).await;

        let s = ExactMemorySeenSet::new();
        let (a, b) = (Fingerprint(1), Fingerprint(2));
        assert_eq!(s.insert_many(&[a, b, a]).await.unwrap(), [true, true, false]);
        assert!(s.contains(b).await.unwrap() && !s.contains(Fingerprint(3)).await.unwrap());
        assert_eq!(s.len().await.unwrap(), 2);
    }
}
