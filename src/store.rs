//! Where a crawl's state lives — memory, a state directory (the embedded store), or Redis —
//! opened in one place for the library and the `kumo` command alike. Opening a state checks
//! that it is this crawl's (its outputs, its origin) and compares the settings its last run
//! kept ([`kumo_settings::Record`]): free changes are returned, fixed ones refused by name.

use std::path::PathBuf;
use std::sync::Arc;
#[cfg(feature = "redis")]
use std::time::Duration;

use kumo_core::MemoryCookieStorage;
use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig, Politeness};
use kumo_settings::{Change, Record};
use kumo_spider::SiteState;
use kumo_store_embedded::{Durability, EmbeddedConfig, EmbeddedStore, StoreError};
#[cfg(feature = "redis")]
use kumo_store_redis::{Joined, RedisConfig, RedisFrontier, RedisStoreError};

/// Where a crawl's state lives.
#[derive(Debug, Clone)]
pub enum Store {
    /// Nothing is kept: the crawl cannot resume.
    Memory,
    /// A state directory: stop or kill the crawl at any moment and run it again to resume.
    Dir {
        /// The state directory, made if missing.
        path: PathBuf,
        /// fsync every commit, so the state also survives a power loss (slower).
        fsync: bool,
        /// Discard what the directory holds and start over.
        fresh: bool,
    },
    /// A crawl shared by workers in Redis (feature `redis`).
    #[cfg(feature = "redis")]
    Redis(RedisStore),
}

/// A crawl kept in Redis, and this worker's part in it.
#[cfg(feature = "redis")]
#[derive(Debug, Clone)]
pub struct RedisStore {
    /// The Redis: `redis://HOST:PORT/DB` or `redis+unix:///path/to/socket`.
    pub url: String,
    /// The crawl's name: the workers of one crawl give the same.
    pub crawl: String,
    /// This worker's name: the same worker started again takes back what it held.
    pub worker: String,
    /// How long a silent worker counts as alive.
    pub dead_after: Duration,
    /// How long calls wait for a Redis that went away.
    pub outage_wait: Duration,
    /// Clear the crawl's keys and start over.
    pub fresh: bool,
}

impl Store {
    /// Everything in memory.
    pub fn memory() -> Self {
        Store::Memory
    }

    /// A state directory at `path` (made if missing; resumed if it holds a crawl).
    pub fn dir(path: impl Into<PathBuf>) -> Self {
        Store::Dir { path: path.into(), fsync: false, fresh: false }
    }

    /// The crawl `crawl` in the Redis at `url`, as a worker named after this process's host.
    #[cfg(feature = "redis")]
    pub fn redis(url: impl Into<String>, crawl: impl Into<String>) -> Self {
        Store::Redis(RedisStore {
            url: url.into(),
            crawl: crawl.into(),
            worker: host_name(),
            dead_after: Duration::from_secs(30),
            outage_wait: Duration::from_secs(60),
            fresh: false,
        })
    }

    /// Discards what the state holds first (a new crawl).
    pub fn fresh(mut self) -> Self {
        match &mut self {
            Store::Memory => {}
            Store::Dir { fresh, .. } => *fresh = true,
            #[cfg(feature = "redis")]
            Store::Redis(r) => r.fresh = true,
        }
        self
    }

    /// Makes every commit survive a power loss (a state directory only).
    pub fn fsync(mut self) -> Self {
        if let Store::Dir { fsync, .. } = &mut self {
            *fsync = true;
        }
        self
    }
}

/// This machine's host name (a worker's default name).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// What a crawl's state is checked against when it is opened.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The outputs' names, in order: a state resumes only into the outputs it wrote.
    pub outputs: Vec<String>,
    /// What the crawl starts from, in words: a state resumes only its own crawl.
    pub origin: String,
    /// What else workers sharing a crawl in Redis must agree on (a spider file's hash).
    pub config_id: String,
    /// The crawl's settings, compared with those the state kept.
    pub settings: Record,
    /// The per-host policies, for the frontier's new hosts.
    pub politeness: Politeness,
}

/// An opened state.
pub struct Opened {
    /// What the crawl runs on: its frontier, and its item journal, cookie, robots.txt and DNS
    /// answer storage where the store keeps them.
    pub state: SiteState,
    /// Settings this run changed from those the crawl's last run kept (free ones only).
    pub changed: Vec<Change>,
    /// The state directory's store, if the crawl keeps one.
    pub embedded: Option<Arc<EmbeddedStore>>,
    /// The crawl in Redis, if it is kept there.
    #[cfg(feature = "redis")]
    pub redis: Option<Arc<RedisFrontier>>,
    /// How this worker came to the crawl in Redis.
    #[cfg(feature = "redis")]
    pub joined: Option<Joined>,
    /// Keys of an earlier crawl of the name that `fresh` cleared from Redis.
    pub cleared: Option<u64>,
    /// The worker's name, in a crawl shared through Redis.
    pub worker: Option<String>,
}

impl Opened {
    /// Leaves a shared crawl (what the worker still holds goes back at once).
    pub async fn close(&self) {
        #[cfg(feature = "redis")]
        if let Some(r) = &self.redis
            && let Err(e) = r.leave().await
        {
            tracing::warn!(error = %e, "could not leave the crawl in Redis; its leases come back after its dead-after time");
        }
    }
}

/// A state that cannot be opened for this crawl.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The state directory could not be opened or read, or holds another crawl (other
    /// outputs, another origin).
    #[error(transparent)]
    State(#[from] StoreError),
    /// The crawl in Redis could not be read, cleared or joined.
    #[cfg(feature = "redis")]
    #[error(transparent)]
    Redis(#[from] RedisStoreError),
    /// A setting only the host table of the memory and embedded frontiers keeps.
    #[error("{0} is not built for crawls in Redis yet; run without it, or on a state directory")]
    NotInRedis(&'static str),
    /// The crawl's settings differ from the stored ones in some a resumed crawl cannot change.
    #[error("{place}: {refusal} (--fresh starts over)")]
    Settings {
        /// The state: its directory, or the crawl's name and its Redis.
        place: String,
        /// The fixed settings that changed, each with its stored and new value.
        refusal: String,
    },
}

/// The free changes `now` makes to the `stored` record, or the refusal naming the fixed ones.
fn compare(
    stored: Option<String>,
    now: &Record,
    place: impl FnOnce() -> String,
) -> Result<Vec<Change>, OpenError> {
    let Some(stored) = stored.as_deref().and_then(Record::from_json) else { return Ok(Vec::new()) };
    let c = now.compare(&stored);
    match c.refusal() {
        Some(refusal) => Err(OpenError::Settings { place: place(), refusal }),
        None => Ok(c.free),
    }
}

/// Whether a change moves a host's policy (what the frontier keeps per host).
#[cfg(feature = "redis")]
fn moves_politeness(changed: &[Change]) -> bool {
    changed.iter().any(|c| matches!(c.name.as_str(), "per_host" | "delay" | "random_delay" | "rate_limit"))
}

impl Store {
    /// Opens the state for the crawl `id`.
    pub async fn open(&self, id: &Identity) -> Result<Opened, OpenError> {
        let mut opened = Opened {
            state: memory_state(&id.politeness),
            changed: Vec::new(),
            embedded: None,
            #[cfg(feature = "redis")]
            redis: None,
            #[cfg(feature = "redis")]
            joined: None,
            cleared: None,
            worker: None,
        };
        match self {
            Store::Memory => {}
            Store::Dir { path, fsync, fresh } => {
                let cfg = EmbeddedConfig {
                    politeness: id.politeness.clone(),
                    durability: if *fsync { Durability::Power } else { Durability::Process },
                    ..Default::default()
                };
                // Both take the directory's lock before reading or deleting anything in it.
                let store = if *fresh {
                    EmbeddedStore::open_fresh(path, cfg)?
                } else {
                    EmbeddedStore::open(path, cfg)?
                };
                store.check_outputs(&id.outputs)?;
                store.check_origin(&id.origin)?;
                opened.changed =
                    compare(store.settings_record()?, &id.settings, || path.display().to_string())?;
                store.keep_settings_record(&id.settings.to_json())?;
                let store = Arc::new(store);
                // The store is the frontier, the item journal, the cookie storage and the
                // robots.txt answers.
                opened.state = SiteState {
                    frontier: store.clone(),
                    journal: Some(store.clone()),
                    cookies: Some(store.clone()),
                    robots: Some(store.clone()),
                    dns: Some(store.clone()),
                };
                opened.embedded = Some(store);
            }
            #[cfg(feature = "redis")]
            Store::Redis(r) => open_redis(r, id, &mut opened).await?,
        }
        Ok(opened)
    }
}

/// Everything in memory, with its own cookie jar.
fn memory_state(politeness: &Politeness) -> SiteState {
    let frontier =
        MemoryFrontier::new(MemoryFrontierConfig { politeness: politeness.clone(), ..Default::default() });
    SiteState {
        frontier: Arc::new(frontier),
        journal: None,
        cookies: Some(Arc::new(MemoryCookieStorage::new())),
        robots: None,
        dns: None,
    }
}

#[cfg(feature = "redis")]
async fn open_redis(r: &RedisStore, id: &Identity, opened: &mut Opened) -> Result<(), OpenError> {
    if id.politeness.per_ip.is_some() {
        return Err(OpenError::NotInRedis("per-IP politeness (--per-ip, --ip-delay)"));
    }
    if id.politeness.budget.is_on() {
        return Err(OpenError::NotInRedis("a page budget (--max-pages-per-host, --max-pages-per-domain)"));
    }
    if r.fresh {
        opened.cleared = Some(RedisFrontier::forget(&r.url, &r.crawl).await?);
    }
    // Compared before joining: a worker whose settings are refused never registers.
    let stored = if r.fresh { None } else { RedisFrontier::settings_record(&r.url, &r.crawl).await? };
    opened.changed = compare(stored, &id.settings, || format!("crawl {:?} on {}", r.crawl, r.url))?;
    let mut cfg = RedisConfig::new(&r.url, &r.crawl, &r.worker);
    cfg.config_id = id.config_id.clone();
    cfg.politeness = id.politeness.clone();
    cfg.dead_after = r.dead_after;
    cfg.outage_wait = r.outage_wait;
    let frontier = RedisFrontier::open(cfg).await?;
    let hosts =
        frontier.keep_settings_record(&id.settings.to_json(), moves_politeness(&opened.changed)).await?;
    if hosts > 0 {
        tracing::info!(hosts, "the crawl's hosts take the new politeness");
    }
    let frontier = Arc::new(frontier);
    opened.joined = Some(frontier.joined());
    opened.state = SiteState {
        frontier: frontier.clone(),
        journal: Some(frontier.clone()),
        // Cookies stay with each worker for now: a shared jar is not built yet.
        cookies: Some(Arc::new(MemoryCookieStorage::new())),
        robots: Some(frontier.clone()),
        // Each worker asks its own name servers: their answers may differ from a worker's.
        dns: None,
    };
    opened.redis = Some(frontier);
    opened.worker = Some(r.worker.clone());
    Ok(())
}

/// A URL crawl's origin: its start URLs, sorted and without repeats, so the same command with
/// its URLs in another order is the same crawl.
pub fn url_origin(starts: &[url::Url]) -> String {
    let mut urls: Vec<&str> = starts.iter().map(url::Url::as_str).collect();
    urls.sort_unstable();
    urls.dedup();
    format!("start URLs {}", urls.join(" "))
}
