//! kumo's DNS cache, in front of hickory's (which is off): host → addresses until the
//! answer's expiry, or host → failure until its retry time.
//!
//! Each name has one slot, a [`OnceCell`] that the first lookup fills while later ones wait
//! on it (single flight: at most one question per name at a time). If the lookup filling it
//! is dropped (its fetch timed out), tokio hands the filling to the next waiter. The map's
//! lock is held only to find or replace a slot, never across an await.
//!
//! It is bounded: when full, a sweep drops expired answers and abandoned slots, then the
//! answers closest to expiry, down to 7/8 of the capacity, so a sweep comes at most once
//! every capacity/8 new names. Slots being filled are never dropped (their number is bounded
//! by the lookups waiting on them).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::OnceCell;

use super::DnsErrorKind;

/// One name's slot: empty while its lookup is under way.
pub(super) type Flight = Arc<OnceCell<Answer>>;

/// What a lookup found, and until when it stands.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    pub(super) outcome: Result<Arc<[IpAddr]>, Failure>,
    pub(super) expires: Instant,
}

/// A lookup that found no address.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    pub(super) kind: DnsErrorKind,
    pub(super) detail: Arc<str>,
}

/// What the cache holds for a name.
pub(super) enum Found {
    /// An answer still standing.
    Fresh(Answer),
    /// A slot to fill or to wait on.
    Flight(Flight),
}

#[derive(Debug)]
pub(super) struct Cache {
    slots: Mutex<HashMap<String, Flight>>,
    capacity: usize,
}

impl Cache {
    /// A cache of at most `capacity` names (at least 1), not counting those being looked up.
    pub(super) fn new(capacity: usize) -> Cache {
        Cache { slots: Mutex::new(HashMap::new()), capacity: capacity.max(1) }
    }

    /// The answer for `host` if one stands at `now`; else the slot its lookup fills (under
    /// way, or new: an expired answer's slot is replaced, so lookups waiting on the old one
    /// are not disturbed).
    pub(super) fn find(&self, host: &str, now: Instant) -> Found {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        match slots.get(host) {
            Some(slot) => match slot.get() {
                Some(answer) if answer.expires > now => return Found::Fresh(answer.clone()),
                Some(_) => {}
                None => return Found::Flight(slot.clone()),
            },
            None if slots.len() >= self.capacity => make_room(&mut slots, self.capacity, now),
            None => {}
        }
        let slot = Flight::default();
        slots.insert(host.to_owned(), slot.clone());
        Found::Flight(slot)
    }

    /// Holds `answer` for `host` unless the cache has something for it already, or is full.
    /// Whether it was taken.
    pub(super) fn prime(&self, host: String, answer: Answer) -> bool {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.len() >= self.capacity || slots.contains_key(&host) {
            return false;
        }
        slots.insert(host, Arc::new(OnceCell::new_with(Some(answer))));
        true
    }

    /// Names held now, answered or under way.
    pub(super) fn len(&self) -> usize {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// Frees at least an eighth of `capacity` (at least one slot) if it can: drops what no longer
/// serves, then the answers that expire soonest (they would be asked again first anyway).
fn make_room(slots: &mut HashMap<String, Flight>, capacity: usize, now: Instant) {
    let target = capacity - (capacity / 8).max(1);
    // An empty slot that only the map holds was abandoned by every lookup waiting on it.
    slots.retain(|_, slot| match slot.get() {
        Some(answer) => answer.expires > now,
        None => Arc::strong_count(slot) > 1,
    });
    if slots.len() <= target {
        return;
    }
    let mut answered: Vec<(Instant, String)> = slots
        .iter()
        .filter_map(|(host, slot)| slot.get().map(|answer| (answer.expires, host.clone())))
        .collect();
    let excess = (slots.len() - target).min(answered.len());
    if excess == 0 {
        return;
    }
    answered.select_nth_unstable_by_key(excess - 1, |(expires, _)| *expires);
    for (_, host) in &answered[..excess] {
        slots.remove(host);
    }
}
