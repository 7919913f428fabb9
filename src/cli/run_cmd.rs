//! `kumo run FILE|DIR…`: a daemon that runs the sites of spider files on their schedules
//! (`[site.schedule]`; a site without one runs once). Each site has its own loop, its own
//! engine and concurrency (Spiderman's per-site worker pools), and never two runs at once.
//! Every run after the first is incremental: the pages the site knows are asked for again with
//! their validators, and only what changed is parsed and written (`kumo crawl --recrawl`).
//!
//! What each site's schedule has done is kept in its state directory ([`ScheduleRecord`]): a
//! run cut short (Ctrl-C, kill -9) goes on when the daemon starts again, and a run that fell
//! due while it was down runs once, at once. With `--redis`, the sites' crawls are in Redis
//! (the directory keeps the record alone): daemons sharing them join each run's round.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use kumo_downloader::ExtraRoots;
use kumo_engine::{StopCause, Summary};
use kumo_spider::schedule::{Due, Schedule, ScheduleRecord, from_millis, millis};
use kumo_spider::{LoadOptions, SiteSpec, SpiderFile, StopSignal};
use tokio::task::JoinSet;

use super::args::{RunArgs, StateArgs};
use super::outcome::{self, Exit, usage};
use super::spider::{self, SiteOptions};
use super::state;

/// A site of a spider file, as `kumo run` and `kumo schedule list` see it.
pub struct ScheduledSite {
    pub site: SiteSpec,
    /// Its spider file's hash (the crawl's configuration id).
    pub file_hash: u64,
    /// Its spider file.
    pub file: PathBuf,
    /// Its state directory, where its schedule record is kept too.
    pub dir: PathBuf,
    /// Its schedule; a site without one runs once.
    pub schedule: Schedule,
}

/// The spider files named: files as given, folders by their `*.toml` files (sorted).
fn spider_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot read {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "toml") && f.is_file())
                .collect();
            if found.is_empty() {
                anyhow::bail!("{} holds no spider file (*.toml)", p.display());
            }
            found.sort();
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            anyhow::bail!("no spider file or folder {}", p.display());
        }
    }
    Ok(files)
}

/// Reads every spider file named and places each site's state; site names must differ, since
/// each is a crawl of its own. Errors are bad usage.
pub fn load_sites(paths: &[PathBuf], opts: &LoadOptions, state: &StateArgs) -> Result<Vec<ScheduledSite>> {
    let files = spider_files(paths).map_err(usage)?;
    let mut names = HashSet::new();
    let mut sites = Vec::new();
    for file in &files {
        let spiders = SpiderFile::load(file, opts).map_err(|e| usage(e.into()))?;
        for warning in &spiders.warnings {
            tracing::warn!("{}: {warning}", file.display());
        }
        let file_hash = spider::file_hash(file);
        for site in spiders.sites {
            super::starts::check_site(&site)?;
            if !names.insert(site.name.clone()) {
                return Err(usage(anyhow::anyhow!(
                    "{}: a site named \"{}\" is in an earlier file too; each site is a crawl of its own \
                     and needs its own name",
                    file.display(),
                    site.name
                )));
            }
            let dir = state::site_dir(state, &site.name, &site.starts());
            let schedule = site.schedule.clone().unwrap_or_else(Schedule::once);
            sites.push(ScheduledSite { site, file_hash, file: file.clone(), dir, schedule });
        }
    }
    Ok(sites)
}

/// What the site loops share.
struct Shared {
    state: StateArgs,
    roots: ExtraRoots,
    insecure: bool,
    failure_threshold: f64,
    /// `--summary-json`: one JSON line per run.
    runs_log: Option<Mutex<File>>,
    /// `--listen`: the sites on the control server, where each run's engine goes.
    watched: Option<kumo_control::Sites>,
}

pub async fn run(a: RunArgs) -> Result<ExitCode> {
    outcome::check_threshold(a.failure_threshold).map_err(usage)?;
    let state =
        StateArgs { dir: a.state.clone(), fsync: a.fsync, redis: a.redis.clone(), ..Default::default() };
    let opts = LoadOptions {
        base: a.seed_base.clone(),
        script_ceiling: a.script.ceiling(),
        flags: Some(a.settings.layer.clone()),
    };
    for warning in a.settings.layer.warnings() {
        tracing::warn!("{warning}");
    }
    let sites = load_sites(&a.paths, &opts, &state)?;
    // One daemon per spider file: a second one is refused before it touches any state.
    let mut locks = Vec::new();
    for file in spider_files(&a.paths)? {
        let f = File::open(&file).with_context(|| format!("cannot open {}", file.display()))?;
        if f.try_lock().is_err() {
            anyhow::bail!("another kumo run is running {} (one daemon per spider file)", file.display());
        }
        locks.push(f);
    }
    let runs_log = match &a.summary_json {
        Some(p) => Some(Mutex::new(
            File::options()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open {} for the run summaries", p.display()))?,
        )),
        None => None,
    };
    let roots = super::crawl::trusted_roots(&a.ca_files).map_err(usage)?;
    let watched = kumo_control::Sites::default();
    let control = super::listen::start(&a.listen, &watched).await?;
    let watched = control.as_ref().map(|_| watched.clone());
    let shared = Arc::new(Shared {
        state,
        roots,
        insecure: a.insecure,
        failure_threshold: a.failure_threshold,
        runs_log,
        watched,
    });
    let stop = super::interrupt::stop_requests()?;
    let mut loops = JoinSet::new();
    for s in sites {
        loops.spawn(site_loop(s, shared.clone(), stop.clone()));
    }
    let mut exit = Exit::Finished;
    while let Some(done) = loops.join_next().await {
        match done {
            Ok(e) => exit = exit.worse(e),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    drop((locks, control));
    Ok(exit.into())
}

/// `2026-11-27T02:00:00Z`.
pub fn when(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Waits until `t` (by the wall clock, looked at again at least every minute so a clock that
/// jumps is followed); false when a stop came first.
async fn wait_until(t: SystemTime, stop: &mut StopSignal) -> bool {
    loop {
        let Ok(left) = t.duration_since(SystemTime::now()) else { return true };
        if left.is_zero() {
            return true;
        }
        tokio::select! {
            () = tokio::time::sleep(left.min(Duration::from_secs(60))) => {}
            _ = stop.wait_for(Option::is_some) => return false,
        }
    }
}

/// One site's runs, one after another, each when it is due; its exit status.
async fn site_loop(s: ScheduledSite, shared: Arc<Shared>, mut stop: StopSignal) -> Exit {
    let who = format!("site \"{}\": ", s.site.name);
    match site_runs(&s, &shared, &mut stop, &who).await {
        Ok(exit) => exit,
        Err(e) => {
            tell!("error: {who}{e:#}");
            outcome::of_error(&e)
        }
    }
}

async fn site_runs(s: &ScheduledSite, shared: &Shared, stop: &mut StopSignal, who: &str) -> Result<Exit> {
    let mut record = first_record(s, shared)?;
    let of = s.schedule.times.map(|t| format!(" of {t}")).unwrap_or_default();
    let mut exit = Exit::Finished;
    loop {
        let due = s.schedule.due(&record);
        let resume = match due {
            Due::Finished => {
                say!("{who}its schedule is done ({} runs)", record.runs_done);
                return Ok(exit);
            }
            Due::Resume => true,
            Due::At(t) => {
                if let Ok(left) = t.duration_since(SystemTime::now())
                    && !left.is_zero()
                {
                    say!("{who}next run at {} (in {})", when(t), state::span(left));
                }
                if !wait_until(t, stop).await {
                    return Ok(exit);
                }
                false
            }
        };
        if stop.borrow().is_some() {
            return Ok(exit);
        }
        let n = record.runs_done + 1;
        if resume {
            say!("{who}run {n}{of} goes on (it was cut short)");
        } else {
            let now = millis(SystemTime::now());
            let mut tick = now;
            if record.last_start_ms.is_none() && s.schedule.start.is_none() {
                // Without a start time the ticks count from the first run.
                record.since_ms = now;
            } else if let Due::At(t) = due {
                let (missed, last) = s.schedule.missed(&record, millis(t), now);
                if missed > 0 {
                    say!(
                        "{who}{missed} more runs fell due while kumo run was down or busy: this one stands for them"
                    );
                }
                record.missed += missed;
                tick = last.min(now);
            }
            record.last_start_ms = Some(now);
            record.last_tick_ms = Some(tick);
            record.running = true;
            save(&s.dir, &record)?;
            say!("{who}run {n}{of} starts");
        }
        let summary = one_run(s, shared, &record, resume, stop.clone()).await?;
        say!("{who}run {n}{of}:");
        spider::print_summary(&summary);
        let end = outcome::of_crawl(&summary, who, true, shared.failure_threshold, &[]);
        match summary.stopped_by {
            // Cut short: the record says so, and the next daemon goes on with it.
            StopCause::Stopped | StopCause::StoppedNow => return Ok(exit.worse(end)),
            StopCause::StorageError | StopCause::OutputError => return Ok(exit.worse(end)),
            _ => exit = exit.worse(end),
        }
        record.runs_done = n;
        record.running = false;
        record.last_end_ms = Some(millis(SystemTime::now()));
        save(&s.dir, &record)?;
        log_run(shared, s, &record, &summary)?;
    }
}

/// The site's record, or a new one for a site seen for the first time (its state directory
/// is created first, as a crawl would, so the record has somewhere to live).
fn first_record(s: &ScheduledSite, shared: &Shared) -> Result<ScheduleRecord> {
    let found = ScheduleRecord::load(&s.dir).with_context(|| format!("cannot read {}", s.dir.display()))?;
    if let Some(r) = found {
        return Ok(r);
    }
    match shared.state.redis.url {
        // The crawl is in Redis: the directory holds the record alone.
        Some(_) => {
            std::fs::create_dir_all(&s.dir).with_context(|| format!("cannot create {}", s.dir.display()))?
        }
        None => drop(state::open_at(&shared.state, &s.dir, s.site.crawl.politeness.clone())?),
    }
    let r = ScheduleRecord { since_ms: millis(SystemTime::now()), ..Default::default() };
    save(&s.dir, &r)?;
    Ok(r)
}

fn save(dir: &Path, r: &ScheduleRecord) -> Result<()> {
    r.save(dir).with_context(|| format!("cannot write the schedule record in {}", dir.display()))
}

/// One run of the site: its storage opened (and locked) for the run only, so that between
/// runs `kumo frontier` and `kumo failures` can look at it.
async fn one_run(
    s: &ScheduledSite,
    shared: &Shared,
    record: &ScheduleRecord,
    resume: bool,
    stop: StopSignal,
) -> Result<Summary> {
    let opts = SiteOptions {
        state: &shared.state,
        roots: shared.roots.clone(),
        insecure: shared.insecure,
        cache: None,
        keep_pages: true,
        // A run cut short only goes on; a new one asks for every known page again.
        recrawl: !resume,
        file_hash: s.file_hash,
        file: &s.file,
        scheduled: true,
    };
    // A crawl in Redis holds no lock on the site's directory: this one tells `kumo schedule
    // list` that a run is under way, as the embedded state's own lock does.
    let _running = match shared.state.redis.url {
        Some(_) => Some(kumo_store_embedded::StateLock::acquire(&s.dir)?),
        None => None,
    };
    let mut site = s.site.clone();
    // The pages it checks count as checked at the run's tick: they fall due by a later one.
    let tick = record.last_tick_ms.or(record.last_start_ms);
    site.crawl.checked_at = tick.map(from_millis);
    // Each run has its own page and item budget: a run may go on with a round an earlier one
    // left unfinished (stopped at its limit), whose counters already hold that limit.
    site.crawl.limits_per_run = true;
    let mut prepared = spider::prepare_site(site, &opts).await?;
    if let Some(watched) = &shared.watched {
        watched.put(&prepared.name, kumo_control::Control::of(prepared.crawl.engine()));
    }
    let result = prepared.crawl.run(Some(stop)).await;
    if matches!(result, Err(kumo::CrawlerError::Engine(kumo_engine::EngineError::Pipeline(_)))) {
        prepared.new_files.remove();
    }
    Ok(result?)
}

/// Appends the run's line to `--summary-json`.
fn log_run(shared: &Shared, s: &ScheduledSite, r: &ScheduleRecord, summary: &Summary) -> Result<()> {
    let Some(log) = &shared.runs_log else { return Ok(()) };
    let line = serde_json::json!({
        "site": s.site.name,
        "run": r.runs_done,
        "started_ms": r.last_start_ms,
        "ended_ms": r.last_end_ms,
        "summary": summary,
    });
    let mut f = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    writeln!(f, "{line}").context("cannot write the run summary")?;
    f.flush().context("cannot write the run summary")
}
