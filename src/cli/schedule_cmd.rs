//! `kumo schedule list FILE|DIR…`: each site's schedule, its runs so far and its next run, read
//! from the schedule records `kumo run` keeps (it may be running: the records are replaced
//! whole, and a site's state directory is locked while a run of it is under way).

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Result;
use kumo_spider::LoadOptions;
use kumo_spider::schedule::{Due, ScheduleRecord, from_millis, millis};
use kumo_store_embedded::{StateLock, StoreError};
use serde_json::json;

use super::args::{ScheduleCommand, ScheduleListArgs, StateArgs};
use super::run_cmd::{ScheduledSite, load_sites, when};
use super::state::span;

pub fn run(c: ScheduleCommand) -> Result<ExitCode> {
    match c {
        ScheduleCommand::List(a) => list(&a),
    }
}

/// Where a site stands.
struct Row {
    site: String,
    schedule: String,
    runs: String,
    last: Option<SystemTime>,
    next: String,
    next_at: Option<SystemTime>,
    state: &'static str,
}

fn list(a: &ScheduleListArgs) -> Result<ExitCode> {
    let state = StateArgs { dir: a.state.clone(), ..Default::default() };
    let opts = LoadOptions { base: a.seed_base.clone(), ..Default::default() };
    let sites = load_sites(&a.paths, &opts, &state)?;
    let rows = sites.iter().map(row).collect::<Result<Vec<_>>>()?;
    if a.json {
        let stamp = |t: Option<SystemTime>| t.map(|t| json!({ "utc": when(t), "ms": millis(t) }));
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "site": r.site, "schedule": r.schedule, "runs": r.runs, "state": r.state,
                    "last_run": stamp(r.last), "next_run": stamp(r.next_at),
                })
            })
            .collect();
        out!("{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = |f: fn(&Row) -> usize, head: &str| rows.iter().map(f).max().unwrap_or(0).max(head.len());
    let (ws, wc, wr) = (
        width(|r| r.site.len(), "SITE"),
        width(|r| r.schedule.len(), "SCHEDULE"),
        width(|r| r.runs.len(), "RUNS"),
    );
    out!("{:ws$}  {:wc$}  {:wr$}  {:20}  NEXT RUN", "SITE", "SCHEDULE", "RUNS", "LAST RUN")?;
    for r in &rows {
        let last = r.last.map_or_else(|| "-".to_string(), when);
        out!("{:ws$}  {:wc$}  {:wr$}  {last:20}  {}", r.site, r.schedule, r.runs, r.next)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn row(s: &ScheduledSite) -> Result<Row> {
    let record = ScheduleRecord::load(&s.dir)?;
    let times = s.schedule.times.map(|t| format!(" of {t}")).unwrap_or_default();
    let runs = format!("{}{times}", record.as_ref().map_or(0, |r| r.runs_done));
    let now = SystemTime::now();
    let mut row = Row {
        site: s.site.name.clone(),
        schedule: s.schedule.cadence.describe(),
        runs,
        last: record.as_ref().and_then(|r| r.last_start_ms).map(from_millis),
        next: String::new(),
        next_at: None,
        state: "waiting",
    };
    let Some(record) = record else {
        // Never run by kumo run: the first run is at the first tick from the start time, or
        // from when it starts (at once for `every`, the pattern's next time for `cron`).
        let fresh = ScheduleRecord { since_ms: millis(now), ..Default::default() };
        (row.next, row.next_at) = match s.schedule.due(&fresh) {
            Due::At(t) if t > now => (in_time(t, now), Some(t)),
            _ => ("when kumo run starts".into(), None),
        };
        row.state = "new";
        return Ok(row);
    };
    (row.next, row.state) = match s.schedule.due(&record) {
        Due::Finished => ("- (done)".into(), "done"),
        Due::Resume if locked(s)? => {
            (format!("running since {}", when(from_millis(record.last_start_ms.unwrap_or(0)))), "running")
        }
        Due::Resume => ("cut short: goes on when kumo run starts".into(), "cut-short"),
        Due::At(t) => {
            row.next_at = Some(t);
            if t <= now { ("due now".into(), "due") } else { (in_time(t, now), "waiting") }
        }
    };
    Ok(row)
}

fn in_time(t: SystemTime, now: SystemTime) -> String {
    format!("{} (in {})", when(t), span(t.duration_since(now).unwrap_or_default()))
}

/// Whether a process holds the site's state directory (a run of it is under way).
fn locked(s: &ScheduledSite) -> Result<bool> {
    match StateLock::acquire(&s.dir) {
        Ok(_) => Ok(false),
        Err(StoreError::Locked { .. }) => Ok(true),
        Err(e) => Err(e.into()),
    }
}
