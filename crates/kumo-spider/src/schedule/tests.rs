//! Tests of the schedules: when each run is due (every, start, times, cron, time zones,
//! daylight-saving changes), ticks missed while down, refused cadences, the record.

use super::*;

const HOUR: u64 = 3_600_000;

fn record(since_ms: u64) -> ScheduleRecord {
    ScheduleRecord { since_ms, ..Default::default() }
}

fn every(text: &str, start: Option<u64>, times: Option<u32>) -> Schedule {
    Schedule { cadence: Cadence::every(text).unwrap(), start: start.map(from_millis), times }
}

fn cron(text: &str) -> Schedule {
    cron_in(text, chrono_tz::UTC)
}

fn cron_in(text: &str, tz: chrono_tz::Tz) -> Schedule {
    Schedule { cadence: Cadence::cron(text, tz).unwrap(), start: None, times: None }
}

/// An RFC 3339 time, in ms since the Unix epoch.
fn ms(text: &str) -> u64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis() as u64
}

/// The next `n` runs of `s` after `from` (each run starting at its tick).
fn runs(s: &Schedule, from: &str, n: usize) -> Vec<u64> {
    let mut r = record(ms(from));
    r.last_start_ms = Some(ms(from));
    (0..n)
        .map(|_| {
            let t = at(s.due(&r));
            r.last_start_ms = Some(t);
            t
        })
        .collect()
}

fn at(d: Due) -> u64 {
    match d {
        Due::At(t) => millis(t),
        other => panic!("not a time: {other:?}"),
    }
}

/// 2026-11-27T00:00:00Z.
const DAY0: u64 = 1_795_737_600_000;

#[test]
fn every_runs_first_at_the_anchor_then_a_period_after_each_start() {
    let s = every("6h", None, None);
    let mut r = record(DAY0);
    assert_eq!(at(s.due(&r)), DAY0, "first run at once");
    r.last_start_ms = Some(DAY0 + 5);
    r.runs_done = 1;
    assert_eq!(at(s.due(&r)), DAY0 + 6 * HOUR);
    // A run that began late still keeps the grid: the next tick after its start.
    r.last_start_ms = Some(DAY0 + 7 * HOUR);
    assert_eq!(at(s.due(&r)), DAY0 + 12 * HOUR);
}

#[test]
fn a_start_time_is_the_first_run_and_the_anchor() {
    let s = every("1h", Some(DAY0 + 30 * 60_000), None);
    let r = record(DAY0);
    assert_eq!(at(s.due(&r)), DAY0 + 30 * 60_000);
}

#[test]
fn ticks_missed_while_down_run_once() {
    let s = every("1h", None, None);
    let mut r = record(DAY0);
    r.last_start_ms = Some(DAY0);
    r.runs_done = 1;
    // The daemon was down for ten hours: the next run is the 1h tick, due long ago ...
    let due = at(s.due(&r));
    assert_eq!(due, DAY0 + HOUR);
    // ... and stands for the nine after it that went by too.
    assert_eq!(s.missed(&r, due, DAY0 + 10 * HOUR + 1), (9, DAY0 + 10 * HOUR));
    // Once it starts (now), the next is the first tick after now, not a burst.
    r.last_start_ms = Some(DAY0 + 10 * HOUR + 1);
    assert_eq!(at(s.due(&r)), DAY0 + 11 * HOUR);
}

#[test]
fn times_ends_the_schedule_and_a_cut_run_resumes_first() {
    let s = every("10s", None, Some(2));
    let mut r = record(DAY0);
    r.runs_done = 1;
    r.running = true;
    assert_eq!(s.due(&r), Due::Resume);
    r.running = false;
    r.runs_done = 2;
    assert_eq!(s.due(&r), Due::Finished);
}

#[test]
fn cron_every_six_hours_fires_four_times_a_day_in_utc() {
    let s = cron("0 */6 * * *");
    let mut r = record(DAY0 + 1);
    let mut fired = Vec::new();
    for _ in 0..5 {
        let t = at(s.due(&r));
        fired.push((t - DAY0) / HOUR);
        r.last_start_ms = Some(t);
    }
    assert_eq!(fired, [6, 12, 18, 24, 30]);
}

#[test]
fn cron_with_seconds_and_day_of_month_or_week() {
    let s = cron("*/5 * * * * *");
    let r = record(DAY0 + 1);
    assert_eq!(at(s.due(&r)), DAY0 + 5_000, "six fields: seconds first");
    // Vixie cron: day of month OR day of week. 2026-11-27 is a Friday; the next Monday is
    // 2026-11-30, before the 1st of December.
    let s = cron("0 9 1 * MON");
    assert_eq!(at(s.due(&r)), DAY0 + 3 * 24 * HOUR + 9 * HOUR);
}

#[test]
fn cron_reads_the_clock_of_its_time_zone() {
    let paris = time_zone("Europe/Paris").unwrap();
    let s = cron_in("0 3 * * *", paris);
    assert_eq!(s.cadence.describe(), "cron \"0 3 * * *\" (Europe/Paris)");
    // 03:00 in Paris is 02:00 UTC in winter and 01:00 UTC in summer.
    assert_eq!(runs(&s, "2026-01-10T00:00:00Z", 2), [ms("2026-01-10T02:00:00Z"), ms("2026-01-11T02:00:00Z")]);
    assert_eq!(runs(&s, "2026-07-10T00:00:00Z", 1), [ms("2026-07-10T01:00:00Z")]);
    let e = time_zone("Mars/Olympus").unwrap_err();
    assert!(e.contains("not a time zone") && e.contains("Europe/Paris"), "{e}");
}

#[test]
fn a_daylight_saving_change_neither_skips_nor_repeats_a_run() {
    let s = cron_in("30 2 * * *", time_zone("Europe/Paris").unwrap());
    // 2026-03-29: the clock goes from 02:00 to 03:00, so 02:30 never happens; the run is at
    // the first instant after the gap (03:00 CEST, 01:00 UTC), and the next day's as usual.
    assert_eq!(runs(&s, "2026-03-28T12:00:00Z", 2), [ms("2026-03-29T01:00:00Z"), ms("2026-03-30T00:30:00Z")]);
    // 2026-10-25: the clock goes from 03:00 back to 02:00, so 02:30 happens twice; it runs
    // once, at the first.
    assert_eq!(runs(&s, "2026-10-24T12:00:00Z", 2), [ms("2026-10-25T00:30:00Z"), ms("2026-10-26T01:30:00Z")]);
}

#[test]
fn bad_cadences_say_why() {
    let e = Cadence::cron("61 * * * *", chrono_tz::UTC).unwrap_err();
    assert!(e.contains("bad cron pattern"), "{e}");
    let e = Cadence::cron("0 0 30 2 *", chrono_tz::UTC).unwrap_err();
    assert!(e.contains("never"), "{e}");
    assert!(Cadence::every("soon").unwrap_err().contains("not a duration"));
    assert!(Cadence::every("10ms").unwrap_err().contains("at least 1s"));
}

#[test]
fn the_record_survives_a_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(ScheduleRecord::load(dir.path()).unwrap(), None);
    let r = ScheduleRecord {
        since_ms: 5,
        runs_done: 2,
        running: true,
        last_start_ms: Some(7),
        ..Default::default()
    };
    r.save(dir.path()).unwrap();
    assert_eq!(ScheduleRecord::load(dir.path()).unwrap(), Some(r));
    std::fs::write(dir.path().join(RECORD_FILE), "{").unwrap();
    let e = ScheduleRecord::load(dir.path()).unwrap_err();
    assert!(e.to_string().contains("not a schedule record"), "{e}");
}
