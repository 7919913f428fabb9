//! Inspection and surgery on a stopped crawl's state (`kumo frontier …`, `kumo failures …`):
//! what is queued, the queue and the failures as JSON lines, requests added by hand, and
//! failures put back in the queue. Every change is one atomic write, like a crawl's commits.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use kumo_core::request::host_key;
use kumo_core::{CanonicalOptions, DedupMode, ErrorKind, Priority, Request, StoredRequest, Url};
use kumo_frontier::{
    Commit, FailureLine, HostView, PageRecord, PushReport, QueueLine, RequeueReport, Revisits,
};
use serde::{Deserialize, Serialize};

use crate::store::{COUNTERS, corrupt};
use crate::{EmbeddedConfig, EmbeddedStore, StateLock, StoreError, dir, keys};

/// What a state holds, for `kumo frontier stats`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueueStats {
    /// Queued requests (leases that were out when the crawl stopped are queued again).
    pub queued: usize,
    /// Hosts the crawl has met.
    pub hosts: usize,
    /// Hosts with queued requests.
    pub hosts_queued: usize,
    /// The hosts with the most queued requests, most first.
    pub top_hosts: Vec<HostCount>,
    /// Best priority first.
    pub by_priority: Vec<PriorityCount>,
    /// Shallowest first.
    pub by_depth: Vec<DepthCount>,
    /// Requests that failed for good.
    pub failures: usize,
    /// Those failures counted by error kind (its name).
    pub failures_by_kind: BTreeMap<String, usize>,
    /// Distinct requests ever queued (fingerprints in the seen set).
    pub seen: usize,
    /// Items committed but not yet confirmed written by the outputs.
    pub journal_pending: usize,
    /// Hosts their server asked to pause, longest pause first (`kumo frontier hosts` lists
    /// and lifts them).
    pub paused: Vec<PausedHost>,
    /// The crawl's saved counters (pages, items, …) as the engine wrote them.
    pub counters: Option<serde_json::Value>,
}

/// A host and how many requests it has queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCount {
    /// The host's key; `#ID` for a host id the state's host table lacks.
    pub host: String,
    /// Requests queued for it.
    pub queued: usize,
}

/// A host its server asked to pause, and for how long still.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PausedHost {
    /// The host's key.
    pub host: String,
    /// Seconds left, rounded up.
    pub secs: u64,
}

/// How many requests are queued at one priority.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriorityCount {
    /// A priority some queued request has.
    pub priority: Priority,
    /// Requests queued at it.
    pub queued: usize,
}

/// How many requests are queued at one link depth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DepthCount {
    /// A link depth (start URLs are depth 0).
    pub depth: u32,
    /// Requests queued at it.
    pub queued: usize,
}

/// Stats need only the depth of each queued request.
#[derive(Deserialize)]
struct DepthOnly {
    depth: u32,
}

fn output(e: impl Into<std::io::Error>) -> StoreError {
    StoreError::Output(e.into())
}

impl EmbeddedStore {
    /// Opens the state of an earlier crawl, refusing (and never creating) a directory that
    /// holds none.
    pub fn open_existing(path: &Path, cfg: EmbeddedConfig) -> Result<Self, StoreError> {
        // Looking for the marker reads no file, so it may come before the lock (which needs
        // the directory to exist); the open checks everything again once it is held.
        dir::require_existing(path)?;
        Self::open_locked(StateLock::acquire(path)?, cfg)
    }

    /// Counts what is queued, keeping the `top` busiest hosts.
    pub fn queue_stats(&self, top: usize) -> Result<QueueStats, StoreError> {
        let inner = self.lock();
        let mut per_host: HashMap<u32, usize> = HashMap::new();
        let mut by_priority: BTreeMap<std::cmp::Reverse<Priority>, usize> = BTreeMap::new();
        let mut by_depth: BTreeMap<u32, usize> = BTreeMap::new();
        let mut queued = 0;
        for kv in self.sp.queue.iter() {
            let (k, v) = kv?;
            let (host, priority, seq) = keys::parse_queue(&k)
                .ok_or_else(|| corrupt(&self.dir, "a queue key has the wrong length"))?;
            let d: DepthOnly = serde_json::from_slice(&v)
                .map_err(|e| corrupt(&self.dir, format!("queued request {seq}: {e}")))?;
            queued += 1;
            *per_host.entry(host).or_default() += 1;
            *by_priority.entry(std::cmp::Reverse(priority)).or_default() += 1;
            *by_depth.entry(d.depth).or_default() += 1;
        }
        let hosts_queued = per_host.len();
        let mut top_hosts: Vec<(u32, usize)> = per_host.into_iter().collect();
        // Most first; ties in host order, so the output is stable.
        top_hosts.sort_unstable_by_key(|&(h, n)| (std::cmp::Reverse(n), h));
        top_hosts.truncate(top);
        let top_hosts = top_hosts
            .into_iter()
            .map(|(h, queued)| {
                let host = (h as usize) < inner.table.hosts();
                let host = if host { inner.table.host_key(h as usize).to_string() } else { format!("#{h}") };
                HostCount { host, queued }
            })
            .collect();
        let mut failures_by_kind = BTreeMap::new();
        let failures = self.stored_failures()?;
        for (_, f) in &failures {
            *failures_by_kind.entry(f.record.kind.as_str().to_string()).or_default() += 1;
        }
        let counters = self.sp.meta.get(COUNTERS)?.and_then(|v| serde_json::from_slice(&v).ok());
        let mut paused: Vec<PausedHost> = inner
            .table
            .host_views(Instant::now())
            .into_iter()
            .filter_map(|h| {
                let left = h.paused_for?;
                Some(PausedHost {
                    host: h.key.to_string(),
                    secs: left.as_secs() + u64::from(left.subsec_nanos() > 0),
                })
            })
            .collect();
        paused.sort_unstable_by(|a, b| b.secs.cmp(&a.secs).then_with(|| a.host.cmp(&b.host)));
        Ok(QueueStats {
            queued,
            hosts: inner.table.hosts(),
            hosts_queued,
            top_hosts,
            by_priority: by_priority
                .into_iter()
                .map(|(p, queued)| PriorityCount { priority: p.0, queued })
                .collect(),
            by_depth: by_depth.into_iter().map(|(depth, queued)| DepthCount { depth, queued }).collect(),
            failures: failures.len(),
            failures_by_kind,
            seen: inner.seen.len(),
            journal_pending: (inner.items.end().last_seq - crate::journal::consumed_upto(&self.sp)?) as usize,
            paused,
            counters,
        })
    }

    /// Every host of the state, with its queue, delay, pause and requests backing off.
    pub fn host_views(&self) -> Vec<HostView> {
        self.lock().table.host_views(Instant::now())
    }

    /// Writes every queued request as one JSON line, in queue order (host by host, best
    /// priority first, first come first). Returns how many.
    pub fn export_queue(&self, out: &mut dyn Write) -> Result<usize, StoreError> {
        let inner = self.lock();
        let mut n = 0;
        for kv in self.sp.queue.iter() {
            let (k, v) = kv?;
            let (host, _, seq) = keys::parse_queue(&k)
                .ok_or_else(|| corrupt(&self.dir, "a queue key has the wrong length"))?;
            let request: StoredRequest = serde_json::from_slice(&v)
                .map_err(|e| corrupt(&self.dir, format!("queued request {seq}: {e}")))?;
            if host as usize >= inner.table.hosts() {
                return Err(corrupt(&self.dir, format!("queued request {seq} names unknown host {host}")));
            }
            let line = QueueLine { request: &request, host: inner.table.host_key(host as usize), seq };
            serde_json::to_writer(&mut *out, &line).map_err(output)?;
            out.write_all(b"\n").map_err(output)?;
            n += 1;
        }
        out.flush().map_err(output)?;
        Ok(n)
    }

    /// Queues `requests` as a crawl would: fingerprinted (strict, default canonical form) and
    /// seen-checked, in one atomic write.
    pub fn import(&self, requests: Vec<Request>) -> Result<PushReport, StoreError> {
        let opts = CanonicalOptions::default();
        let pushes = requests.into_iter().map(|r| (r.fingerprint(&opts, DedupMode::Strict), r)).collect();
        Ok(self.apply(Commit { pushes, ..Default::default() })?.pushed)
    }

    /// Writes every failure as one JSON line (`seq`, `record`, `request`), oldest first.
    pub fn export_failures(&self, out: &mut dyn Write) -> Result<usize, StoreError> {
        let failures = self.stored_failures()?;
        for (seq, failure) in &failures {
            serde_json::to_writer(&mut *out, &FailureLine { seq: *seq, failure }).map_err(output)?;
            out.write_all(b"\n").map_err(output)?;
        }
        out.flush().map_err(output)?;
        Ok(failures.len())
    }

    /// Moves the failures of `kinds` (all if empty) back to the queue with their retry count
    /// reset, in one atomic write. Their fingerprints are seen already, so no seen check.
    pub fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, StoreError> {
        let now = Instant::now();
        let mut b = self.batch();
        let mut inner = self.lock();
        let inner = &mut *inner;
        let mut report = RequeueReport::default();
        for (seq, f) in self.stored_failures()? {
            if !kinds.is_empty() && !kinds.contains(&f.record.kind) {
                continue;
            }
            let Ok(url) = Url::parse(&f.request.url) else {
                report.invalid += 1;
                continue;
            };
            let mut request = f.request;
            request.retries = 0;
            request.not_before_ms = None;
            self.sp.failures.remove(&mut b, &keys::seq(seq)[..]);
            Self::enqueue_unchecked(&self.sp, inner, &mut b, &host_key(&url), request, now)?;
            report.requeued += 1;
        }
        if report.requeued > 0 {
            self.uncount_failures(&mut b, report.requeued)?;
            b.commit()?;
            inner.failures -= report.requeued;
        }
        report.remaining = inner.failures;
        Ok(report)
    }

    /// Queues every page an earlier run fetched again, past the seen set, in one atomic
    /// write (`kumo crawl --recrawl`): each asks with the validators its last answer carried,
    /// and knows the hash of the body it had, so an unchanged page costs a `304` and no
    /// parsing. Only pages due at `now_ms` (ms since the Unix epoch) by their re-visit
    /// intervals are queued; without validators unless `conditional` (an answer is then always
    /// a body, for a crawl that writes unchanged pages' items again). The saved counters go:
    /// the new round's summary counts only its own work.
    pub fn revisit_pages(&self, now_ms: u64, conditional: bool) -> Result<Revisits, StoreError> {
        let now = Instant::now();
        let mut b = self.batch();
        let mut inner = self.lock();
        let inner = &mut *inner;
        let mut report = Revisits::default();
        for page in self.page_records() {
            let page = page?;
            if !page.due(now_ms) {
                report.wait_for(&page);
                continue;
            }
            let Ok(url) = Url::parse(&page.request.url) else { continue };
            let request = page.revisit_request(conditional);
            Self::enqueue_unchecked(&self.sp, inner, &mut b, &host_key(&url), request, now)?;
            report.queued += 1;
        }
        // A new round, even one with nothing due: its summary counts its own pages, not every
        // round's so far.
        self.new_round_counters(&mut b)?;
        b.commit()?;
        Ok(report)
    }

    /// Clears the saved counters for a new round but for what outlives a round: where the
    /// WARC archive ends (`warc`), which the next round's files go on from. The counters are
    /// the engine's, opaque here but for this field.
    fn new_round_counters(&self, b: &mut fjall::OwnedWriteBatch) -> Result<(), StoreError> {
        match kumo_frontier::round_counters(self.sp.meta.get(COUNTERS)?.as_deref()) {
            Some(kept) => self.sp.meta.insert(b, COUNTERS, kept),
            None => self.sp.meta.remove(b, COUNTERS),
        }
        Ok(())
    }

    /// Calls `f` with each kept page's record (`--recrawl`, `kumo run`), by URL, until it
    /// returns false. Returns how many it was called with.
    pub fn for_each_page(&self, mut f: impl FnMut(PageRecord) -> bool) -> Result<usize, StoreError> {
        let mut n = 0;
        for page in self.page_records() {
            n += 1;
            if !f(page?) {
                break;
            }
        }
        Ok(n)
    }

    /// The kept pages' records, by URL; one that does not decode is damage.
    fn page_records(&self) -> impl Iterator<Item = Result<PageRecord, StoreError>> + '_ {
        self.sp.pages.iter().map(|kv| {
            let (_, value) = kv?;
            serde_json::from_slice(&value).map_err(|_| corrupt(self.dir(), "a page record is not JSON"))
        })
    }

    /// Takes `n` off the saved `failed` counter: those requests are work again, and the next
    /// run counts them as pages or failures anew. The counters are the engine's, opaque
    /// here but for this one number; anything else is left as it is.
    fn uncount_failures(&self, b: &mut fjall::OwnedWriteBatch, n: usize) -> Result<(), StoreError> {
        let Some(bytes) = self.sp.meta.get(COUNTERS)? else {
            return Ok(());
        };
        let Ok(mut counters) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            return Ok(());
        };
        if let Some(failed) = counters.get_mut("failed")
            && let Some(was) = failed.as_u64()
        {
            *failed = was.saturating_sub(n as u64).into();
            self.sp.meta.insert(b, COUNTERS, serde_json::to_vec(&counters)?);
        }
        Ok(())
    }
}
