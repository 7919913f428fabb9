//! A host's queue levels, best priority first. Most hosts use one level, so they are a
//! sorted vector, not a map: a `BTreeMap` spends a whole node (room for eleven levels, some
//! 600 bytes) on the first, which over a million hosts is most of a broad crawl's memory.

use std::collections::VecDeque;

use kumo_core::Priority;

use super::Entry;

/// One priority level of a host's queue.
pub(super) struct Level {
    pub(super) buf: VecDeque<Entry>,
    pub(super) spilled: u64,
    /// The highest sequence number buffered or read back so far.
    pub(super) cursor: u64,
}

impl Level {
    fn new() -> Self {
        // No room yet: a host never leased only counts its requests (they stay in storage).
        Level { buf: VecDeque::new(), spilled: 0, cursor: 0 }
    }

    /// Room for `n` entries when the level has none: just that (most hosts of a broad crawl
    /// hold a single queued request, where a first push would make room for four).
    fn make_room(&mut self, n: usize) {
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(n);
        }
    }

    /// Buffers `entry` at the back.
    pub(super) fn push_back(&mut self, entry: Entry) {
        self.make_room(1);
        self.buf.push_back(entry);
    }

    /// Buffers `entry` at the front.
    pub(super) fn push_front(&mut self, entry: Entry) {
        self.make_room(1);
        self.buf.push_front(entry);
    }

    /// Buffers `entries`, read back from storage, at the back.
    pub(super) fn extend(&mut self, entries: Vec<Entry>) {
        self.make_room(entries.len());
        self.buf.extend(entries);
    }
}

/// The levels, highest priority first.
#[derive(Default)]
pub(super) struct Levels(Vec<(Priority, Level)>);

impl Levels {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The best priority queued.
    pub(super) fn best(&self) -> Option<Priority> {
        self.0.first().map(|(p, _)| *p)
    }

    /// The best level, with its priority.
    pub(super) fn first_mut(&mut self) -> Option<(Priority, &mut Level)> {
        self.0.first_mut().map(|(p, l)| (*p, l))
    }

    /// Drops the best level (emptied).
    pub(super) fn remove_first(&mut self) {
        if !self.0.is_empty() {
            self.0.remove(0);
        }
        if self.0.is_empty() {
            // A host that had many levels gives their room back once it has none.
            self.0 = Vec::new();
        }
    }

    /// The level of `priority`, made if missing.
    pub(super) fn level(&mut self, priority: Priority) -> &mut Level {
        let at = match self.0.binary_search_by(|(p, _)| priority.cmp(p)) {
            Ok(at) => at,
            Err(at) => {
                if self.0.capacity() == 0 {
                    self.0.reserve_exact(1);
                }
                self.0.insert(at, (priority, Level::new()));
                at
            }
        };
        &mut self.0[at].1
    }

    /// The levels, best first.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Priority, &Level)> {
        self.0.iter().map(|(p, l)| (*p, l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_stay_best_first_and_go_when_emptied() {
        let mut levels = Levels::default();
        for p in [0, 5, -3, 5, 2] {
            levels.level(p).spilled += 1;
        }
        let order: Vec<_> = levels.iter().map(|(p, l)| (p, l.spilled)).collect();
        assert_eq!(order, [(5, 2), (2, 1), (0, 1), (-3, 1)]);
        assert_eq!(levels.best(), Some(5));
        levels.remove_first();
        assert_eq!(levels.best(), Some(2));
        for _ in 0..3 {
            levels.remove_first();
        }
        assert!(levels.is_empty() && levels.0.capacity() == 0);
    }

    /// A level that only counts its requests (a host never leased) holds no room for them; a
    /// buffered one holds room for what it buffers, not for four.
    #[test]
    fn a_level_makes_room_only_for_what_it_buffers() {
        let mut levels = Levels::default();
        levels.level(0).spilled += 1;
        assert_eq!(levels.level(0).buf.capacity(), 0);
        let r = kumo_core::Request::get(kumo_core::Url::parse("http://a.test/").unwrap());
        levels.level(0).push_back(Entry::new(1, kumo_core::StoredRequest::from(&r)));
        assert_eq!(levels.level(0).buf.capacity(), 1);
    }
}
