//! De-duplication by a key: the first item with a given key passes, later ones are dropped.

use std::collections::HashSet;
use std::sync::Mutex;

use kumo_core::Item;
use xxhash_rust::xxh3::Xxh3;

use super::{ProcessOutcome, Processor};

/// Drops an item whose key (the values of `fields`) was seen before. The set holds the exact
/// 128-bit hashes of every key seen (16 bytes a key), shared by all threads. An item missing
/// every key field is kept: it has no identity to compare.
///
/// For checkpoints, [`Processor::take_state`] hands out the keys added since the last call
/// (16 bytes each, big-endian) and [`Processor::restore_state`] puts keys back.
pub struct DedupByKey {
    fields: Vec<String>,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    keys: HashSet<u128>,
    /// Keys added since the last `take_state`, once `tracking`.
    added: Vec<u128>,
    /// Off until the first `take_state` or `restore_state`, so a run that never checkpoints
    /// does not keep every key twice; until then `keys` holds exactly the untaken keys.
    tracking: bool,
}

impl DedupByKey {
    /// De-duplicates on the values of `fields`, taken together.
    pub fn new<S: Into<String>>(fields: impl IntoIterator<Item = S>) -> Self {
        DedupByKey { fields: fields.into_iter().map(Into::into).collect(), seen: Mutex::default() }
    }

    /// Keys seen so far.
    pub fn len(&self) -> usize {
        self.seen().keys.len()
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether no key was seen yet.
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
        let mut seen = self.seen();
        if !seen.keys.insert(key) {
            return ProcessOutcome::Drop("duplicate".into());
        }
        if seen.tracking {
            seen.added.push(key);
        }
        ProcessOutcome::Keep(item)
    }

    fn take_state(&self) -> Vec<Vec<u8>> {
        let mut seen = self.seen();
        let taken = if seen.tracking {
            std::mem::take(&mut seen.added)
        } else {
            seen.tracking = true;
            seen.keys.iter().copied().collect()
        };
        taken.into_iter().map(|k| k.to_be_bytes().to_vec()).collect()
    }

    fn restore_state(&self, entries: &[&[u8]]) {
        let mut seen = self.seen();
        // Restored keys were committed already: they are not handed out again.
        seen.tracking = true;
        // An entry of another length is not one of ours (a changed configuration); skip it.
        let keys = entries.iter().filter_map(|e| <[u8; 16]>::try_from(*e).ok()).map(u128::from_be_bytes);
        seen.keys.extend(keys);
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

    fn keys(state: Vec<Vec<u8>>) -> HashSet<Vec<u8>> {
        state.into_iter().collect()
    }

    #[test]
    fn take_state_hands_out_each_new_key_once() {
        let d = DedupByKey::new(["a"]);
        d.process(Item::new().with("a", 1));
        d.process(Item::new().with("a", 2));
        let first = d.take_state();
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|k| k.len() == 16));
        assert!(d.take_state().is_empty());
        d.process(Item::new().with("a", 2));
        d.process(Item::new().with("a", 3));
        let second = d.take_state();
        assert_eq!(second.len(), 1);
        assert!(!keys(first).contains(&second[0]));
    }

    #[test]
    fn restored_keys_drop_their_items_and_are_not_taken_again() {
        let before = DedupByKey::new(["a"]);
        before.process(Item::new().with("a", "seen"));
        let state = before.take_state();

        let after = DedupByKey::new(["a"]);
        after.restore_state(&state.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert_eq!(after.process(Item::new().with("a", "seen")), ProcessOutcome::Drop("duplicate".into()));
        assert!(matches!(after.process(Item::new().with("a", "new")), ProcessOutcome::Keep(_)));
        let taken = after.take_state();
        assert_eq!(taken.len(), 1);
        assert!(!keys(state).contains(&taken[0]));
    }
}
