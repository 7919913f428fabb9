//! Recurring runs of a site (`[site.schedule]`, Spiderman's schedule/times): when each run is
//! due, from the schedule and the site's [`ScheduleRecord`] of the runs so far.
//!
//! Every schedule is a series of ticks from an anchor (its `start`, or the moment the site's
//! schedule was first seen): `every = "6h"` ticks at anchor + k·6h, `cron = "0 */6 * * *"` at
//! the pattern's times, read on the clock of the schedule's time zone (UTC unless `tz` names
//! another), from the anchor on. The first run is due at the first tick; each
//! later one at the first tick after the previous run started. A due tick in the past runs
//! at once, and only once however many ticks went by (the daemon was down, or the previous
//! run was still under way): runs never overlap and never come in a burst.

mod record;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};

pub use record::{RECORD_FILE, ScheduleRecord};

/// How often a site runs.
#[derive(Debug, Clone)]
pub enum Cadence {
    /// One run (a site without a schedule).
    Once,
    /// At a fixed period from the anchor.
    Every(Duration),
    /// At a cron pattern's times (5 fields, or 6 with seconds first), on the clock of `tz`.
    Cron {
        /// The pattern as written, trimmed.
        pattern: String,
        /// The pattern, parsed.
        cron: Box<Cron>,
        /// The time zone whose clock the pattern is read on.
        tz: Tz,
    },
}

/// A site's schedule, as its spider file gives it.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// How often it runs.
    pub cadence: Cadence,
    /// The first run (and the anchor of the ticks); none: when the schedule is first seen.
    pub start: Option<SystemTime>,
    /// Runs in all; none: forever.
    pub times: Option<u32>,
}

/// When a site's next run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// A run was cut short (Ctrl-C, kill -9, power loss): it goes on at once.
    Resume,
    /// The next run, at this time (at once if it has passed).
    At(SystemTime),
    /// Its `times` runs are done.
    Finished,
}

/// The time zone named `name` (IANA's names: `Europe/Paris`, `America/New_York`, `UTC`).
pub fn time_zone(name: &str) -> Result<Tz, String> {
    name.parse::<Tz>().map_err(|_| {
        format!("{name:?} is not a time zone: write an IANA name such as \"Europe/Paris\" or \"UTC\"")
    })
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The time `ms` milliseconds after the Unix epoch.
pub fn from_millis(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

impl Cadence {
    /// `every = "6h"`: a period of at least a second (humantime's units: `90s`, `15m`, `1h 30m`,
    /// `2days`).
    pub fn every(text: &str) -> Result<Self, String> {
        let d = humantime::parse_duration(text)
            .map_err(|e| format!("not a duration ({e}): try \"6h\" or \"30m\""))?;
        if d < Duration::from_secs(1) {
            return Err("must be at least 1s".into());
        }
        // Far beyond any use; keeps tick arithmetic in range.
        if d > Duration::from_secs(100 * 366 * 86_400) {
            return Err("must be at most 100 years".into());
        }
        Ok(Cadence::Every(d))
    }

    /// `cron = "0 */6 * * *"`: 5 fields (minute first), or 6 with seconds first, on the clock
    /// of `tz` (a daylight-saving change neither repeats nor skips a run: croner runs a time
    /// the clock skips at the first instant after the gap, and a time it repeats once).
    pub fn cron(text: &str, tz: Tz) -> Result<Self, String> {
        let parser = CronParser::builder().seconds(Seconds::Optional).build();
        let cron = parser.parse(text).map_err(|e| format!("bad cron pattern: {e}"))?;
        // A pattern that never matches (`0 0 30 2 *`) would leave the site waiting forever.
        let from = DateTime::<Utc>::from_timestamp_millis(0).unwrap_or_default();
        cron.find_next_occurrence(&from, true)
            .map_err(|_| "the pattern matches no time: it would never run".to_string())?;
        Ok(Cadence::Cron { pattern: text.trim().to_string(), cron: Box::new(cron), tz })
    }

    /// The first tick at or after `from_ms` (`inclusive`), or strictly after it.
    fn tick_from(&self, anchor_ms: u64, from_ms: u64, inclusive: bool) -> Option<u64> {
        match self {
            Cadence::Once => {
                (from_ms < anchor_ms || (inclusive && from_ms == anchor_ms)).then_some(anchor_ms)
            }
            Cadence::Every(d) => {
                let period = u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1);
                if from_ms < anchor_ms || (inclusive && from_ms == anchor_ms) {
                    return Some(anchor_ms);
                }
                let since = from_ms - anchor_ms;
                let k = if inclusive && since.is_multiple_of(period) {
                    since / period
                } else {
                    since / period + 1
                };
                anchor_ms.checked_add(k.checked_mul(period)?)
            }
            Cadence::Cron { cron, tz, .. } => {
                let (from, inclusive) =
                    if from_ms < anchor_ms { (anchor_ms, true) } else { (from_ms, inclusive) };
                // Patterns have whole seconds: a start within a second looks from the next one
                // (inclusive) or from its own (exclusive), never at a time before it.
                let secs = from / 1000 + u64::from(inclusive && !from.is_multiple_of(1000));
                let from = DateTime::<Utc>::from_timestamp(i64::try_from(secs).ok()?, 0)?.with_timezone(tz);
                let next = cron.find_next_occurrence(&from, inclusive).ok()?;
                u64::try_from(next.timestamp_millis()).ok()
            }
        }
    }

    /// How it reads in `kumo schedule list`.
    pub fn describe(&self) -> String {
        match self {
            Cadence::Once => "once".into(),
            Cadence::Every(d) => format!("every {}", humantime::format_duration(*d)),
            Cadence::Cron { pattern, tz, .. } => format!("cron \"{pattern}\" ({})", tz.name()),
        }
    }
}

impl Schedule {
    /// A single run, at once: a site without `[site.schedule]`.
    pub fn once() -> Self {
        Schedule { cadence: Cadence::Once, start: None, times: Some(1) }
    }

    /// The ticks' anchor: the file's `start`, else when the schedule was first seen.
    pub fn anchor_ms(&self, record: &ScheduleRecord) -> u64 {
        self.start.map_or(record.since_ms, millis)
    }

    /// When the next run is, after the runs `record` holds.
    pub fn due(&self, record: &ScheduleRecord) -> Due {
        if record.running {
            return Due::Resume;
        }
        if self.times.is_some_and(|t| record.runs_done >= t) {
            return Due::Finished;
        }
        let anchor = self.anchor_ms(record);
        let next = match record.last_start_ms {
            None => self.cadence.tick_from(anchor, anchor, true),
            Some(last) => self.cadence.tick_from(anchor, last, false),
        };
        // No tick left in range (a cron pattern past its last year): nothing more to run.
        next.map_or(Due::Finished, |ms| Due::At(from_millis(ms)))
    }

    /// The ticks after `due_ms` up to `now_ms`, which a run starting now stands for (they went
    /// by while the daemon was down or the previous run was under way; counted up to 10,000),
    /// and the last tick it stands for.
    pub fn missed(&self, record: &ScheduleRecord, due_ms: u64, now_ms: u64) -> (u64, u64) {
        let anchor = self.anchor_ms(record);
        let mut n = 0;
        let mut at = due_ms;
        while n < 10_000 {
            match self.cadence.tick_from(anchor, at, false) {
                Some(next) if next <= now_ms => {
                    n += 1;
                    at = next;
                }
                _ => break,
            }
        }
        (n, at)
    }
}

#[cfg(test)]
mod tests;
