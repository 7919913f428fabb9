//! The seen set: which fingerprints were already queued.
//!
//! [`MemorySeenSet`] is exact and small: it keeps the high 64 bits of each fingerprint in
//! sorted buckets (split as they fill) with vectors grown by an eighth at a time, so it costs
//! about 9–10 bytes per URL where a hash set costs 17–34. The 64-bit key gives a collision
//! chance of about 3·10⁻⁶ at 10⁷ URLs; larger crawls belong on a persistent backend that keeps
//! all 128 bits.

use std::sync::Mutex;

use async_trait::async_trait;
use kumo_core::Fingerprint;

use crate::FrontierError;

/// A set of fingerprints. Backends: memory (here), embedded, Redis.
#[async_trait]
pub trait SeenSet: Send + Sync {
    /// Inserts each fingerprint; the result says, per fingerprint, whether it was new.
    /// A fingerprint repeated within one call is new only at its first position.
    async fn insert_many(&self, fps: &[Fingerprint]) -> Result<Vec<bool>, FrontierError>;

    async fn contains(&self, fp: Fingerprint) -> Result<bool, FrontierError>;

    async fn len(&self) -> Result<usize, FrontierError>;

    async fn is_empty(&self) -> Result<bool, FrontierError> {
        Ok(self.len().await? == 0)
    }
}

/// Average bucket length that triggers a split (doubling the bucket count).
const SPLIT_AT: usize = 128;

/// The exact in-memory seen set.
#[derive(Debug, Default)]
pub struct MemorySeenSet {
    inner: Mutex<Buckets>,
}

#[derive(Debug)]
struct Buckets {
    /// How many high bits choose the bucket.
    bits: u32,
    buckets: Vec<Vec<u64>>,
    len: usize,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets { bits: 0, buckets: vec![Vec::new()], len: 0 }
    }
}

impl Buckets {
    fn index(&self, key: u64) -> usize {
        if self.bits == 0 { 0 } else { (key >> (64 - self.bits)) as usize }
    }

    fn insert(&mut self, key: u64) -> bool {
        let i = self.index(key);
        let v = &mut self.buckets[i];
        match v.binary_search(&key) {
            Ok(_) => false,
            Err(pos) => {
                if v.len() == v.capacity() {
                    v.reserve_exact((v.len() / 8).max(4));
                }
                v.insert(pos, key);
                self.len += 1;
                if self.len > self.buckets.len() * SPLIT_AT && self.bits < 32 {
                    self.split();
                }
                true
            }
        }
    }

    fn contains(&self, key: u64) -> bool {
        self.buckets[self.index(key)].binary_search(&key).is_ok()
    }

    /// Doubles the bucket count. Each bucket's keys share their high `bits` bits and are
    /// sorted, so the next bit splits it at one partition point.
    fn split(&mut self) {
        let next_bit = 63 - self.bits;
        let mut out = Vec::with_capacity(self.buckets.len() * 2);
        for v in self.buckets.drain(..) {
            let p = v.partition_point(|k| (k >> next_bit) & 1 == 0);
            out.push(v[..p].to_vec());
            out.push(v[p..].to_vec());
        }
        self.buckets = out;
        self.bits += 1;
    }

    fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Vec<u64>>()
            + self.buckets.iter().map(|v| v.capacity() * 8).sum::<usize>()
    }
}

impl MemorySeenSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Heap bytes held, for the bytes-per-URL figure.
    pub fn heap_bytes(&self) -> usize {
        self.lock().heap_bytes()
    }

    /// Synchronous insert for callers that already hold no lock (the memory frontier).
    pub fn insert_sync(&self, fps: &[Fingerprint]) -> Vec<bool> {
        let mut b = self.lock();
        fps.iter().map(|fp| b.insert(fp.high64())).collect()
    }

    pub fn len_sync(&self) -> usize {
        self.lock().len
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        // A panic while holding the lock cannot leave the buckets half-updated in a way that
        // breaks lookups (insert is a single Vec::insert), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SeenSet for MemorySeenSet {
    async fn insert_many(&self, fps: &[Fingerprint]) -> Result<Vec<bool>, FrontierError> {
        Ok(self.insert_sync(fps))
    }

    async fn contains(&self, fp: Fingerprint) -> Result<bool, FrontierError> {
        Ok(self.lock().contains(fp.high64()))
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
        assert!(b.bits > 0, "buckets split as the set grew");
        for v in &b.buckets {
            assert!(v.windows(2).all(|w| w[0] < w[1]), "buckets stay sorted");
        }
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
