//! What a site's schedule has done so far, kept beside its crawl state (`SCHEDULE.json` in
//! the state directory) so a restarted daemon knows which run is next, and whether one was
//! cut short. Written whole to a temporary file, synced, then renamed over the old one: a
//! reader (`kumo schedule list`, while the daemon runs) sees the old record or the new one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The record's file name in a site's state directory.
pub const RECORD_FILE: &str = "SCHEDULE.json";

/// A site's runs so far. Times are milliseconds since the Unix epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleRecord {
    /// When the daemon first saw this site's schedule: the ticks' anchor when it has no `start`.
    pub since_ms: u64,
    /// Runs that finished.
    pub runs_done: u32,
    /// Run `runs_done + 1` started and has not finished: the next daemon goes on with it.
    pub running: bool,
    /// When the last run started; `None` before the first.
    pub last_start_ms: Option<u64>,
    /// The tick the last run stood for (its start, on the schedule's grid): the time its pages
    /// count as checked, so that they fall due by the next tick.
    #[serde(default)]
    pub last_tick_ms: Option<u64>,
    /// When the last run that finished ended; `None` before one has.
    pub last_end_ms: Option<u64>,
    /// Ticks that went by while the daemon was down or a run was under way (each such gap
    /// ran once).
    #[serde(default)]
    pub missed: u64,
}

impl ScheduleRecord {
    /// The record in `dir`, or `None` when the site never ran on a schedule there.
    pub fn load(dir: &Path) -> io::Result<Option<Self>> {
        let path = dir.join(RECORD_FILE);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: not a schedule record: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the record in `dir` (which exists), durably.
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        let tmp = dir.join(format!("{RECORD_FILE}.tmp"));
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(self).map_err(io::Error::other)?)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, dir.join(RECORD_FILE))?;
        // The rename itself survives a power loss once the directory is synced.
        File::open(dir)?.sync_all()
    }
}
