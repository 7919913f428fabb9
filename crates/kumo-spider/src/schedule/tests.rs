use super::*;

const HOUR: u64 = 3_600_000;

fn record(since_ms: u64) -> ScheduleRecord {
    ScheduleRecord { since_ms, ..Default::default() }
}

fn every(text: &str, start: Option<u64>, times: Option<u32>) -> Schedule {
    Schedule { cadence: Cadence::every(text).unwrap(), start: start.map(from_millis), times }
}

fn cron(text: &str) -> Schedule {
    Schedule { cadence: Cadence::cron(text).unwrap(), start: None, times: None }
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
fn bad_cadences_say_why() {
    let e = Cadence::cron("61 * * * *").unwrap_err();
    assert!(e.contains("bad cron pattern"), "{e}");
    let e = Cadence::cron("0 0 30 2 *").unwrap_err();
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
