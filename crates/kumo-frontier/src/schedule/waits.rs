//! What a host's requests wait for besides its delay: a retried request's own back-off, and a
//! pause its server asked for.
//!
//! A retry backs off the request, not the host: a site with a few flaky pages is crawled at
//! its usual pace while each flaky page waits out its back-off apart (`Host::backoff`), then
//! goes back to the front of its level; one URL's `Retry-After` is such a back-off. Only the
//! server's word about the whole host holds it (a pause: a 429, 503s with `Retry-After` from
//! several URLs, robots.txt unavailable; the engine decides, `pauses.rs`); pauses can be
//! listed, capped and lifted, so no pause stalls a site beyond what the user allows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Entry, Host, HostTable, push_front};
use crate::instant::later;

/// A host as `kumo frontier hosts` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostView {
    /// The host's key (`host[:port]`).
    pub key: Arc<str>,
    /// Requests queued, those backing off included.
    pub queued: usize,
    /// Retried requests waiting out their back-off.
    pub backing_off: usize,
    /// The host's delay (the largest of its rule's, its Crawl-delay and its learned delay).
    pub delay: Duration,
    /// How much longer its server asked it to wait, if it is paused.
    pub paused_for: Option<Duration>,
}

/// A pause cut short by [`HostTable::cap_pauses`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiftedPause {
    /// The host's key.
    pub host: Arc<str>,
    /// How much longer the host would have waited.
    pub was: Duration,
    /// How much longer it waits now.
    pub now: Duration,
}

/// Moves `h`'s back-offs that are due to the front of their levels, earliest first.
pub(super) fn wake_due(h: &mut Host, now: Instant) {
    let Some(rare) = &mut h.rare else { return };
    let mut due = Vec::new();
    while let Some(entry) = rare.backoff.first_entry() {
        if entry.key().0 > now {
            break;
        }
        due.push(entry.remove());
    }
    if rare.paused_until.is_some_and(|t| t <= now) {
        rare.paused_until = None;
    }
    h.shrink();
    // Pushed to the front in reverse, so the earliest due ends up first.
    for mut e in due.into_iter().rev() {
        e.not_before = None;
        push_front(h, e);
    }
}

/// Keeps `entry` apart until its not-before (the caller counts it queued).
pub(super) fn set_aside(h: &mut Host, entry: Entry) {
    let at = entry.not_before.unwrap_or_else(Instant::now);
    h.queued += 1;
    h.rare_mut().backoff.insert((at, entry.seq), entry);
}

impl HostTable {
    /// Puts a request that was out back in its host's queue, to be handed out no sooner
    /// than `after` from now; the host goes on with its other requests meanwhile.
    pub fn retry_later(&mut self, i: usize, mut entry: Entry, after: Duration, now: Instant) {
        let h = &mut self.hosts[i];
        if after.is_zero() {
            entry.not_before = None;
            push_front(h, entry);
            h.queued += 1;
        } else {
            entry.not_before = Some(later(now, after));
            set_aside(h, entry);
        }
        self.queued += 1;
        self.schedule(i, now);
    }

    /// Cuts the pauses of `hosts` (every host when `None`) to at most `max` from now
    /// (`Duration::ZERO` lifts them). Returns the pauses it cut.
    pub fn cap_pauses(&mut self, hosts: Option<&[&str]>, max: Duration, now: Instant) -> Vec<LiftedPause> {
        let limit = later(now, max);
        let mut cut = Vec::new();
        for i in 0..self.hosts.len() {
            let h = &mut self.hosts[i];
            if hosts.is_some_and(|keys| !keys.contains(&&*h.key)) {
                continue;
            }
            let Some(until) = h.paused_until().filter(|&t| t > limit) else { continue };
            h.rare_mut().paused_until = (!max.is_zero()).then_some(limit);
            cut.push(LiftedPause {
                host: Arc::from(&*h.key),
                was: until.saturating_duration_since(now),
                now: max,
            });
            self.schedule(i, now);
        }
        cut
    }

    /// Every host, with what it waits for.
    pub fn host_views(&self, now: Instant) -> Vec<HostView> {
        self.hosts
            .iter()
            .map(|h| HostView {
                key: Arc::from(&*h.key),
                queued: h.queued,
                backing_off: h.backing_off(),
                delay: h.delay(),
                paused_for: h.paused_until().filter(|&t| t > now).map(|t| t - now),
            })
            .collect()
    }

    /// The index of the host `key`, if the table knows it.
    pub fn host_index(&self, key: &str) -> Option<usize> {
        self.host_ids.get(key, &self.hosts)
    }
}
