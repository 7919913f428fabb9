//! The [`Frontier`] on Redis: every operation is one call of the frontier script, so the
//! queues, leases, politeness and seen set of a crawl are shared by all its workers.
//!
//! What stays in the worker: the requests of its own leases (a retry sends the request back
//! with its count raised, a failure with its record), its slots of each host and the
//! requests it leased ahead (`reserve.rs`), what it gives back (rides on its next call), and
//! the fingerprints it has already sent (a link it sent before is seen everywhere, so it
//! costs no round trip again). Lease calls are in `lease.rs`, commits in `commit.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use kumo_core::{ErrorKind, Fingerprint, Request, StoredRequest};
use kumo_frontier::{
    Commit, CommitReport, Completion, ExactSeenSet, FailureRecord, Frontier, FrontierError, FrontierStats,
    HostAdjustment, HostQueue, HostView, Lease, LeaseId, LiftedPause, PushReport, QueuedRequest, Readiness,
    RequeueReport, StoredFailure,
};
use redis::Value;
use tokio::task::JoinHandle;

use crate::call::{Args, Conn, Script, array, bytes, int, text};
use crate::config::{millis, policy_index, policy_specs};
use crate::lease::{DEPTH, next_ask, readiness_of};
use crate::member::Membership;
use crate::reserve::Slots;
use crate::{RedisConfig, RedisStoreError, heartbeat};

/// How often, at most, a worker with nothing to do asks again: other workers may queue work
/// meanwhile (or hold leases that may bring some), and a pause may be lifted from outside.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// The first wait of a worker holding no lease, doubled at each empty answer up to `POLL`: a
/// worker that joins while another fetches the seed, or that waits for the last pages of
/// others, goes on within milliseconds, not a whole poll later (a tenth of a 2 s crawl was
/// spent so), while one idle for long asks no more often than `POLL`. A worker with leases
/// waits `POLL`: its reserve running low and its commits' answers bring it more.
const FIRST_POLL: Duration = Duration::from_millis(5);

/// How long a fetched page waits to share its commit with others (see `group_linger`).
pub(crate) const GROUP_LINGER: Duration = Duration::from_millis(10);

/// A readiness learned with a lease call or a commit is reused by `readiness` calls until the
/// time Redis said to ask again; one that said "now" (no such time) only for this long.
const READINESS_FRESH: Duration = Duration::from_millis(2);

/// The shared frontier of one crawl, as seen by one worker process.
pub struct RedisFrontier {
    pub(crate) cfg: RedisConfig,
    pub(crate) conn: Conn,
    pub(crate) script: Arc<Script>,
    /// This process's incarnation: lease ids and commit sequence numbers are its own.
    pub(crate) inc: String,
    /// The id of the crawl this worker joined, sent with every call (empty for an inspecting
    /// handle, which is no worker).
    crawl_id: String,
    joined: Joined,
    /// One call at a time: commit numbers and lease ids are handed out in order.
    pub(crate) local: tokio::sync::Mutex<Local>,
    pending: Mutex<Pending>,
    /// This worker's slots and reserve, per host.
    slots: Mutex<Slots>,
    /// The politeness epoch moved: the next lease call asks which of this worker's hosts were
    /// paused or slowed, and nothing starts from the reserve before. Outside `local` so that
    /// the reserve's fast path sees it while a call is in flight.
    pub(crate) check_hosts: AtomicBool,
    membership: Arc<Membership>,
    /// None for an inspecting handle (`inspect`), which is no worker.
    heartbeat: Option<JoinHandle<()>>,
    /// This worker's output checkpoints, folded (see `journal.rs`).
    pub(crate) folded: Mutex<crate::journal::Folded>,
    /// Answers in a row that gave this worker nothing to start: how long it waits to ask again.
    idle_answers: AtomicU32,
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
        }
    }
}

pub(crate) struct Local {
    pub(crate) next_lease: u64,
    pub(crate) seq: u64,
    /// The requests of this worker's leases, by lease id.
    pub(crate) leases: HashMap<u64, StoredRequest>,
    /// Fingerprints this worker has sent to Redis: seen there for good.
    pub(crate) sent: ExactSeenSet,
    pub(crate) readiness: Option<(Instant, Readiness)>,
    /// Before this, Redis has no lease for this worker (as its last answer said); none: ask.
    pub(crate) next_ask: Option<Instant>,
    /// The crawl's politeness epoch as last seen: when it moves, a host may have been paused
    /// or slowed, and the next lease call asks which of this worker's hosts.
    epoch: Option<i64>,
}

impl Local {
    /// What Redis said about leasing may be out of date: ask it next time.
    fn forget_readiness(&mut self) {
        self.readiness = None;
        self.next_ask = None;
    }

    /// Notes the crawl's politeness epoch; true when it moved since the last answer.
    pub(crate) fn saw_epoch(&mut self, pe: i64) -> bool {
        let moved = self.epoch.is_some_and(|e| e != pe);
        self.epoch = Some(pe);
        moved
    }
}

#[derive(Default)]
pub(crate) struct Pending {
    adjustments: Vec<(String, HostAdjustment)>,
    /// The last commit's counters: they need its answer, so they ride on the next call.
    pub(crate) counters: Option<Vec<u8>>,
}

/// How a worker came into its crawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// The crawl was there: this worker joined it.
    Existing,
    /// Redis held no key of the crawl, so this worker started it. A crawl whose keys vanished
    /// (Redis restarted without persistence, a flush) looks the same.
    New,
    /// `--fresh` had cleared the crawl: this worker started it again.
    AfterFresh,
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
        let mut args = Args::bare("register", &inc, "");
        args.s(&cfg.worker).s(&cfg.config_id).n(millis(cfg.dead_after));
        let specs = policy_specs(&cfg.politeness);
        args.n(specs.len());
        for s in &specs {
            args.s(s);
        }
        let mut reply = array(conn.call(&script, &args).await?)?.into_iter();
        let (Some(old), Some(crawl_id), Some(created)) = (reply.next(), reply.next(), reply.next()) else {
            return Err(RedisStoreError::Protocol("register reply".into()));
        };
        let (old, crawl_id) = (text(old)?, text(crawl_id)?);
        let joined = match int(&created)? {
            0 => Joined::Existing,
            1 => Joined::New,
            _ => Joined::AfterFresh,
        };
        if !old.is_empty() {
            tracing::info!(worker = %cfg.worker, previous = %old, "took over the worker's previous process");
        }
        let membership = Arc::new(Membership::default());
        let heartbeat = heartbeat::spawn(&cfg, &inc, &crawl_id, script.clone(), membership.clone()).await?;
        Ok(RedisFrontier {
            conn,
            script,
            local: tokio::sync::Mutex::new(Local::new()),
            pending: Mutex::new(Pending::default()),
            slots: Mutex::default(),
            check_hosts: AtomicBool::new(false),
            folded: Mutex::default(),
            idle_answers: AtomicU32::new(0),
            membership,
            heartbeat: Some(heartbeat),
            inc,
            crawl_id,
            joined,
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
            check_hosts: AtomicBool::new(false),
            folded: Mutex::default(),
            idle_answers: AtomicU32::new(0),
            membership: Arc::default(),
            heartbeat: None,
            inc: "inspect".to_string(),
            crawl_id: String::new(),
            joined: Joined::Existing,
            cfg,
        })
    }

    /// Deletes every key of the crawl `crawl` (`--fresh`); refused while a worker of the crawl
    /// is alive (its liveness deadline has not passed). Leaves the crawl's id under `cleared`
    /// (written first, so no moment looks like keys that vanished), so a worker of the cleared
    /// crawl that comes back learns `--fresh` cleared it, until a new crawl of the name records it.
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
        let tombstone = format!("{prefix}cleared");
        let mut id = redis::cmd("HGET");
        id.arg(format!("{prefix}meta")).arg("id");
        if let Value::BulkString(id) = conn.command(&id).await? {
            let mut set = redis::cmd("SET");
            set.arg(&tombstone).arg(id);
            conn.command(&set).await?;
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
            let mut keys = array(keys)?.into_iter().map(bytes).collect::<Result<Vec<_>, _>>()?;
            keys.retain(|k| k != tombstone.as_bytes());
            if !keys.is_empty() {
                let mut del = redis::cmd("UNLINK");
                for k in keys {
                    del.arg(k);
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
        if self.membership.is_out() {
            // Out of the crawl already: it holds nothing there to hand back.
            return Ok(());
        }
        let mut a = self.args("leave");
        a.s(&self.cfg.worker);
        self.call(&a).await.map(drop)
    }

    /// The settings it was opened with.
    pub fn config(&self) -> &RedisConfig {
        &self.cfg
    }

    /// How this worker came into its crawl: joined it, or started it (where Redis held none of
    /// it, or after `--fresh`).
    pub fn joined(&self) -> Joined {
        self.joined
    }

    /// Why this worker is out of its crawl, once a call or its heartbeat learned it (another
    /// process took its name, `--fresh` cleared the crawl, its keys vanished): every call then
    /// fails with this.
    pub fn out_of_crawl(&self) -> Option<RedisStoreError> {
        self.still_in_the_crawl().err()
    }

    /// This process's incarnation id: the member of the crawl's `alive` set its heartbeat
    /// refreshes, and the prefix of its lease ids (for tests and diagnostics).
    pub fn incarnation(&self) -> &str {
        &self.inc
    }

    pub(crate) fn saw_epoch(&self, local: &mut Local, pe: i64) {
        if local.saw_epoch(pe) {
            self.check_hosts.store(true, Ordering::Relaxed);
        }
    }

    /// How long this worker waits before asking Redis again when it was given nothing more to
    /// do (see `FIRST_POLL`).
    pub(crate) fn poll(&self) -> Duration {
        if self.slots().holds_any() {
            return POLL;
        }
        let doublings = self.idle_answers.load(Ordering::Relaxed).min(5);
        (FIRST_POLL * (1 << doublings)).min(POLL)
    }

    /// Redis answered: with work for this worker now (`working`), or not.
    pub(crate) fn note_answer(&self, working: bool) {
        if working {
            self.idle_answers.store(0, Ordering::Relaxed);
        } else {
            let _ = self
                .idle_answers
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(n.saturating_add(1)));
        }
    }

    pub(crate) fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn slots(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn lease_key(&self, id: u64) -> String {
        format!("{}:{id}", self.inc)
    }

    /// A call's arguments: the op, the incarnation, and what this worker has to tell since
    /// its last call: slots it gave up, reserved requests it hands back, host adjustments.
    pub(crate) fn args(&self, op: &str) -> Args {
        self.args_saving(op, None)
    }

    /// [`Self::args`], saving `counters` (when given) in place of the pending ones.
    pub(crate) fn args_saving(&self, op: &str, counters: Option<Vec<u8>>) -> Args {
        let mut a = Args::new(op, &self.inc, &self.crawl_id);
        let (held, give_back) = self.slots().prelude();
        a.n(held.len());
        for (host, n) in held {
            a.s(&host).n(n);
        }
        a.n(give_back.len());
        for id in give_back {
            a.s(&self.lease_key(id));
        }
        let Pending { adjustments, counters: pending } = std::mem::take(&mut *self.pending());
        let counters = counters.or(pending);
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

    /// A process out of its crawl (taken over, cleared, its keys vanished) must stop: nothing
    /// more from Redis, nor from its reserve.
    pub(crate) fn still_in_the_crawl(&self) -> Result<(), RedisStoreError> {
        self.membership.check(&self.cfg)
    }

    pub(crate) async fn call(&self, args: &Args) -> Result<Value, RedisStoreError> {
        self.still_in_the_crawl()?;
        let r = self.conn.call(&self.script, args).await;
        if let Err(e) = &r {
            self.membership.note(e);
        }
        r
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

pub(crate) fn storage(e: RedisStoreError) -> FrontierError {
    e.into()
}

#[async_trait]
impl Frontier for RedisFrontier {
    fn known(&self, fps: &[Fingerprint]) -> Vec<bool> {
        // What this worker sent: seen in Redis for good. Not waited for when a call holds it.
        match self.local.try_lock() {
            Ok(local) => fps.iter().map(|&fp| local.sent.contains(fp)).collect(),
            Err(_) => vec![false; fps.len()],
        }
    }

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
            let local = self.local.lock().await;
            let nothing_pending = self.pending().adjustments.is_empty();
            // Until the time Redis said to ask again, its answer stands: nothing this worker
            // did since (a commit, an adjustment) would have let it be forgotten.
            let answer_stands = local.next_ask.is_some_and(|t| Instant::now() < t);
            if let Some((at, r)) = local.readiness
                && nothing_pending
                && (answer_stands || at.elapsed() < READINESS_FRESH)
            {
                return Ok(r);
            }
        }
        let mut a = self.args("lease");
        a.s(&self.cfg.worker).n(0).n(0).n(0).n(0).n(DEPTH).n(0);
        let reply = array(self.call(&a).await.map_err(storage)?).map_err(storage)?;
        let code = reply.first().map(int).transpose().map_err(storage)?.unwrap_or(3);
        let ms = reply.get(1).map(int).transpose().map_err(storage)?.unwrap_or(0);
        let poll = self.poll();
        let readiness = readiness_of(code, ms, poll);
        self.note_answer(readiness == Readiness::Now);
        let mut local = self.local.lock().await;
        if let Some(pe) = reply.get(2).map(int).transpose().map_err(storage)? {
            self.saw_epoch(&mut local, pe);
        }
        local.next_ask = next_ask(readiness, poll);
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

    async fn host_queue(&self, host_key: &str, max: usize) -> Result<Option<HostQueue>, FrontierError> {
        let mut a = self.args("queue");
        a.s(host_key).n(max);
        let reply = array(self.call(&a).await?)?;
        if reply.len() < 3 {
            return Ok(None);
        }
        let n = |v: &Value| -> Result<u64, RedisStoreError> { Ok(u64::try_from(int(v)?).unwrap_or(0)) };
        let mut next = Vec::with_capacity((reply.len() - 3) / 2);
        for pair in reply[3..].chunks_exact(2) {
            let request: StoredRequest =
                serde_json::from_slice(&bytes(pair[0].clone())?).map_err(RedisStoreError::from)?;
            let mut q = QueuedRequest::from(&request);
            q.not_before_ms = Some(n(&pair[1])?).filter(|&ms| ms > 0);
            next.push(q);
        }
        Ok(Some(HostQueue {
            host: host_key.to_string(),
            queued: n(&reply[0])? as usize,
            in_flight: n(&reply[1])? as usize,
            backing_off: n(&reply[2])? as usize,
            next,
        }))
    }

    async fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, FrontierError> {
        let report = RedisFrontier::requeue_failures(self, kinds).await?;
        // What this worker last heard of Redis's queue is out of date: ask again at once.
        self.local.lock().await.forget_readiness();
        Ok(report)
    }

    async fn stats(&self) -> Result<FrontierStats, FrontierError> {
        let reply = array(self.call(&self.args("stats")).await?)?;
        let n = |i: usize| -> Result<usize, RedisStoreError> {
            Ok(usize::try_from(reply.get(i).map(int).transpose()?.unwrap_or(0)).unwrap_or(0))
        };
        Ok(self.as_seen_here(FrontierStats {
            queued: n(0)?,
            leased: n(1)?,
            hosts: n(2)?,
            failed: n(3)?,
            ..Default::default()
        }))
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
        Some(self.poll())
    }

    /// Each commit is a call of the script, whose fixed cost outweighs a few pages' work.
    fn group_linger(&self) -> Duration {
        GROUP_LINGER
    }

    async fn saved_counters(&self) -> Result<Option<Vec<u8>>, FrontierError> {
        let mut a = self.args("counters");
        a.s(&self.cfg.worker);
        let v = bytes(self.call(&a).await?)?;
        Ok((!v.is_empty()).then_some(v))
    }

    async fn workers_counters(&self) -> Result<Vec<(String, Vec<u8>)>, FrontierError> {
        let reply = array(self.call(&self.args("all_counters")).await?)?;
        Ok(pairs(reply, |worker, v| Ok((worker, bytes(v)?)))?)
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
