//! What is kept of a host across restarts: its key, a delay raised by what the crawl learned
//! (Crawl-delay), the adaptive throttle's learned delay, when it may next be fetched (a pause
//! for 429/503), when it was last leased (so a restart keeps the spacing the server saw) and
//! how many of its pages were queued against its budget.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kumo_frontier::later;
use kumo_frontier::schedule::HostPacing;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HostRecord {
    pub key: String,
    /// The rule's delay or the Crawl-delay floor, whichever was larger: read from state
    /// written before `floor_ms` existed, never written (it is the old rule's, not the
    /// resumed run's).
    #[serde(default, skip_serializing)]
    pub delay_ms: u64,
    /// The Crawl-delay floor alone, so a resumed run's own delay rule holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ms: Option<u64>,
    /// The adaptive throttle's learned delay; absent in state written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned_delay_ms: Option<u64>,
    /// Unix milliseconds.
    #[serde(default)]
    pub not_before_ms: u64,
    #[serde(default)]
    pub last_lease_ms: Option<u64>,
    /// Pages of the host queued against its budget (absent: none, or no budget).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub admitted: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Converts between the monotonic clock the frontier runs on and wall-clock milliseconds,
/// which is what survives a restart.
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    instant: Instant,
    unix_ms: u64,
}

impl Clock {
    pub fn now() -> Self {
        let unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        Clock { instant: Instant::now(), unix_ms }
    }

    /// Rounded up, so a restored instant is never earlier than the real one.
    pub fn to_unix_ms(self, t: Instant) -> u64 {
        if t >= self.instant {
            self.unix_ms + (t - self.instant).as_micros().div_ceil(1000) as u64 + 1
        } else {
            self.unix_ms.saturating_sub((self.instant - t).as_millis() as u64) + 1
        }
    }

    /// The instant this clock read at.
    pub fn instant(self) -> Instant {
        self.instant
    }

    /// Never panics, whatever a damaged or foreign record holds: a far future is cut to a
    /// century.
    pub fn to_instant(self, ms: u64) -> Instant {
        if ms >= self.unix_ms {
            later(self.instant, Duration::from_millis(ms - self.unix_ms))
        } else {
            self.instant.checked_sub(Duration::from_millis(self.unix_ms - ms)).unwrap_or(self.instant)
        }
    }
}

impl HostRecord {
    pub fn new(key: &str) -> Self {
        HostRecord {
            key: key.to_string(),
            delay_ms: 0,
            floor_ms: None,
            learned_delay_ms: None,
            not_before_ms: 0,
            last_lease_ms: None,
            admitted: 0,
        }
    }

    pub fn from_pacing(key: &str, p: HostPacing, clock: Clock) -> Self {
        HostRecord {
            key: key.to_string(),
            delay_ms: 0,
            // Rounded up, as the learned delay: a Crawl-delay is never shortened.
            floor_ms: Some(p.floor.as_micros().div_ceil(1000) as u64),
            // Rounded up, so a restored delay is never shorter than the learned one.
            learned_delay_ms: p.learned.map(|d| d.as_micros().div_ceil(1000) as u64),
            not_before_ms: clock.to_unix_ms(p.next_at),
            last_lease_ms: p.last_lease.map(|t| clock.to_unix_ms(t)),
            admitted: p.admitted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record from a damaged or foreign state, or a pause as long as a server may ask,
    /// restores to a far instant, never a panic.
    #[test]
    fn any_stored_instant_converts() {
        let clock = Clock::now();
        assert_eq!(clock.to_instant(u64::MAX), clock.instant() + kumo_frontier::FAR);
        assert!(clock.to_instant(0) <= clock.instant());
        assert!(clock.to_unix_ms(clock.instant() + kumo_frontier::FAR) > clock.unix_ms);
    }

    /// A record written before the learned delay existed still loads (no learned delay), and
    /// one with it round-trips.
    #[test]
    fn records_without_a_learned_delay_still_load() {
        let old: HostRecord =
            serde_json::from_str(r#"{"key":"a.test","delay_ms":200,"not_before_ms":5,"last_lease_ms":null}"#)
                .unwrap();
        assert_eq!((old.delay_ms, old.learned_delay_ms), (200, None));
        let mut rec = HostRecord::new("b.test");
        rec.learned_delay_ms = Some(1500);
        let back: HostRecord = serde_json::from_slice(&serde_json::to_vec(&rec).unwrap()).unwrap();
        assert_eq!(back.learned_delay_ms, Some(1500));
    }
}
