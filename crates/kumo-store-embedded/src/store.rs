//! The embedded store: one fjall database in the state directory, with two keyspaces, and
//! the in-memory indexes rebuilt from it on open. The `seen` keyspace holds the seen set; the
//! `state` keyspace holds the rest, each kind under a one-byte tag (see `part.rs`).
//!
//! | keyspace | tag | key | value |
//! |---|---|---|---|
//! | `state` | `q` queue | host, level, seq | a queued or leased request (`StoredRequest` JSON) |
//! | `state` | `h` hosts | host id | [`HostRecord`](crate::hosts::HostRecord) |
//! | `state` | `f` failures | seq | failure record and its request |
//! | `state` | `p` pipeline | see `journal.rs` | sink positions and processor state |
//! | `state` | `m` meta | name | the crawl's counters, the item log's committed end, its outputs, its cookies (`cookie/…`, `cookies.rs`), robots.txt answers (`robots/…`) and DNS answers (`dns/…`, `dns.rs`) |
//! | `seen` | | 128-bit fingerprint | — |
//!
//! Items wait for the pipeline in the item log beside the database (`items/`, see
//! `item_log.rs`), whose committed end each commit records in `meta`.
//!
//! A leased request stays in `queue` until its completion commits, so a lease that was out
//! when the process died is simply queued again on open.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use kumo_frontier::schedule::HostTable;
use kumo_frontier::{ExactSeenSet, Politeness};

use crate::hosts::{Clock, HostRecord};
use crate::item_log::{ItemLog, LogEnd};
use crate::lock::StateLock;
use crate::part::{Part, tag};
use crate::{StoreError, dir, keys};

/// How hard a commit pushes its bytes to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// To the operating system: survives the process being killed (kill -9, a panic, OOM).
    #[default]
    Process,
    /// fsync'ed: survives a power loss too, at a cost in throughput.
    Power,
}

/// Settings of the embedded store.
#[derive(Debug, Clone)]
pub struct EmbeddedConfig {
    /// The per-host rules work is handed out by.
    pub politeness: Politeness,
    /// How long a lease lasts; a request whose lease is not completed by then is handed out
    /// again.
    pub lease_ttl: Duration,
    /// Requests held in memory per host and priority level; the rest wait on disk.
    pub spill_at: usize,
    /// How hard each commit pushes its bytes to disk.
    pub durability: Durability,
}

impl Default for EmbeddedConfig {
    fn default() -> Self {
        EmbeddedConfig {
            politeness: Politeness::default(),
            lease_ttl: Duration::from_secs(600),
            spill_at: 64,
            durability: Durability::Process,
        }
    }
}

pub(crate) struct Spaces {
    pub meta: Part,
    pub queue: Part,
    pub hosts: Part,
    pub failures: Part,
    pub pipeline: Part,
    pub pages: Part,
    pub seen: Keyspace,
    /// The keyspace the parts share.
    pub state: Keyspace,
}

impl Spaces {
    fn open(db: &Database, opts: impl Fn() -> KeyspaceCreateOptions) -> fjall::Result<Self> {
        let state = db.keyspace(STATE, &opts)?;
        Ok(Spaces {
            meta: Part::new(&state, tag::META),
            queue: Part::new(&state, tag::QUEUE),
            hosts: Part::new(&state, tag::HOSTS),
            failures: Part::new(&state, tag::FAILURES),
            pipeline: Part::new(&state, tag::PIPELINE),
            pages: Part::new(&state, tag::PAGES),
            seen: db.keyspace(SEEN, &opts)?,
            state,
        })
    }

    pub fn all(&self) -> [&Keyspace; 2] {
        [&self.state, &self.seen]
    }
}

/// What lives in memory, under one lock.
pub(crate) struct Inner {
    pub table: HostTable,
    pub seen: ExactSeenSet,
    /// Last sequence numbers handed out.
    pub queue_seq: u64,
    pub failure_seq: u64,
    pub state_seq: u64,
    pub failures: usize,
    /// The items of committed pages, until the pipeline's checkpoints cover them.
    pub items: ItemLog,
}

/// The embedded backend: a [`Frontier`](kumo_frontier::Frontier) whose every commit is one
/// atomic write, plus the item journal the pipeline resumes from.
pub struct EmbeddedStore {
    pub(crate) dir: PathBuf,
    pub(crate) db: Database,
    pub(crate) sp: Spaces,
    pub(crate) inner: Mutex<Inner>,
    pub(crate) persist: PersistMode,
    /// Set by the first failed write: nothing more is written (`halt.rs`).
    pub(crate) halt: crate::halt::Halt,
    resumed: bool,
    /// Declared last so it is released last, after the database has closed.
    _lock: StateLock,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl EmbeddedStore {
    /// Opens (or creates) the state in `dir` and rebuilds the in-memory indexes from it.
    pub fn open(dir: &Path, cfg: EmbeddedConfig) -> Result<Self, StoreError> {
        Self::open_locked(StateLock::create(dir)?, cfg)
    }

    /// Discards the state in `dir` (refusing a directory that is not kumo's) and creates a
    /// new one there, holding the directory throughout, so a crawl running in it is never
    /// deleted from under it: that is refused as [`StoreError::Locked`] before anything is.
    pub fn open_fresh(dir: &Path, cfg: EmbeddedConfig) -> Result<Self, StoreError> {
        let lock = StateLock::create(dir)?;
        dir::clear(&lock)?;
        Self::open_locked(lock, cfg)
    }

    /// Opens the state held by `lock`: nothing in the directory is read before it is held.
    pub(crate) fn open_locked(lock: StateLock, cfg: EmbeddedConfig) -> Result<Self, StoreError> {
        let dir = lock.dir().to_path_buf();
        let dir = dir.as_path();
        let dir::Prepared { db: db_path, new, format } = dir::prepare(dir)?;
        if !new {
            crate::preflight::check(dir, &db_path)?;
        }
        let db = Database::builder(&db_path)
            .cache_size(32 * 1024 * 1024)
            // fjall's default worker count (two on a 2-core machine), although the first one
            // spins while the second compacts: it hands each compaction back to the channel to
            // stay free for flushes (about 5 % of the whole crawl's CPU). With one worker,
            // flushes wait behind compactions and sealed memtables pile up in RAM without bound
            // (300 bytes per URL in the 10 M-URL scale benchmark).
            .open()
            .map_err(|e| dir::open_error(dir, e))?;
        // Small memtables: they are the store's main RAM cost (the LSM flushes them to table
        // files as they fill), and a crawl's writes are many and small.
        let opts = || KeyspaceCreateOptions::default().max_memtable_size(MEMTABLE_BYTES);
        if !new && format == dir::MIGRATES_FROM {
            crate::migrate::from_format_2(&db, dir, opts)?;
        }
        crate::migrate::drop_leftovers(&db).map_err(|e| dir::open_error(dir, e))?;
        // A keyspace missing from existing state would be created empty: a silent start over.
        if let Some(name) = KEYSPACES.iter().find(|n| !new && !db.keyspace_exists(n)) {
            return Err(corrupt(dir, format!("its {name} keyspace is missing")));
        }
        let sp = Spaces::open(&db, opts).map_err(|e| dir::open_error(dir, e))?;
        let log_end = match sp.meta.get(ITEMS_END).map_err(|e| dir::open_error(dir, e))? {
            None => None,
            Some(v) => {
                Some(LogEnd::decode(&v).ok_or_else(|| corrupt(dir, "the item log's end is unreadable"))?)
            }
        };
        let items = ItemLog::open(&dir.join(ITEMS_DIR), log_end, cfg.durability == Durability::Power)?;
        if new {
            dir::mark_ready(dir)?;
        }
        let inner = Inner {
            table: HostTable::new(cfg.politeness, cfg.lease_ttl, cfg.spill_at).spilling_cold_hosts(),
            seen: ExactSeenSet::new(),
            queue_seq: 0,
            failure_seq: 0,
            state_seq: 0,
            failures: 0,
            items,
        };
        let persist = match cfg.durability {
            Durability::Process => PersistMode::Buffer,
            Durability::Power => PersistMode::SyncData,
        };
        let mut store = EmbeddedStore {
            dir: dir.into(),
            db,
            sp,
            inner: Mutex::new(inner),
            persist,
            halt: Default::default(),
            resumed: false,
            _lock: lock,
        };
        // A read error here is a damaged table (checksums), not a passing storage problem.
        store.resumed = !new
            && store.load().map_err(|e| match e {
                StoreError::Db(e) => dir::open_error(dir, e),
                other => other,
            })?;
        Ok(store)
    }

    /// Whether the directory held an earlier crawl's state.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves everything committed from the database journal into table files, and waits.
    /// Tests use it to have tables to damage; it is also a quiet point to copy a state from.
    pub fn flush_tables(&self) -> Result<(), StoreError> {
        for ks in self.sp.all() {
            ks.rotate_memtable_and_wait()?;
        }
        Ok(())
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every mutation leaves the indexes consistent before it can panic.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Rebuilds hosts, queues, the seen set and the sequence numbers. Returns whether there
    /// was anything to resume.
    fn load(&mut self) -> Result<bool, StoreError> {
        let clock = Clock::now();
        let now = std::time::Instant::now();
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut any = false;
        // Hosts first, in id order, so table index == host id.
        for kv in self.sp.hosts.iter() {
            let (k, v) = kv?;
            let id =
                keys::parse_u32(&k).ok_or_else(|| corrupt(&self.dir, "a host key has the wrong length"))?;
            let rec: HostRecord =
                serde_json::from_slice(&v).map_err(|e| corrupt(&self.dir, format!("host {id}: {e}")))?;
            let (i, _) = inner.table.host_for(&rec.key, now);
            if i as u32 != id {
                return Err(corrupt(&self.dir, format!("host ids are not contiguous at {id}")));
            }
            inner.table.restore_pacing(
                i,
                // Older state kept only the larger of the rule's delay and the floor.
                Duration::from_millis(rec.floor_ms.unwrap_or(rec.delay_ms)),
                rec.learned_delay_ms.map(Duration::from_millis),
                clock.to_instant(rec.not_before_ms),
                rec.last_lease_ms.map(|ms| clock.to_instant(ms)),
            );
            inner.table.restore_admitted(i, rec.admitted);
            any = true;
        }
        for kv in self.sp.queue.iter() {
            let (k, v) = kv?;
            let (host, prio, seq) = keys::parse_queue(&k)
                .ok_or_else(|| corrupt(&self.dir, "a queue key has the wrong length"))?;
            if host as usize >= inner.table.hosts() {
                return Err(corrupt(&self.dir, format!("a queued request names unknown host {host}")));
            }
            inner.queue_seq = inner.queue_seq.max(seq);
            inner
                .table
                .enqueue_with(host as usize, prio, seq, now, || crate::frontier::read_queued(&v, clock))
                .map_err(|e| corrupt(&self.dir, format!("queued request {seq}: {e}")))?;
            any = true;
        }
        let mut fps = Vec::new();
        for kv in self.sp.seen.iter() {
            let k = kv.key()?;
            let b: [u8; 16] =
                k[..].try_into().map_err(|_| corrupt(&self.dir, "a fingerprint has the wrong length"))?;
            fps.push(kumo_core::Fingerprint::from_bytes(b));
            if fps.len() == 65_536 {
                inner.seen.extend_from_sorted(fps.drain(..));
            }
        }
        inner.seen.extend_from_sorted(fps);
        any |= !inner.seen.is_empty();
        for kv in self.sp.failures.iter() {
            let (k, _) = kv?;
            inner.failure_seq = inner.failure_seq.max(keys::parse_u64(&k).unwrap_or(0));
            inner.failures += 1;
        }
        // Read the rest once too, so a damaged block anywhere is found now, not mid-crawl.
        for part in [&self.sp.pipeline, &self.sp.meta] {
            for kv in part.iter() {
                kv?;
            }
        }
        let upto = crate::journal::consumed_upto(&self.sp)?;
        if upto > inner.items.end().last_seq {
            return Err(corrupt(&self.dir, "the pipeline consumed items the item log never committed"));
        }
        inner.items.drop_consumed(upto)?;
        inner.state_seq = crate::journal::last_state_seq(&self.sp)?;
        Ok(any || self.sp.meta.get(COUNTERS)?.is_some())
    }
}

pub(crate) const COUNTERS: &str = "counters";
/// The item log's committed end ([`LogEnd`]), written with every commit that has items.
pub(crate) const ITEMS_END: &str = "items_end";
const ITEMS_DIR: &str = "items";
const MEMTABLE_BYTES: u64 = 512 * 1024;
pub(crate) const STATE: &str = "state";
const SEEN: &str = "seen";
const KEYSPACES: [&str; 2] = [STATE, SEEN];

pub(crate) fn corrupt(dir: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Corrupt { path: dir.into(), detail: detail.into() }
}
