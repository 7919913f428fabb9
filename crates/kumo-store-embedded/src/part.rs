//! A part of the `state` keyspace: the store's small kinds of state (meta, queue, hosts,
//! failures, pipeline) share one keyspace, each under a one-byte tag in front of its keys.
//!
//! Why one keyspace: fjall fsyncs about 19 times to create a keyspace, so a new state with a
//! keyspace per kind paid about 95 fsyncs for five small ones; on a disk another process
//! writes to, each takes milliseconds. The seen set keeps its own keyspace: it is insert-only
//! and by far the largest, and the queue's churn would otherwise be compacted with it.

use fjall::{Iter, Keyspace, OwnedWriteBatch, Slice};

/// The tags of the parts (a state's format: never reuse one for something else).
pub(crate) mod tag {
    pub const META: u8 = b'm';
    pub const QUEUE: u8 = b'q';
    pub const HOSTS: u8 = b'h';
    pub const FAILURES: u8 = b'f';
    pub const PIPELINE: u8 = b'p';
    /// Fetched pages with their validators, by URL, for `--recrawl`.
    pub const PAGES: u8 = b'g';
}

/// One kind of state inside a shared keyspace: keys go in with the tag, come out without.
pub(crate) struct Part {
    ks: Keyspace,
    tag: u8,
}

impl Part {
    pub fn new(ks: &Keyspace, tag: u8) -> Self {
        Part { ks: ks.clone(), tag }
    }

    fn key(&self, k: &[u8]) -> Vec<u8> {
        let mut full = Vec::with_capacity(k.len() + 1);
        full.push(self.tag);
        full.extend_from_slice(k);
        full
    }

    pub fn get(&self, k: impl AsRef<[u8]>) -> fjall::Result<Option<Slice>> {
        self.ks.get(self.key(k.as_ref()))
    }

    pub fn insert(&self, b: &mut OwnedWriteBatch, k: impl AsRef<[u8]>, v: impl Into<Slice>) {
        b.insert(&self.ks, self.key(k.as_ref()), v);
    }

    pub fn remove(&self, b: &mut OwnedWriteBatch, k: impl AsRef<[u8]>) {
        b.remove(&self.ks, self.key(k.as_ref()));
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> Entries {
        self.prefix([])
    }

    /// The entries whose key starts with `p`, in key order.
    pub fn prefix(&self, p: impl AsRef<[u8]>) -> Entries {
        Entries(self.ks.prefix(self.key(p.as_ref())))
    }

    /// The entries from `from` to `to`, both included, in key order.
    pub fn range(&self, from: &[u8], to: &[u8]) -> Entries {
        Entries(self.ks.range(self.key(from)..=self.key(to)))
    }
}

/// A part's entries as `(key without the tag, value)`.
pub(crate) struct Entries(Iter);

fn untagged(kv: fjall::Guard) -> fjall::Result<(Slice, Slice)> {
    let (k, v) = kv.into_inner()?;
    Ok((Slice::from(&k[1..]), v))
}

impl Iterator for Entries {
    type Item = fjall::Result<(Slice, Slice)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(untagged)
    }
}

impl DoubleEndedIterator for Entries {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(untagged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_one_keyspace_never_see_each_other() {
        let t = tempfile::tempdir().unwrap();
        let db = fjall::Database::builder(t.path()).open().unwrap();
        let ks = db.keyspace("state", fjall::KeyspaceCreateOptions::default).unwrap();
        let (a, b) = (Part::new(&ks, b'a'), Part::new(&ks, b'b'));
        let mut batch = db.batch();
        for (part, n) in [(&a, 3u8), (&b, 2)] {
            for i in 0..n {
                part.insert(&mut batch, [i], vec![part.tag, i]);
            }
        }
        batch.commit().unwrap();
        let keys = |e: Entries| e.map(|kv| kv.unwrap().0.to_vec()).collect::<Vec<_>>();
        assert_eq!(keys(a.iter()), [[0], [1], [2]]);
        assert_eq!(keys(b.iter()), [[0], [1]]);
        assert_eq!(keys(a.range(&[1], &[2])), [[1], [2]]);
        assert_eq!(keys(b.prefix([1])), [[1]]);
        assert_eq!(a.iter().next_back().unwrap().unwrap().1.to_vec(), [b'a', 2]);
        assert_eq!(b.get([1]).unwrap().unwrap().to_vec(), [b'b', 1]);
        assert!(b.get([2]).unwrap().is_none(), "a's key 2 is not b's");
        let mut batch = db.batch();
        a.remove(&mut batch, [0]);
        batch.commit().unwrap();
        assert_eq!(keys(a.iter()), [[1], [2]]);
        assert_eq!(keys(b.iter()), [[0], [1]]);
    }
}
