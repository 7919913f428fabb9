//! `[site.schedule]`: when `kumo run` runs a site again.
//!
//! ```toml
//! [site.schedule]
//! every = "6h"                     # or cron = "0 */6 * * *" (6 fields: seconds first)
//! tz = "Europe/Paris"              # optional: the clock cron patterns and `start` read (UTC)
//! start = "2026-12-01T06:00:00Z"   # optional: the first run (also a TOML date-time); with an
//!                                  # offset, or without one on the clock of `tz`
//! times = 10                       # optional: runs in all (default: forever)
//! ```

use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};
use crate::schedule::{Cadence, Schedule, time_zone};

/// When `kumo run` runs a site: `every` or `cron`, one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSchedule {
    /// A fixed interval between runs' starts (`"10s"`, `"6h"`).
    #[schemars(with = "Option<String>")]
    pub every: Option<Spanned<String>>,
    /// A cron expression (`"30 6 * * MON-FRI"`), read in `tz`.
    #[schemars(with = "Option<String>")]
    pub cron: Option<Spanned<String>>,
    /// An IANA time zone name; UTC when absent.
    #[schemars(with = "Option<String>")]
    pub tz: Option<Spanned<String>>,
    /// The first run's time, a string or a TOML date-time: RFC 3339 with its offset, or a
    /// local time read in `tz`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub start: Option<Spanned<toml::Value>>,
    /// How many runs in all; left out, no end.
    #[schemars(with = "Option<u32>")]
    pub times: Option<Spanned<u32>>,
}

pub(super) fn schedule(
    lines: &Lines,
    at: &str,
    raw: Spanned<RawSchedule>,
) -> Result<Schedule, SpiderConfigError> {
    let table_at = raw.span().start;
    let raw = raw.into_inner();
    let field = |name: &str| format!("{at}.{name}");
    let tz = match &raw.tz {
        None => chrono_tz::UTC,
        Some(t) => time_zone(t.get_ref()).map_err(|m| lines.error(t.span().start, field("tz"), m))?,
    };
    let cadence = match (&raw.every, &raw.cron) {
        (Some(e), None) => {
            Cadence::every(e.get_ref()).map_err(|m| lines.error(e.span().start, field("every"), m))?
        }
        (None, Some(c)) => {
            Cadence::cron(c.get_ref(), tz).map_err(|m| lines.error(c.span().start, field("cron"), m))?
        }
        _ => {
            return Err(lines.error(
                table_at,
                at,
                "a schedule needs exactly one of `every` (\"6h\") and `cron` (\"0 */6 * * *\")",
            ));
        }
    };
    let start = match &raw.start {
        None => None,
        Some(s) => {
            let text = match s.get_ref() {
                toml::Value::String(t) => t.clone(),
                toml::Value::Datetime(d) => d.to_string(),
                other => other.to_string(),
            };
            Some(
                start_time(text.trim(), tz, raw.tz.is_some())
                    .map_err(|m| lines.error(s.span().start, field("start"), m))?,
            )
        }
    };
    let times = match &raw.times {
        Some(t) if *t.get_ref() == 0 => {
            return Err(lines.error(
                t.span().start,
                field("times"),
                "must be at least 1 (leave it out: forever)",
            ));
        }
        t => t.as_ref().map(|t| *t.get_ref()),
    };
    Ok(Schedule { cadence, start, times })
}

/// A schedule's `start`: an RFC 3339 date and time with its offset (`Z`, `+01:00`), or,
/// when the schedule names its time zone (`tz_given`), one without, read on that zone's clock.
fn start_time(text: &str, tz: chrono_tz::Tz, tz_given: bool) -> Result<SystemTime, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.into());
    }
    let local = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S"));
    match local {
        Ok(local) if tz_given => match local.and_local_timezone(tz) {
            chrono::LocalResult::Single(t) => Ok(t.with_timezone(&chrono::Utc).into()),
            chrono::LocalResult::Ambiguous(..) => {
                Err(format!("{text:?} happens twice in {} (the clock goes back): add its offset", tz.name()))
            }
            chrono::LocalResult::None => {
                Err(format!("{text:?} never happens in {} (the clock skips it)", tz.name()))
            }
        },
        Ok(_) => Err(format!(
            "{text:?} has no offset: write it as 2026-12-01T06:00:00Z (UTC), with an offset \
             (2026-12-01T07:00:00+01:00), or set `tz`"
        )),
        Err(_) => Err(format!("{text:?} is not a date and time: write it as 2026-12-01T06:00:00Z")),
    }
}
