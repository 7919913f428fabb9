//! The [`Frontier`] on Redis: every operation is one call of the frontier script, so the
//! queues, leases, politeness and seen set of a crawl are shared by all its workers.
//!
//! What stays in the worker: the requests of its own leases (a retry sends the request back
//! with its count raised, a failure with its record), its slots of each host and the
//! requests it leased ahead (`reserve.rs`), what it gives back (rides on its next call), and
//! the fingerprints it has already sent (a link it sent before is seen everywhere, so it
//! costs no round trip again).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use kumo_core::{ErrorKind, Fingerprint, Request, StoredRequest};
use kumo_frontier::{
    Commit, CommitReport, Completion, ExactSeenSet, FailureRecord, Frontier, FrontierError, FrontierStats,
    HostAdjustment, HostView, Lease, LeaseId, LiftedPause, PushReport, Readiness, StoredFailure,
};
use redis::Value;
use tokio::task::JoinHandle;

use crate::call::{Args, Conn, Script, array, bytes, int, text};
use crate::config::{millis, policy_index, policy_specs};
use crate::reserve::Slots;
use crate::{RedisConfig, RedisStoreError, heartbeat};

/// How often a worker with nothing to do asks again: other workers may queue work meanwhile
/// (or hold leases that may bring some), and a pause may be lifted from outside.
const POLL: Duration = Duration::from_millis(100);

/// A readiness learned with a lease call is reused by a `readiness` call right after it.
const READINESS_FRESH: Duration = Duration::from_millis(2);

/// Requests a worker may hold per slot of an unpaced host: one runs, the others wait in its
/// reserve. With eight, a host's 8 slots cost about one lease call per 32 of its pages; more
/// would only make a dead worker's reserve larger (it goes back with its leases).
const DEPTH: u32 = 8;

/// Leases one lease call may hand out (the reserve's depth bounds each host's share).
const REFILL: usize = 128;

/// The shared frontier of one crawl, as seen by one worker process.
pub struct RedisFrontier {
    pub(crate) cfg: RedisConfig,
    pub(crate) conn: Conn,
    pub(crate) script: Arc<Script>,
    /// This process's incarnation: lease ids and commit sequence numbers are its own.
    pub(crate) inc: String,
    /// One call at a time: commit numbers and lease ids are handed out in order.
    local: tokio::sync::Mutex<Local>,
    pending: Mutex<Pending>,
    /// This worker's slots and reserve, per host.
    slots: Mutex<Slots>,
    superseded: Arc<AtomicBool>,
    /// None for an inspecting handle (`inspect`), which is no worker.
    heartbeat: Option<JoinHandle<()>>,
    /// This worker's output checkpoints, folded (see `journal.rs`).
    pub(crate) folded: Mutex<crate::journal::Folded>,
}

impl std::fmt::Debug for RedisFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFrontier")
            .field("url", &self.conn.url())
            .field("crawl", &self.cfg.crawl)
            .field("worker", &self.cfg.worker)
            .field("incarnation", &self.inc)
            .finish()
    }
}

impl Local {
    fn new() -> Self {
        Local {
            next_lease: 1,
            seq: 0,
            leases: HashMap::new(),
            sent: ExactSeenSet::new(),
            readiness: None,
            next_ask: None,
            epoch: None,
            check_hosts: false,
        }
    }
}

struct Local {
    next_lease: u64,
    seq: u64,
    /// The requests of this worker's leases, by lease id.
    leases: HashMap<u64, StoredRequest>,
    /// Fingerprints this worker has sent to Redis: seen there for good.
    sent: ExactSeenSet,
    readiness: Option<(Instant, Readiness)>,
    /// Before this, Redis has no lease for this worker (as its last answer said); none: ask.
    next_ask: Option<Instant>,
    /// The crawl's politeness epoch as last seen: when it moves, a host may have been paused
    /// or slowed, and the next lease call asks which of this worker's hosts.
    epoch: Option<i64>,
    check_hosts: bool,
}

impl Local {
    /// What Redis said about leasing may be out of date: ask it next time.
    fn forget_readiness(&mut self) {
        self.readiness = None;
        self.next_ask = None;
    }

    fn saw_epoch(&mut self, pe: i64) {
        if self.epoch.is_some_and(|e| e != pe) {
            self.check_hosts = true;
        }
        self.epoch = Some(pe);
    }
}

#[derive(Default)]
struct Pending {
    adjustments: Vec<(String, HostAdjustment)>,
    /// The last commit's counters: they need its answer, so they ride on the next call.
    counters: Option<Vec<u8>>,
}

impl Drop for RedisFrontier {
    fn drop(&mut self) {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
    }
}

impl RedisFrontier {
    /// Joins (or starts) the crawl: refuses a Redis that may evict keys and a crawl started
    /// with another configuration, takes over the leases of this worker's previous process,
    /// and starts heartbeating.
    pub async fn open(cfg: RedisConfig) -> Result<Self, RedisStoreError> {
        let conn = Conn::open(&cfg.url, cfg.prefix(), cfg.outage_wait).await?;
        check_eviction(&conn).await?;
        let script = Arc::new(Script::frontier());
        let inc = format!("{:016x}", fastrand::u64(..));
        let mut args = Args::bare("register", &inc);
        args.s(&cfg.worker).s(&cfg.config_id).n(millis(cfg.dead_after));
        let specs = policy_specs(&cfg.politeness);
        args.n(specs.len());
        for s in &specs {
            args.s(s);
        }
        let old = text(conn.call(&script, &args).await?)?;
        if !old.is_empty() {
            tracing::info!(worker = %cfg.worker, previous = %old, "took over the worker's previous process");
        }
        let superseded = Arc::new(AtomicBool::new(false));
        let heartbeat = heartbeat::spawn(&cfg, &inc, script.clone(), superseded.clone()).await?;
        Ok(RedisFrontier {
            conn,
            script,
            local: tokio::sync::Mutex::new(Local::new()),
            pending: Mutex::new(Pending::default()),
            slots: Mutex::default(),
            folded: Mutex::default(),
            superseded,
            heartbeat: Some(heartbeat),
            inc,
            cfg,
        })
    }

    /// A handle on the crawl `crawl` for looking at it (`kumo frontier hosts`, `kumo failures
    /// list`) and lifting pauses, without joining it as a worker: no lease, no commit.
    pub async fn inspect(url: &str, crawl: &str) -> Result<Self, RedisStoreError> {
        let cfg = RedisConfig::new(url, crawl, "");
        let conn = Conn::open(url, cfg.prefix(), Duration::from_secs(10)).await?;
        let mut exists = redis::cmd("EXISTS");
        exists.arg(format!("{}meta", cfg.prefix()));
        if int(&conn.command(&exists).await?)? == 0 {
            return Err(RedisStoreError::NoCrawl { url: url.to_string(), crawl: crawl.to_string() });
        }
        Ok(RedisFrontier {
            conn,
            script: Arc::new(Script::frontier()),
            local: tokio::sync::Mutex::new(Local::new()),
            pending: Mutex::new(Pending::default()),
            slots: Mutex::default(),
            folded: Mutex::default(),
            superseded: Arc::new(AtomicBool::new(false)),
            heartbeat: None,
            inc: "inspect".to_string(),
            cfg,
        })
    }

    /// Deletes every key of the crawl `crawl` (`--fresh`); refused while a worker of the crawl
    /// is alive (its liveness deadline has not passed).
    pub async fn forget(url: &str, crawl: &str) -> Result<u64, RedisStoreError> {
        let prefix = RedisConfig::new(url, crawl, "").prefix();
        let conn = Conn::open(url, prefix.clone(), Duration::from_secs(10)).await?;
        let time = array(conn.command(&redis::cmd("TIME")).await?)?;
        let now_ms = time.first().map(int).transpose()?.unwrap_or(0) * 1000;
        let mut alive = redis::cmd("ZCOUNT");
        alive.arg(format!("{prefix}alive")).arg(now_ms).arg("+inf");
        let workers = u64::try_from(int(&conn.command(&alive).await?)?).unwrap_or(0);
        if workers > 0 {
            return Err(RedisStoreError::InUse { crawl: crawl.to_string(), workers });
        }
        let pattern = format!("{}*", glob_escape(&prefix));
        let mut cursor = 0u64;
        let mut deleted = 0u64;
        // Bounded: SCAN ends when its cursor comes back to 0.
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor).arg("MATCH").arg(&pattern).arg("COUNT").arg(1000);
            let mut reply = array(conn.command(&scan).await?)?.into_iter();
            let (Some(next), Some(keys)) = (reply.next(), reply.next()) else {
                return Err(RedisStoreError::Protocol("SCAN reply".into()));
            };
            cursor = text(next)?.parse().map_err(|_| RedisStoreError::Protocol("SCAN cursor".into()))?;
            let keys = array(keys)?;
            if !keys.is_empty() {
                let mut del = redis::cmd("UNLINK");
                for k in keys {
                    del.arg(bytes(k)?);
                }
                deleted += u64::try_from(int(&conn.command(&del).await?)?).unwrap_or(0);
            }
            if cursor == 0 {
                return Ok(deleted);
            }
        }
    }

    /// Leaves the crawl at the end of a run: whatever this worker still holds goes back to
    /// the queue at once, and it no longer counts as alive (so `--fresh` may clear the crawl).
    pub async fn leave(&self) -> Result<(), RedisStoreError> {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
        let mut a = self.args("leave");
        a.s(&self.cfg.worker);
        self.call(&a).await.map(drop)
    }

    pub fn config(&self) -> &RedisConfig {
        &self.cfg
    }

    /// This process's incarnation id: the member of the crawl's `alive` set its heartbeat
    /// refreshes, and the prefix of its lease ids (for tests and diagnostics).
    pub fn incarnation(&self) -> &str {
        &self.inc
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn slots(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lease_key(&self, id: u64) -> String {
        format!("{}:{id}", self.inc)
    }

    /// A call's arguments: the op, the incarnation, and what this worker has to tell since
    /// its last call: slots it gave up, reserved requests it hands back, host adjustments.
    pub(crate) fn args(&self, op: &str) -> Args {
        let mut a = Args::new(op, &self.inc);
        let (held, give_back) = self.slots().prelude();
        a.n(held.len());
        for (host, n) in held {
            a.s(&host).n(n);
        }
        a.n(give_back.len());
        for id in give_back {
            a.s(&self.lease_key(id));
        }
        let Pending { adjustments, counters } = std::mem::take(&mut *self.pending());
        a.n(adjustments.len());
        for (host, adj) in adjustments {
            a.s(&host).n(policy_index(&self.cfg.politeness, &host));
            a.opt(adj.min_delay.map(millis)).opt(adj.pause.map(millis)).opt(adj.learned_delay.map(millis));
        }
        match counters {
            Some(c) => a.n(1).s(&self.cfg.worker).b(&c),
            None => a.n(0),
        };
        a
    }

    /// A process another took over must stop: nothing more from Redis, nor from its reserve.
    fn still_in_the_crawl(&self) -> Result<(), RedisStoreError> {
        if self.superseded.load(Ordering::Relaxed) {
            return Err(RedisStoreError::Superseded(format!(
                "worker {} is no longer in the crawl",
                self.cfg.worker
            )));
        }
        Ok(())
    }

    pub(crate) async fn call(&self, args: &Args) -> Result<Value, RedisStoreError> {
        self.still_in_the_crawl()?;
        let r = self.conn.call(&self.script, args).await;
        if let Err(RedisStoreError::Superseded(_)) = &r {
            self.superseded.store(true, Ordering::Relaxed);
        }
        r
    }

    /// Adds a request as the script reads one: fingerprint, host, its rule, level, JSON.
    pub(crate) fn request_args(
        &self,
        a: &mut Args,
        fp: Fingerprint,
        req: &Request,
    ) -> Result<(), RedisStoreError> {
        let host = req.host_key();
        let json = serde_json::to_vec(&StoredRequest::from(req))?;
        a.b(&fp.to_bytes()).s(&host).n(policy_index(&self.cfg.politeness, &host)).n(req.priority).b(&json);
        Ok(())
    }

    /// Sends one commit; returns its report and the stale lease ids.
    async fn commit_inner(&self, c: Commit) -> Result<(CommitReport, Vec<u64>), RedisStoreError> {
        let mut local = self.local.lock().await;
        local.readiness = None;
        let mut a = self.args("commit");
        local.seq += 1;
        a.n(local.seq).s(&self.cfg.worker);
        let mut known = 0usize;
        let mut sent = Vec::new();
        let pushes: Vec<_> = c.pushes.iter().filter(|(fp, _)| !local.sent.contains(*fp)).collect();
        known += c.pushes.len() - pushes.len();
        a.n(pushes.len());
        for (fp, req) in pushes {
            self.request_args(&mut a, *fp, req)?;
            sent.push(*fp);
        }
        a.n(c.completions.len());
        let mut ended = Vec::with_capacity(c.completions.len());
        for completion in &c.completions {
            match completion {
                Completion::Done { lease, discovered } => {
                    a.s("D").s(&self.lease_key(lease.0));
                    let new: Vec<_> = discovered.iter().filter(|(fp, _)| !local.sent.contains(*fp)).collect();
                    known += discovered.len() - new.len();
                    a.n(new.len());
                    for (fp, req) in new {
                        self.request_args(&mut a, *fp, req)?;
                        sent.push(*fp);
                    }
                    ended.push(lease.0);
                }
                Completion::Retry { lease, after } => {
                    let json = match local.leases.get(&lease.0) {
                        Some(r) => {
                            let mut r = r.clone();
                            r.retries = r.retries.saturating_add(1);
                            serde_json::to_vec(&r)?
                        }
                        None => Vec::new(),
                    };
                    a.s("R").s(&self.lease_key(lease.0)).n(millis(*after)).b(&json);
                    ended.push(lease.0);
                }
                Completion::Defer { lease, after } => {
                    a.s("E").s(&self.lease_key(lease.0)).n(millis(*after));
                    ended.push(lease.0);
                }
                Completion::Failed { lease, failure } => {
                    let json = match local.leases.get(&lease.0) {
                        Some(r) => serde_json::to_vec(&StoredFailure {
                            record: failure.clone(),
                            request: r.clone(),
                        })?,
                        None => Vec::new(),
                    };
                    a.s("F").s(&self.lease_key(lease.0)).b(&json);
                    ended.push(lease.0);
                }
            }
        }
        // Items by the lease of their page, so the script drops those of a stale page.
        let mut sources = Vec::with_capacity(c.items.len());
        for &(lease, n) in &c.item_sources {
            sources.extend(std::iter::repeat_n(Some(lease.0), n));
        }
        a.n(c.items.len());
        let mut encoded = Vec::with_capacity(c.items.len());
        for (i, item) in c.items.iter().enumerate() {
            let key = sources.get(i).copied().flatten().map(|id| self.lease_key(id)).unwrap_or_default();
            let json = serde_json::to_vec(item)?;
            a.s(&key).b(&json);
            encoded.push(key);
        }
        let reply = array(self.call(&a).await?)?;
        if reply.len() < 11 {
            return Err(RedisStoreError::Protocol(format!("commit reply {reply:?}")));
        }
        let n = |i: usize| int(&reply[i]).map(|v| usize::try_from(v).unwrap_or(0));
        let (added, seen) = (n(0)?, n(1)? + known);
        let upto = int(&reply[3])?;
        let stats =
            self.as_seen_here(FrontierStats { queued: n(4)?, leased: n(5)?, hosts: n(6)?, failed: n(7)? });
        local.saw_epoch(int(&reply[8])?);
        let wait = u64::try_from(int(&reply[10])?).unwrap_or(0);
        local.next_ask = match int(&reply[9])? {
            0 => None,
            1 => Some(
                kumo_frontier::later(Instant::now(), Duration::from_millis(wait)).min(Instant::now() + POLL),
            ),
            // No host is ready: the work this commit queued waits for slots (this worker's
            // reserve and its running pages), so nothing changes for it before the poll.
            _ => local.next_ask,
        };
        let stale_keys: Vec<String> = reply.into_iter().skip(11).map(text).collect::<Result<_, _>>()?;
        for fp in sent {
            local.sent.insert(fp);
        }
        {
            let mut slots = self.slots();
            for id in &ended {
                local.leases.remove(id);
                slots.end(*id);
            }
        }
        self.forget_given_back(&mut local);
        let stale: Vec<u64> =
            stale_keys.iter().filter_map(|k| k.rsplit_once(':').and_then(|(_, n)| n.parse().ok())).collect();
        let items = if stale_keys.is_empty() {
            c.items
        } else {
            c.items
                .into_iter()
                .zip(encoded)
                .filter(|(_, k)| k.is_empty() || !stale_keys.contains(k))
                .map(|(i, _)| i)
                .collect()
        };
        let pushed = PushReport { added, seen };
        drop(local);
        if let Some(counters) = c.counters {
            // Saved with the next call: they are counters, not work, so a kill before it costs
            // at most one commit's counts in a resumed summary.
            self.pending().counters = Some(counters(&pushed));
        }
        let report = CommitReport {
            pushed,
            stale: stale.len(),
            journaled_to: u64::try_from(upto).ok(),
            items,
            stats: Some(stats),
        };
        Ok((report, stale))
    }

    async fn lease_inner(&self, max: usize) -> Result<Vec<Lease>, RedisStoreError> {
        self.still_in_the_crawl()?;
        let mut local = self.local.lock().await;
        let ttl = self.cfg.lease_ttl;
        let mut leases = Vec::new();
        if !local.check_hosts {
            leases = self.slots().start(max, ttl);
        }
        let redis_may_have = local.next_ask.is_none_or(|t| Instant::now() >= t);
        let ask = max > 0
            && (local.check_hosts
                || (leases.len() < max && redis_may_have)
                || self.slots().running_low(DEPTH));
        if !ask {
            self.forget_given_back(&mut local);
            return Ok(leases);
        }
        let base = local.next_lease;
        let check = std::mem::take(&mut local.check_hosts);
        let mut a = self.args("lease");
        a.s(&self.cfg.worker).n(max.max(REFILL)).n(base).n(millis(self.cfg.lease_ttl));
        a.n(fastrand::u32(..1 << 31)).n(DEPTH).n(u8::from(check));
        let reply = array(self.call(&a).await?)?;
        let mut reply = reply.into_iter();
        let mut next_int = || reply.next().map(|v| int(&v)).transpose();
        let code = next_int()?.unwrap_or(3);
        let ms = next_int()?.unwrap_or(0);
        let pe = next_int()?.unwrap_or(0);
        let n = usize::try_from(next_int()?.unwrap_or(0)).unwrap_or(0);
        let readiness = readiness_of(code, ms);
        local.readiness = Some((Instant::now(), readiness));
        local.next_ask = next_ask(readiness);
        local.saw_epoch(pe);
        let mut invalid = Vec::new();
        let mut got = Vec::with_capacity(n);
        for (i, v) in reply.by_ref().take(n).enumerate() {
            let id = base + i as u64;
            local.next_lease = id + 1;
            let json = bytes(v)?;
            let stored: StoredRequest = match serde_json::from_slice(&json) {
                Ok(s) => s,
                Err(e) => {
                    invalid.push((id, e.to_string(), None));
                    continue;
                }
            };
            match stored.to_request() {
                Ok(request) => {
                    local.leases.insert(id, stored);
                    got.push((id, request));
                }
                Err(e) => {
                    invalid.push((id, e.to_string(), Some(stored.clone())));
                    local.leases.insert(id, stored);
                }
            }
        }
        let holdings = usize::try_from(reply.next().map(|v| int(&v)).transpose()?.unwrap_or(0)).unwrap_or(0);
        let mut held = Vec::with_capacity(holdings);
        for _ in 0..holdings {
            let (Some(host), Some(n)) = (reply.next(), reply.next()) else {
                return Err(RedisStoreError::Protocol("lease reply holdings".into()));
            };
            held.push((text(host)?, u32::try_from(int(&n)?).unwrap_or(0)));
        }
        {
            let mut slots = self.slots();
            // What is left: the hosts a moved politeness epoch touched (`check`), as they were
            // before this call; what it handed out is already decided by their new politeness.
            for host in reply {
                slots.drop_host(&text(host)?);
            }
            for (id, request) in got {
                let host = request.host_key();
                slots.reserve(id, &host, request);
            }
            for (host, n) in held {
                slots.set_held(&host, n);
            }
            leases.extend(slots.start(max - leases.len(), ttl));
        }
        self.forget_given_back(&mut local);
        drop(local);
        if !invalid.is_empty() {
            // A request that cannot be rebuilt fails at once, as in the other backends.
            let completions = invalid
                .into_iter()
                .map(|(id, message, stored)| Completion::Failed {
                    lease: LeaseId(id),
                    failure: FailureRecord {
                        url: stored.as_ref().map(|s| s.url.to_string()).unwrap_or_default(),
                        kind: ErrorKind::InvalidUrl,
                        message,
                        attempts: stored.map_or(0, |s| s.retries),
                        last_status: None,
                        at: SystemTime::now(),
                    },
                })
                .collect();
            self.commit_inner(Commit { completions, ..Default::default() }).await?;
        }
        Ok(leases)
    }

    /// The crawl's counts as this worker's engine sees them: its reserve is leased in Redis
    /// but not started, so it counts as queued.
    fn as_seen_here(&self, mut stats: FrontierStats) -> FrontierStats {
        let reserved = self.slots().reserved().min(stats.leased);
        stats.leased -= reserved;
        stats.queued += reserved;
        stats
    }

    /// Drops the stored requests of reserved leases handed back: they are no longer ours.
    fn forget_given_back(&self, local: &mut Local) {
        for id in self.slots().take_forgotten() {
            local.leases.remove(&id);
        }
    }
}

/// When to ask Redis for leases again after it answered `r`: at once if it has some now,
/// else when it said, or at the next poll (other workers may queue work meanwhile).
fn next_ask(r: Readiness) -> Option<Instant> {
    match r {
        Readiness::Now => None,
        Readiness::At(t) => Some(t.min(Instant::now() + POLL)),
        Readiness::Blocked | Readiness::Empty => Some(Instant::now() + POLL),
    }
}

fn readiness_of(code: i64, ms: i64) -> Readiness {
    let ms = u64::try_from(ms).unwrap_or(0);
    match code {
        0 => Readiness::Now,
        1 => Readiness::At(kumo_frontier::later(Instant::now(), Duration::from_millis(ms))),
        2 => Readiness::Blocked,
        3 => Readiness::Empty,
        // Others hold leases that may bring work: look again soon.
        _ => Readiness::At(Instant::now() + POLL),
    }
}

/// `*`, `?`, `[` and `\` in a crawl name must not widen a SCAN pattern.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Refuses a Redis that may evict keys (a crawl there could lose queued work or its seen
/// set without a word); says so and goes on where CONFIG is not allowed.
async fn check_eviction(conn: &Conn) -> Result<(), RedisStoreError> {
    let mut cmd = redis::cmd("CONFIG");
    cmd.arg("GET").arg("maxmemory-policy");
    match conn.command(&cmd).await {
        Ok(v) => {
            let policy = array(v)?.into_iter().nth(1).map(text).transpose()?.unwrap_or_default();
            if policy.is_empty() || policy == "noeviction" {
                Ok(())
            } else {
                Err(RedisStoreError::Evicting { url: conn.url().to_string(), policy })
            }
        }
        Err(RedisStoreError::Redis(e)) => {
            tracing::warn!(error = %e, "cannot read maxmemory-policy; make sure it is noeviction");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn storage(e: RedisStoreError) -> FrontierError {
    e.into()
}

#[async_trait]
impl Frontier for RedisFrontier {
    async fn push(&self, requests: Vec<(Fingerprint, Request)>) -> Result<PushReport, FrontierError> {
        let (report, _) = self.commit_inner(Commit { pushes: requests, ..Default::default() }).await?;
        Ok(report.pushed)
    }

    async fn lease(&self, max: usize) -> Result<Vec<Lease>, FrontierError> {
        self.lease_inner(max).await.map_err(storage)
    }

    async fn release(&self, leases: &[LeaseId]) -> Result<(), FrontierError> {
        let mut slots = self.slots();
        for l in leases {
            slots.release(l.0);
        }
        Ok(())
    }

    async fn complete(&self, batch: Vec<Completion>) -> Result<PushReport, FrontierError> {
        let (report, stale) = self.commit_inner(Commit { completions: batch, ..Default::default() }).await?;
        match stale.first() {
            Some(&id) => Err(FrontierError::UnknownLease(id)),
            None => Ok(report.pushed),
        }
    }

    async fn commit(&self, c: Commit) -> Result<CommitReport, FrontierError> {
        Ok(self.commit_inner(c).await?.0)
    }

    async fn readiness(&self) -> Result<Readiness, FrontierError> {
        if let Some(r) = self.slots().readiness() {
            return Ok(r);
        }
        {
            let mut local = self.local.lock().await;
            let nothing_pending = self.pending().adjustments.is_empty();
            if let Some((at, r)) = local.readiness.take()
                && nothing_pending
                && at.elapsed() < READINESS_FRESH
            {
                return Ok(r);
            }
        }
        let mut a = self.args("lease");
        a.s(&self.cfg.worker).n(0).n(0).n(0).n(0).n(DEPTH).n(0);
        let reply = array(self.call(&a).await.map_err(storage)?).map_err(storage)?;
        let code = reply.first().map(int).transpose().map_err(storage)?.unwrap_or(3);
        let ms = reply.get(1).map(int).transpose().map_err(storage)?.unwrap_or(0);
        let readiness = readiness_of(code, ms);
        let mut local = self.local.lock().await;
        if let Some(pe) = reply.get(2).map(int).transpose().map_err(storage)? {
            local.saw_epoch(pe);
        }
        local.next_ask = next_ask(readiness);
        Ok(readiness)
    }

    async fn adjust_host(&self, host_key: &str, adjustment: HostAdjustment) -> Result<(), FrontierError> {
        // Sent at once, not buffered like releases: what the crawl learned about a host must
        // outlive this process even if it stops right after.
        let mut local = self.local.lock().await;
        local.forget_readiness();
        // What this worker reserved there goes back: Redis decides again what may be fetched.
        self.slots().drop_host(host_key);
        self.forget_given_back(&mut local);
        self.pending().adjustments.push((host_key.to_string(), adjustment));
        self.call(&self.args("sync")).await?;
        Ok(())
    }

    async fn learned_delays(&self) -> Result<Vec<(String, Duration)>, FrontierError> {
        let reply = array(self.call(&self.args("learned")).await?)?;
        pairs(reply, |host, v| Ok((host, Duration::from_millis(u64::try_from(int(&v)?).unwrap_or(0)))))
            .map_err(storage)
    }

    async fn cap_pauses(
        &self,
        hosts: Option<&[&str]>,
        max: Duration,
    ) -> Result<Vec<LiftedPause>, FrontierError> {
        if hosts.is_some_and(|h| h.is_empty()) {
            return Ok(Vec::new());
        }
        // A lifted pause may make work leasable at once: what Redis said before is stale.
        self.local.lock().await.forget_readiness();
        let mut a = self.args("cap");
        a.n(millis(max));
        // No host named means every host.
        let hosts = hosts.unwrap_or_default();
        a.n(hosts.len());
        for h in hosts {
            a.s(h);
        }
        let reply = array(self.call(&a).await?)?;
        pairs(reply, |host, v| {
            Ok(LiftedPause {
                host: host.into(),
                was: Duration::from_millis(u64::try_from(int(&v)?).unwrap_or(0)),
                now: max,
            })
        })
        .map_err(storage)
    }

    async fn hosts(&self) -> Result<Vec<HostView>, FrontierError> {
        let reply = array(self.call(&self.args("hosts")).await?)?;
        let mut out = Vec::with_capacity(reply.len() / 5);
        let mut it = reply.into_iter();
        while let (Some(k), Some(q), Some(bo), Some(d), Some(p)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        {
            let n = |v: &Value| int(v).map(|i| u64::try_from(i).unwrap_or(0));
            let paused = int(&p)?;
            out.push(HostView {
                key: text(k)?.into(),
                queued: n(&q)? as usize,
                backing_off: n(&bo)? as usize,
                delay: Duration::from_millis(n(&d)?),
                paused_for: u64::try_from(paused).ok().map(Duration::from_millis),
            });
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    async fn stats(&self) -> Result<FrontierStats, FrontierError> {
        let reply = array(self.call(&self.args("stats")).await?)?;
        let n = |i: usize| -> Result<usize, RedisStoreError> {
            Ok(usize::try_from(reply.get(i).map(int).transpose()?.unwrap_or(0)).unwrap_or(0))
        };
        Ok(self.as_seen_here(FrontierStats { queued: n(0)?, leased: n(1)?, hosts: n(2)?, failed: n(3)? }))
    }

    async fn failures(&self) -> Result<Vec<FailureRecord>, FrontierError> {
        let reply = array(self.call(&self.args("failures")).await?)?;
        let mut out = Vec::with_capacity(reply.len());
        for v in reply {
            let f: StoredFailure = serde_json::from_slice(&bytes(v)?).map_err(RedisStoreError::from)?;
            out.push(f.record);
        }
        Ok(out)
    }

    fn poll_interval(&self) -> Option<Duration> {
        Some(POLL)
    }

    async fn saved_counters(&self) -> Result<Option<Vec<u8>>, FrontierError> {
        let mut a = self.args("counters");
        a.s(&self.cfg.worker);
        let v = bytes(self.call(&a).await?)?;
        Ok((!v.is_empty()).then_some(v))
    }
}

/// Reads a flat reply of (host, value) pairs.
fn pairs<T>(
    reply: Vec<Value>,
    mut f: impl FnMut(String, Value) -> Result<T, RedisStoreError>,
) -> Result<Vec<T>, RedisStoreError> {
    let mut out = Vec::with_capacity(reply.len() / 2);
    let mut it = reply.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push(f(text(k)?, v)?);
    }
    Ok(out)
}
