//! [`Packed`]: the sorted, chunked key storage behind both seen sets, for keys whose top 16
//! bits choose one of 2¹⁶ buckets and whose other bits are stored in `W` big-endian bytes
//! (14 for [`ExactSeenSet`](crate::ExactSeenSet)'s 128-bit keys, 6 for
//! [`MemorySeenSet`](crate::MemorySeenSet)'s 64-bit ones; byte order is numeric order).
//!
//! The bytes that matter are resident ones under the `kumo` binary's allocator, mimalloc: the
//! `seen` bench measures them at 10⁷ URLs beside the bytes counted here, and the two agree.
//! What an allocator adds is charged for blocks that change size. The first design, ~65 000
//! per-bucket vectors grown in place, held 22.9 bytes per URL resident for 15 counted: size
//! classes round each vector up, by up to a quarter, and pages of smaller classes stay
//! part-empty as buckets outgrow them. Exact per-bucket boxes rebuilt on each change still held
//! 20.4, and 1–2 MiB segments about 17, their freed blocks waiting out mimalloc's one-second
//! purge delay. Hence:
//!
//! - All keys form one sorted array, kept in fixed 64 KiB chunks that are only ever added:
//!   nothing is freed or regrown, and only the last chunk has room to spare. A table of
//!   2¹⁶ + 1 offsets says where each bucket starts.
//! - New keys wait in a small hash set ([`Pending`]). When it is full they are merged into the
//!   array in place, from the back, each old key moving up by the number of new keys after it.

const BUCKET_BITS: u32 = 16;
const BUCKETS: usize = 1 << BUCKET_BITS;
const LOW_BITS: u32 = 128 - BUCKET_BITS;

/// The size of a storage chunk: a power of two, so an exact size class of any allocator, and
/// small enough that the spare room in the last one is negligible.
const CHUNK_BYTES: usize = 64 << 10;

fn bucket(x: u128) -> usize {
    (x >> LOW_BITS) as usize
}

/// The bits below the bucket's.
fn low(x: u128) -> u128 {
    x & ((1 << LOW_BITS) - 1)
}

/// The `W` bytes stored for `x`: the big-endian bytes after the bucket's two.
fn key<const W: usize>(x: u128) -> [u8; W] {
    let b = x.to_be_bytes();
    std::array::from_fn(|i| b[i + 2])
}

/// [`low`] back from a stored key. Comparing as an integer is faster than comparing byte
/// slices (~15 % at 10⁷ URLs).
fn load<const W: usize>(k: &[u8; W]) -> u128 {
    let mut b = [0; 16];
    b[2..2 + W].copy_from_slice(k);
    u128::from_be_bytes(b)
}

/// Searches one bucket's sorted keys for `low`. Fingerprints are hashes, so a bucket's keys are
/// spread evenly over its range: the search starts where `low` falls in proportion and gallops
/// out from there: a cache miss or two on a 150-key bucket where a binary search takes about
/// six, which more than doubles lookups at 10⁷ URLs. Keys spread any other way are found all
/// the same, in more steps.
fn find<const W: usize>(keys: &[[u8; W]], low: u128) -> Result<usize, usize> {
    let n = keys.len();
    if n == 0 {
        return Err(0);
    }
    // The top 32 of the low bits, scaled to the bucket.
    let at = ((((low >> (LOW_BITS - 32)) as u64 * n as u64) >> 32) as usize).min(n - 1);
    // Then `keys[lo..hi]` is searched: the keys before `lo` are below `low`, and `hi` is the
    // end or just past a key at or above it.
    let (mut lo, mut hi) = (0, n);
    let mut step = 1;
    if load(&keys[at]) < low {
        lo = at + 1;
        while let Some(k) = keys.get(at + step) {
            if load(k) >= low {
                hi = at + step + 1;
                break;
            }
            lo = at + step + 1;
            step *= 2;
        }
    } else {
        hi = at + 1;
        while let Some(i) = at.checked_sub(step) {
            if load(&keys[i]) < low {
                lo = i + 1;
                break;
            }
            hi = i + 1;
            step *= 2;
        }
    }
    keys[lo..hi].binary_search_by(|k| load(k).cmp(&low)).map(|i| lo + i).map_err(|i| lo + i)
}

/// A set of `u128` keys whose bits below the top `16 + 8·W` are zero, packed into `W` bytes
/// each (see the module docs). Synchronous: callers keep it behind their own lock. Holds up to
/// 2³² − 1 keys (56 GiB of them at `W` = 14).
#[derive(Clone, Default)]
pub(crate) struct Packed<const W: usize> {
    /// The sorted array: key `i` is `chunks[i / C][i % C]`. Each chunk holds `C` keys.
    chunks: Vec<Box<[[u8; W]]>>,
    /// Keys in the array.
    stored: usize,
    /// Bucket `b` is `starts[b]..starts[b + 1]` of the array. Empty until the first insert,
    /// so an unused set holds no heap.
    starts: Box<[u32]>,
    /// Keys not in the array yet.
    pending: Pending,
    /// Keys in the array and pending.
    len: usize,
}

impl<const W: usize> Packed<W> {
    /// Keys per chunk.
    const C: usize = CHUNK_BYTES / W;

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn init(&mut self) {
        if self.starts.is_empty() {
            self.starts = vec![0; BUCKETS + 1].into();
        }
    }

    fn get(&self, i: usize) -> &[u8; W] {
        &self.chunks[i / Self::C][i % Self::C]
    }

    /// Where `low` is, or would go, among keys `lo..hi` of the array (one bucket's).
    fn search(&self, lo: usize, hi: usize, low: u128) -> Result<usize, usize> {
        if lo < hi && lo / Self::C == (hi - 1) / Self::C {
            // Within one chunk, as nearly all buckets are.
            let (c, off) = (lo / Self::C, lo % Self::C);
            let found = find(&self.chunks[c][off..off + (hi - lo)], low);
            return found.map(|i| lo + i).map_err(|i| lo + i);
        }
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match load(self.get(mid)).cmp(&low) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Whether the array holds `x`.
    fn stored(&self, x: u128) -> bool {
        let b = bucket(x);
        match self.starts.get(b..b + 2) {
            Some(&[lo, hi]) => self.search(lo as usize, hi as usize, low(x)).is_ok(),
            _ => false,
        }
    }

    pub(crate) fn contains(&self, x: u128) -> bool {
        self.stored(x) || self.pending.contains(x)
    }

    /// Inserts `x`; true if it was new.
    pub(crate) fn insert(&mut self, x: u128) -> bool {
        self.init();
        if self.stored(x) || !self.pending.insert(x) {
            return false;
        }
        self.len += 1;
        if self.pending.is_full() {
            self.flush();
        }
        true
    }

    /// Adds chunks until the array can hold `n` keys. New chunks are zeroed, which fresh
    /// memory from the system already is, so their pages stay untouched until used.
    fn reserve(&mut self, n: usize) {
        assert!(n <= u32::MAX as usize, "a seen set holds at most 2³² − 1 keys");
        while self.chunks.len() * Self::C < n {
            self.chunks.push(vec![[0; W]; Self::C].into());
        }
    }

    /// Moves keys `from..to` of the array up by `by`, from the back, a piece at a time so that
    /// no piece crosses a chunk boundary at either end.
    fn move_up(&mut self, from: usize, to: usize, by: usize) {
        let c = Self::C;
        let mut end = to;
        while end > from {
            let (src, dst) = (end - 1, end - 1 + by);
            let n = (end - from).min(src % c + 1).min(dst % c + 1);
            let (s, d) = (src / c, dst / c);
            let (so, doff) = (src % c + 1 - n, dst % c + 1 - n);
            if s == d {
                self.chunks[s].copy_within(so..so + n, doff);
            } else {
                let (left, right) = self.chunks.split_at_mut(d);
                right[0][doff..doff + n].copy_from_slice(&left[s][so..so + n]);
            }
            end -= n;
        }
    }

    /// Merges the pending keys into the array, in place.
    fn flush(&mut self) {
        let n = self.stored;
        self.reserve(n + self.pending.len);
        let mut pending = std::mem::take(&mut self.pending);
        let new = pending.sorted();
        // Old keys from `end` on have moved up already; `new[j]` goes after `j` new keys.
        let mut end = n;
        for (j, &x) in new.iter().enumerate().rev() {
            let b = bucket(x);
            let hi = (self.starts[b + 1] as usize).min(end);
            let at = self.search(self.starts[b] as usize, hi, low(x)).unwrap_err();
            self.move_up(at, end, j + 1);
            let i = at + j;
            self.chunks[i / Self::C][i % Self::C] = key(x);
            end = at;
        }
        self.stored = n + new.len();
        // Each bucket now starts later by the new keys of the buckets before it.
        let mut before = 0;
        for (b, start) in self.starts.iter_mut().enumerate() {
            while new.get(before).is_some_and(|&x| bucket(x) < b) {
                before += 1;
            }
            *start += before as u32;
        }
        pending.reset(pending_slots(self.len));
        self.pending = pending;
    }

    /// Bulk load for keys in ascending order (as [`iter`](Self::iter) yields them): each one
    /// sorting after every key in the array is appended to it, without a search. Any other
    /// goes through [`insert`](Self::insert), so any input is correct.
    pub(crate) fn extend_from_sorted(&mut self, xs: impl IntoIterator<Item = u128>) {
        self.init();
        let mut last = self.stored.checked_sub(1).map(|i| self.key_at(i));
        // While appending, buckets after `last`'s start at the end of the array; their offsets
        // are brought up to date before anything else reads them.
        for x in xs {
            if last.is_none_or(|l| l < x) {
                if !self.pending.contains(x) {
                    self.push(last, x);
                    last = Some(x);
                    self.len += 1;
                }
            } else {
                self.seal(last);
                self.insert(x);
                // A flush may have merged pending keys past `last`.
                last = self.stored.checked_sub(1).map(|i| self.key_at(i));
            }
        }
        self.seal(last);
    }

    /// The full key at array index `i`, its bucket found from the offsets.
    fn key_at(&self, i: usize) -> u128 {
        let b = self.starts.partition_point(|&s| s as usize <= i) - 1;
        ((b as u128) << LOW_BITS) | load(self.get(i))
    }

    /// Appends `x`, which sorts after `last`, the array's last key.
    fn push(&mut self, last: Option<u128>, x: u128) {
        let i = self.stored;
        self.reserve(i + 1);
        // Buckets after `last`'s up to `x`'s start here.
        let first_empty = last.map_or(0, |l| bucket(l) + 1);
        self.starts[first_empty..=bucket(x)].iter_mut().for_each(|s| *s = i as u32);
        self.chunks[i / Self::C][i % Self::C] = key(x);
        self.stored = i + 1;
    }

    /// Ends a run of [`push`](Self::push)es: the buckets after `last`'s start at the end.
    fn seal(&mut self, last: Option<u128>) {
        let first_empty = last.map_or(0, |l| bucket(l) + 1);
        let end = self.stored as u32;
        self.starts[first_empty..].iter_mut().for_each(|s| *s = end);
    }

    /// Heap bytes held, tables included, and the last chunk whole with its spare room.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * size_of::<Box<[[u8; W]]>>()
            + self.chunks.len() * Self::C * W
            + size_of_val(&*self.starts)
            + self.pending.heap_bytes()
    }

    /// All keys in ascending order, ready for [`extend_from_sorted`](Self::extend_from_sorted).
    /// Sorts a copy of the pending ones (at most 2 MiB) to merge them in.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        let mut pending: Vec<u128> = self.pending.iter().collect();
        pending.sort_unstable();
        let mut pending = pending.into_iter().peekable();
        let mut stored = self
            .starts
            .windows(2)
            .enumerate()
            .flat_map(move |(b, w)| {
                (w[0] as usize..w[1] as usize).map(move |i| ((b as u128) << LOW_BITS) | load(self.get(i)))
            })
            .peekable();
        std::iter::from_fn(move || match (stored.peek(), pending.peek()) {
            (Some(a), Some(b)) if b < a => pending.next(),
            (Some(_), _) => stored.next(),
            (None, _) => pending.next(),
        })
    }

    /// Checks the layout, for tests: offsets in order and covering the array, every bucket
    /// sorted, no key both pending and stored.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        if self.starts.is_empty() {
            assert_eq!(self.len, 0);
            return;
        }
        assert_eq!(self.starts[0], 0);
        assert_eq!(self.starts[BUCKETS] as usize, self.stored);
        assert!(self.stored <= self.chunks.len() * Self::C);
        assert!(self.chunks.len() * Self::C < self.stored + Self::C, "no chunk to spare");
        for (b, w) in self.starts.windows(2).enumerate() {
            assert!(w[0] <= w[1], "bucket {b} ends after it starts");
            let keys: Vec<u128> = (w[0] as usize..w[1] as usize).map(|i| load(self.get(i))).collect();
            assert!(keys.windows(2).all(|k| k[0] < k[1]), "bucket {b} is sorted");
        }
        assert_eq!(self.stored + self.pending.len, self.len);
        assert!(self.pending.iter().all(|x| !self.stored(x)), "no key both pending and stored");
    }
}

/// Not derived: printing millions of keys is never what a log wants.
impl<const W: usize> std::fmt::Debug for Packed<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packed").field("len", &self.len).field("heap_bytes", &self.heap_bytes()).finish()
    }
}

/// Keys not yet merged into the array: an open-addressing hash set of whole keys (linear
/// probing, at most ¾ full). Its table grows with the set, a 32nd of its length rounded up to
/// a power of two, from [`MIN_SLOTS`] to [`MAX_SLOTS`] (2 MiB): flushes, which move every
/// key in the array, stay rare enough to be cheap (every 98 304 new keys past 4 million),
/// while the table costs at most a byte per URL, and 0.2 at 10⁷.
#[derive(Clone, Default)]
struct Pending {
    /// A power of two long, or empty before the first insert.
    slots: Box<[u128]>,
    /// Whether [`FREE`] itself is a member: as a slot value it means "free", so it is kept apart.
    has_free: bool,
    len: usize,
}

const FREE: u128 = 0;
const MIN_SLOTS: usize = 1 << 8;
const MAX_SLOTS: usize = 1 << 17;

/// The pending table size for a set of `len` keys.
fn pending_slots(len: usize) -> usize {
    (len / 32).next_power_of_two().clamp(MIN_SLOTS, MAX_SLOTS)
}

impl Pending {
    /// Whether the next flush is due: the table is ¾ full.
    fn is_full(&self) -> bool {
        self.len >= self.slots.len() / 4 * 3
    }

    fn heap_bytes(&self) -> usize {
        size_of_val(&*self.slots)
    }

    /// Where `x`'s probe starts: Fibonacci hashing (× 2⁶⁴/φ) spreads even sequential keys
    /// over the top bits.
    fn home(&self, x: u128) -> usize {
        let h = (x as u64 ^ (x >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// The slot holding `x`, or the free slot ending its probe.
    fn find(&self, x: u128) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(x);
        while self.slots[i] != x && self.slots[i] != FREE {
            i = (i + 1) & mask;
        }
        i
    }

    fn contains(&self, x: u128) -> bool {
        match x {
            _ if self.len == 0 => false,
            FREE => self.has_free,
            _ => self.slots[self.find(x)] == x,
        }
    }

    /// Adds `x`; true if it was new. The caller flushes when [`is_full`](Self::is_full), so a
    /// free slot always remains.
    fn insert(&mut self, x: u128) -> bool {
        if self.slots.is_empty() {
            self.slots = vec![FREE; MIN_SLOTS].into();
        }
        let new = if x == FREE {
            !std::mem::replace(&mut self.has_free, true)
        } else {
            let i = self.find(x);
            std::mem::replace(&mut self.slots[i], x) == FREE
        };
        self.len += usize::from(new);
        new
    }

    /// The members, in no order.
    fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        let free = self.has_free.then_some(FREE);
        self.slots.iter().copied().filter(|&x| x != FREE).chain(free)
    }

    /// The members, sorted, for a flush: packed to the front of the table in place, so a flush
    /// allocates nothing here. The set is unusable until [`reset`](Self::reset).
    fn sorted(&mut self) -> &[u128] {
        let mut n = 0;
        for i in 0..self.slots.len() {
            if self.slots[i] != FREE {
                self.slots[n] = self.slots[i];
                n += 1;
            }
        }
        if self.has_free {
            // At most ¾ full, so there is room.
            self.slots[n] = FREE;
            n += 1;
        }
        debug_assert_eq!(n, self.len);
        self.slots[..n].sort_unstable();
        &self.slots[..n]
    }

    /// Empties the set, with a table of `slots` slots.
    fn reset(&mut self, slots: usize) {
        if self.slots.len() == slots {
            self.slots.fill(FREE);
        } else {
            // The old table goes first: the two are never held together.
            self.slots = Box::default();
            self.slots = vec![FREE; slots].into();
        }
        self.has_free = false;
        self.len = 0;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::{BTreeSet, HashSet};

    use kumo_core::Fingerprint;

    use super::*;

    /// Random fingerprints, cheaper than hashing URLs (the size tests make a million).
    pub(crate) fn random_fps(n: usize, seed: u64) -> Vec<Fingerprint> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n).map(|_| Fingerprint(rng.u128(..))).collect()
    }

    #[test]
    fn spans_many_chunks() {
        // 5.6 MB of keys over ~90 chunks, inserted at random (merges move keys across chunk
        // boundaries) and loaded sorted.
        let mut s = Packed::<14>::default();
        let n = 400_000;
        let fps = random_fps(n, 8);
        fps.iter().for_each(|f| _ = s.insert(f.0));
        s.check();
        assert!(s.chunks.len() > 50, "{} chunks", s.chunks.len());

        let mut sorted: Vec<u128> = fps.iter().map(|f| f.0).collect();
        sorted.sort_unstable();
        let mut bulk = Packed::<14>::default();
        sorted.chunks(10_000).for_each(|c| bulk.extend_from_sorted(c.iter().copied()));
        bulk.check();
        assert_eq!((bulk.len(), bulk.pending.len), (n, 0), "all appended");
        assert!(bulk.iter().eq(sorted.iter().copied()));
        assert!(s.iter().eq(sorted.iter().copied()));
        assert!(fps.iter().all(|f| bulk.contains(f.0) && s.contains(f.0)));
    }

    #[test]
    fn bulk_loads_mixed_with_inserts() {
        // Sorted batches that interleave with what is stored and pending, so appends, inserts
        // and the flushes those trigger alternate.
        let mut rng = fastrand::Rng::with_seed(11);
        let mut s = Packed::<14>::default();
        let mut reference = BTreeSet::new();
        for round in 0..60 {
            let top = rng.u128(..);
            let mut batch: Vec<u128> = (0..rng.usize(..3_000)).map(|_| rng.u128(..=top)).collect();
            if round % 3 == 0 {
                batch.extend(reference.iter().step_by(7).copied()); // repeats of stored keys
            }
            batch.sort_unstable();
            s.extend_from_sorted(batch.iter().copied());
            reference.extend(batch);
            for _ in 0..rng.usize(..2_000) {
                let x = rng.u128(..);
                assert_eq!(s.insert(x), reference.insert(x));
            }
            s.check();
            assert_eq!(s.len(), reference.len());
        }
        assert!(s.iter().eq(reference.iter().copied()));
    }

    #[test]
    fn bulk_load_after_a_flush_merges_larger_keys() {
        let mut s = Packed::<14>::default();
        let small = |k: u128| k << 64;
        let large = |k: u128| (1 << 127) | (k << 10);
        // The first pending table is full at 192 keys, all then flushed into the array.
        (1..=192).for_each(|k| _ = s.insert(small(k)));
        assert_eq!((s.stored, s.pending.len), (192, 0));
        (0..10).for_each(|k| _ = s.insert(large(k * 2)));
        // 182 keys below the array's last go through `insert`, the last one flushing the large
        // keys into the array; the batch then continues between them.
        let batch: Vec<u128> =
            (1..=182).map(|k| small(k) + 1).chain((0..10).map(|k| large(k * 2 + 1))).collect();
        s.extend_from_sorted(batch.iter().copied());
        s.check();
        assert_eq!(s.len(), 192 + 10 + batch.len());
        assert!(batch.iter().all(|&x| s.contains(x)));
    }

    #[test]
    fn interpolation_search_finds_any_spread() {
        let mut rng = fastrand::Rng::with_seed(12);
        let spreads: [&dyn Fn(&mut fastrand::Rng) -> u128; 4] = [
            &|r| r.u128(..1 << LOW_BITS),                  // even, as fingerprints are
            &|r| r.u128(..1_000),                          // all at the bottom
            &|r| (1 << LOW_BITS) - 1 - r.u128(..1_000),    // all at the top
            &|r| (r.u128(..4) << 100) | r.u128(..1 << 20), // in clumps
        ];
        for spread in spreads {
            for n in [0, 1, 2, 3, 10, 150, 1_000] {
                let mut lows: Vec<u128> = (0..n).map(|_| spread(&mut rng)).collect();
                lows.sort_unstable();
                lows.dedup();
                let keys: Vec<[u8; 14]> = lows.iter().map(|&l| key(l)).collect();
                let probes = lows.iter().flat_map(|&l| [l, l.saturating_sub(1), l + 1]);
                for low in probes.chain([0, (1 << LOW_BITS) - 1]) {
                    assert_eq!(find(&keys, low), lows.binary_search(&low), "{n} keys, looking for {low:#x}");
                }
            }
        }
    }

    #[test]
    fn flushes_keep_order_and_exactness() {
        let mut rng = fastrand::Rng::with_seed(6);
        // Random fingerprints with repeats, plus 0 (the pending table's free-slot marker),
        // neighbours, and some sharing one bucket or their low 112 bits.
        let mut fps = random_fps(60_000, 7);
        fps.extend((0..100).map(Fingerprint));
        fps.extend((0..100).map(|i| Fingerprint((0xabcd << LOW_BITS) | (i * 0x1_0000_0001))));
        fps.extend((0..100).map(|i| Fingerprint((i << LOW_BITS) | 42)));
        let mut s = Packed::<14>::default();
        let mut reference = HashSet::new();
        let mut flushes = 0;
        for n in 0..150_000 {
            let f = fps[rng.usize(..fps.len())];
            let new = s.insert(f.0);
            assert_eq!(new, reference.insert(f.0));
            flushes += usize::from(new && s.pending.len == 0);
            let probe = fps[rng.usize(..fps.len())];
            let probe = Fingerprint(probe.0 ^ rng.u128(..2));
            assert_eq!(s.contains(probe.0), reference.contains(&probe.0));
            if n % 50_000 == 0 {
                s.check();
                let all: Vec<u128> = s.iter().collect();
                assert!(all.windows(2).all(|w| w[0] < w[1]), "iter is ascending");
                assert_eq!(all.len(), reference.len());
            }
        }
        assert!(flushes > 5, "{flushes} flushes");
        assert_eq!(s.len(), reference.len());
        s.check();
        let mut sorted: Vec<u128> = reference.into_iter().collect();
        sorted.sort_unstable();
        assert!(s.iter().eq(sorted));
    }
}
