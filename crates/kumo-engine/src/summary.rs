//! Crawl counters while running ([`Progress`]) and the final [`Summary`] (JSON and human).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use kumo_core::{ModuleSummary, SkipReason};
use kumo_frontier::FrontierStats;
use serde::Serialize;

use crate::{RobotsStats, Status};

/// Live numbers for a progress display, updated by the engine as it goes.
#[derive(Debug, Default)]
pub struct Progress {
    /// Responses received, those of the runs this one resumed included.
    pub pages: AtomicU64,
    /// Requests queued in the frontier, as of its last commit (or the seeds).
    pub queued: AtomicU64,
    /// Requests handed to the downloaders whose results the scheduler has not taken yet.
    pub in_flight: AtomicU64,
    /// Errors counted since `init`: failed fetches, errors met analyzing pages, storage
    /// failures.
    pub errors: AtomicU64,
    /// Items found on the pages handled so far, those of the runs this one resumed included.
    pub items: AtomicU64,
}

impl Progress {
    /// Reads one of the counters: `Progress::get(&progress.pages)`.
    pub fn get(v: &AtomicU64) -> u64 {
        v.load(Ordering::Relaxed)
    }
}

/// Why the crawl ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopCause {
    /// Nothing left to fetch and nothing in flight.
    Drained,
    /// The page limit (`max_pages`) was reached.
    MaxPages,
    /// The items committed fill what the run may write (`max_items`).
    MaxItems,
    /// The run lasted `max_duration`.
    MaxDuration,
    /// `max_errors` errors were counted.
    MaxErrors,
    /// A graceful stop was asked for.
    Stopped,
    /// An immediate stop was asked for; what was in flight was abandoned.
    StoppedNow,
    /// The frontier failed.
    StorageError,
    /// An output could not be written (or its checkpoint committed): the crawl stopped
    /// rather than go on dropping items.
    OutputError,
}

impl StopCause {
    /// Its name, as shown and serialized (`max-pages`).
    pub fn as_str(self) -> &'static str {
        match self {
            StopCause::Drained => "drained",
            StopCause::MaxPages => "max-pages",
            StopCause::MaxItems => "max-items",
            StopCause::MaxErrors => "max-errors",
            StopCause::MaxDuration => "max-duration",
            StopCause::Stopped => "stopped",
            StopCause::StoppedNow => "stopped-now",
            StopCause::StorageError => "storage-error",
            StopCause::OutputError => "output-error",
        }
    }
}

impl fmt::Display for StopCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The modules of the crawl, by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Modules {
    /// The downloaders, those unregistered included, in ID order.
    pub downloaders: Vec<ModuleSummary>,
    /// The registered analyzers.
    pub analyzers: Vec<ModuleSummary>,
    /// The pipeline; empty in the summaries published while the run goes on.
    pub pipelines: Vec<ModuleSummary>,
}

/// The end-of-crawl report.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `stopped` at the end; `started` in the summaries published while the run goes on.
    pub status: Status,
    /// Why the run ended; while it goes on, the stop under way if any, else `drained`.
    pub stopped_by: StopCause,
    /// The start URLs (not the sitemaps).
    pub seeds: Vec<String>,
    /// How long this run took (so far, while it goes on), in seconds.
    pub elapsed_secs: f64,
    /// Responses received (any status), by this run and the runs it resumed.
    pub pages: u64,
    /// Responses received by this run.
    pub pages_this_run: u64,
    /// This run's pages per second.
    pub pages_per_sec: f64,
    /// Body bytes received, after decoding, by this run and the runs it resumed.
    pub bytes: u64,
    /// Items written (given to the outputs), by this run and the runs it resumed; while the
    /// run goes on, the items committed so far.
    pub items: u64,
    /// Responses by HTTP status, those retried included.
    pub by_status: BTreeMap<u16, u64>,
    /// Links not followed and requests not fetched, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// Errors by `stage:kind`.
    pub errors: BTreeMap<String, u64>,
    /// Failed calls of a spider's script hooks, by hook (each is also a `parser:script` error).
    pub script_errors: BTreeMap<String, u64>,
    /// Errors not delivered on the error stream because nobody read it fast enough.
    pub errors_dropped: u64,
    /// Fetches tried again, by this run and the runs it resumed.
    pub retries: u64,
    /// Requests that failed for good (after their retries).
    pub failed: u64,
    /// Requests done: answered with a page that is not retried (any status), by this run and
    /// the runs it resumed. With `failed`, every request that ended.
    pub done: u64,
    /// What stopped the crawl, when an error did (an output that could not be written).
    pub stop_error: Option<String>,
    /// Items this run could not confirm written because an output failed: all those since
    /// its last successful flush (with a durable state they are written when the crawl
    /// resumes).
    pub items_unwritten: u64,
    /// Items committed but not written because `max_items` was reached: a durable state keeps
    /// them for a resume with a higher limit; in memory they are gone.
    pub items_held: u64,
    /// The frontier at the end (what is left queued, leased, the hosts seen).
    pub frontier: FrontierStats,
    /// What the hosts came to, when the frontier counts them (at the end, and while watched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<kumo_frontier::HostFigures>,
    /// robots.txt fetches and what they came to, since the engine's `init`.
    pub robots: RobotsStats,
    /// URL shapes (digits as `#`, query values dropped) with so many pages fetched by this
    /// process that they may be spider traps (see `CrawlConfig::trap_warn_pages`), each with
    /// its pages.
    pub trap_warnings: BTreeMap<String, u64>,
    /// What this run found of the pages it asked for again (`--recrawl`), and how many pages
    /// were new.
    pub changes: Changes,
    /// This run's answers: how long their headers took to come.
    pub fetch_latency: crate::Histogram,
    /// This run's commits to the frontier: how long each took.
    pub commit_latency: crate::Histogram,
    /// How long this run could have fetched more but every host with queued work had to
    /// wait for politeness (its delay, a pause its server asked for, its rate limits, a
    /// retry's back-off), in seconds.
    pub politeness_wait_secs: f64,
    /// Bytes this run wrote to WARC files (`--warc`), after compression.
    pub warc_bytes: u64,
    /// The process's peak resident memory when the run ended, in bytes (0 where the system
    /// does not say: Linux's `/proc` does).
    pub peak_memory_bytes: u64,
    /// The downloaders, analyzers and pipeline, with their counters.
    pub modules: Modules,
    /// The buffers between the stages (`buffers.rs`): where a crawl's work waits.
    pub buffers: Vec<crate::BufferStats>,
    /// kumo's own resolver's figures, when the crawl resolves through it (`--dns-server`,
    /// `--resolve`); none with the system's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns: Option<kumo_downloader::DnsSnapshot>,
}

/// This process's peak resident memory so far, in bytes, where the system tells it (Linux).
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Pages by how they compare with the crawl's last fetch of them, this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Fetched for the first time (successfully).
    pub new: u64,
    /// Asked again and answered with another body.
    pub changed: u64,
    /// Asked again and answered `304`, or with the same body: not parsed, no items.
    pub unchanged: u64,
    /// Asked again and answered `404` or `410`.
    pub gone: u64,
    /// Body bytes the `304` answers did not send again.
    pub bytes_saved: u64,
}

impl Changes {
    pub(crate) fn count(&mut self, c: crate::stages::Change) {
        use crate::stages::Change;
        match c {
            Change::New => self.new += 1,
            Change::Changed => self.changed += 1,
            Change::Unchanged { saved } => {
                self.unchanged += 1;
                self.bytes_saved += saved;
            }
            Change::Gone => self.gone += 1,
        }
    }

    /// Whether any page was asked for again.
    pub fn revisited(&self) -> bool {
        self.changed + self.unchanged + self.gone > 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "crawl {} ({}) after {:.2}s: {} pages ({:.0}/s), {} items, {} bytes",
            self.status,
            self.stopped_by,
            self.elapsed_secs,
            self.pages,
            self.pages_per_sec,
            self.items,
            self.bytes
        )?;
        let statuses: Vec<String> = self.by_status.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        writeln!(f, "  by status: {}", if statuses.is_empty() { "-".into() } else { statuses.join(", ") })?;
        let skips: Vec<String> = self.skipped.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        writeln!(f, "  skipped:   {}", if skips.is_empty() { "-".into() } else { skips.join(", ") })?;
        let errs: Vec<String> = self.errors.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        writeln!(f, "  errors:    {}", if errs.is_empty() { "-".into() } else { errs.join(", ") })?;
        if !self.script_errors.is_empty() {
            let hooks: Vec<String> = self.script_errors.iter().map(|(h, n)| format!("{h}: {n}")).collect();
            writeln!(f, "  script errors by hook: {}", hooks.join(", "))?;
        }
        writeln!(
            f,
            "  retries: {}, failed: {}, left queued: {}, hosts: {}",
            self.retries, self.failed, self.frontier.queued, self.frontier.hosts
        )?;
        let (hosts, domains) = (self.frontier.hosts_over_budget, self.frontier.domains_over_budget);
        if hosts + domains > 0 {
            writeln!(
                f,
                "  budgets:   used up by {hosts} hosts and {domains} domains (links past them skipped as budget)"
            )?;
        }
        if let Some(h) = self.hosts.filter(|h| h.known > 1) {
            let addresses =
                if h.addresses > 0 { format!(", on {} addresses", h.addresses) } else { String::new() };
            writeln!(
                f,
                "  hosts:     {} known, {} with work left{addresses}; this run completed requests of {}, and all of {} failed",
                h.known, h.with_work, h.crawled, h.failed
            )?;
        }
        if self.items_held > 0 {
            writeln!(f, "  held back: {} items past the item limit, not written", self.items_held)?;
        }
        if let Some(e) = &self.stop_error {
            writeln!(f, "  stopped by: {e} ({} items not confirmed written)", self.items_unwritten)?;
        }
        let r = &self.robots;
        if r.fetched > 0 {
            writeln!(
                f,
                "  robots.txt: {} fetched, {} disallowed, {} unavailable, {} crawl-delays capped",
                r.fetched, r.disallowed, r.unavailable, r.crawl_delay_capped
            )?;
        }
        let c = &self.changes;
        if c.revisited() {
            writeln!(
                f,
                "  changes:   {} new, {} changed, {} unchanged ({} bytes not sent again), {} gone",
                c.new, c.changed, c.unchanged, c.bytes_saved, c.gone
            )?;
        }
        if self.warc_bytes > 0 {
            writeln!(f, "  warc:      {} bytes archived", self.warc_bytes)?;
        }
        for (shape, n) in &self.trap_warnings {
            writeln!(
                f,
                "  trap?:     {n} pages of {shape} (--deny 'GLOB', --max-depth or --max-path-segments stop it)"
            )?;
        }
        let all =
            self.modules.downloaders.iter().chain(&self.modules.analyzers).chain(&self.modules.pipelines);
        for m in all {
            writeln!(
                f,
                "  {:<4} called {} accepted {} completed {} handling {}",
                m.id.to_string(),
                m.counts.called,
                m.counts.accepted,
                m.counts.completed,
                m.counts.handling
            )?;
        }
        if !self.buffers.is_empty() {
            let b: Vec<String> = self
                .buffers
                .iter()
                .map(|b| format!("{} {}/{} (peak {}, {} in)", b.name, b.len, b.capacity, b.peak, b.total))
                .collect();
            writeln!(f, "  buffers:   {}", b.join(", "))?;
        }
        if let Some(d) = &self.dns {
            let f_ = &d.failures;
            writeln!(
                f,
                "  dns:       {} lookups, {} cached, {} joined, {} overridden, {} queries, {} failed \
                 (no such name {}, no address {}, timeout {}, server failure {})",
                d.lookups,
                d.cache_hits,
                d.joined,
                d.overridden,
                d.queries,
                f_.total(),
                f_.no_such_name,
                f_.no_address,
                f_.timeout,
                f_.server_failure
            )?;
        }
        Ok(())
    }
}
