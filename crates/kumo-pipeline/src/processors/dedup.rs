//! De-duplication by a key: the first item with a given key passes, later ones are dropped.

use std::collections::HashSet;
use std::sync::Mutex;

use kumo_core::Item;
use xxhash_rust::xxh3::Xxh3;

use super::{ProcessOutcome, Processor};

/// Drops an item whose key (the values of `fields`) was seen before. The set holds the exact
/// 128-bit hashes of every key seen (16 bytes a key), shared by all threads. An item missing
/// every key field is kept: it has no identity to compare.
pub struct DedupByKey {
    fields: Vec<String>,
    seen: Mutex<HashSet<u128>>,
}

impl DedupByKey {
    pub fn new<S: Into<String>>(fields: impl IntoIterator<Item = S>) -> Self {
        DedupByKey { fields: fields.into_iter().map(Into::into).collect(), seen: Mutex::default() }
    }

    /// Keys seen so far.
    pub fn len(&self) -> usize {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, item: &Item) -> Option<u128> {
        let mut h = Xxh3::new();
        let mut any = false;
        for f in &self.fields {
            // Each value is hashed in its JSON form with a separator, so ("ab","c") and
            // ("a","bc") differ, and so do 1 and "1".
            match item.get(f) {
                Some(v) if !v.is_null() => {
                    any = true;
                    h.update(v.to_string().as_bytes());
                }
                _ => h.update(b"null"),
            }
            h.update(&[0]);
        }
        any.then(|| h.digest128())
    }
}

impl Processor for DedupByKey {
    fn name(&self) -> String {
        format!("dedup({})", self.fields.join(","))
    }

    fn process(&self, item: Item) -> ProcessOutcome {
        let Some(key) = self.key(&item) else {
            return ProcessOutcome::Keep(item);
        };
        if self.seen.lock().unwrap_or_else(|e| e.into_inner()).insert(key) {
            ProcessOutcome::Keep(item)
        } else {
            ProcessOutcome::Drop("duplicate".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_of_each_key() {
        let d = DedupByKey::new(["a", "b"]);
        let keep = |i: Item| matches!(d.process(i), ProcessOutcome::Keep(_));
        assert!(keep(Item::new().with("a", "x").with("b", 1)));
        assert!(!keep(Item::new().with("a", "x").with("b", 1).with("c", 2)));
        assert!(keep(Item::new().with("a", "x").with("b", "1")));
        assert!(keep(Item::new().with("a", "xb").with("b", 1)));
        assert!(keep(Item::new().with("c", 1)));
        assert!(keep(Item::new().with("c", 1)));
        assert_eq!(d.len(), 3);
    }
}
