//! `[site.schedule]`: when `kumo run` runs a site again.
//!
//! ```toml
//! [site.schedule]
//! every = "6h"                     # or cron = "0 */6 * * *" (UTC; 6 fields: seconds first)
//! start = "2026-12-01T06:00:00Z"   # optional: the first run, in UTC (also a TOML date-time)
//! times = 10                       # optional: runs in all (default: forever)
//! ```

use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};
use crate::schedule::{Cadence, Schedule};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSchedule {
    pub every: Option<Spanned<String>>,
    pub cron: Option<Spanned<String>>,
    /// A string or a TOML offset date-time.
    pub start: Option<Spanned<toml::Value>>,
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
    let cadence = match (&raw.every, &raw.cron) {
        (Some(e), None) => {
            Cadence::every(e.get_ref()).map_err(|m| lines.error(e.span().start, field("every"), m))?
        }
        (None, Some(c)) => {
            Cadence::cron(c.get_ref()).map_err(|m| lines.error(c.span().start, field("cron"), m))?
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
            let text = text.trim();
            let utc = text.strip_suffix('Z').or_else(|| text.strip_suffix("+00:00"));
            let t = utc.and_then(|t| humantime::parse_rfc3339_weak(t).ok()).ok_or_else(|| {
                lines.error(
                    s.span().start,
                    field("start"),
                    format!("{text:?} is not a UTC date and time: write it as 2026-12-01T06:00:00Z"),
                )
            })?;
            Some(t)
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
