//! Where a crawl's state lives, chosen in one place ([`open_storage`]): a state directory
//! (derived from the start URLs unless `--state` names one, discarded by `--fresh`, opened as
//! the embedded store), Redis (`--redis`: a crawl shared by workers), or memory (`--memory`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use kumo::store::{Identity, OpenError, RedisStore, Store};
use kumo_frontier::{Frontier, Politeness};
use kumo_store_embedded::{Durability, EmbeddedConfig, EmbeddedStore};
use kumo_store_redis::{Joined, RedisFrontier, RoundStart};
use url::Url;

use super::args::StateArgs;

/// A duration as people read it: `2d 3h`, `4m 10s`, `12s`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    let (days, hours, mins, secs) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (days, hours, mins) {
        (0, 0, 0) => format!("{secs}s"),
        (0, 0, _) => format!("{mins}m {secs}s"),
        (0, _, _) => format!("{hours}h {mins}m"),
        _ => format!("{days}d {hours}h"),
    }
}

/// Where derived state directories go, relative to the working directory.
pub const STATE_ROOT: &str = ".kumo/state";

/// `.kumo/state/<first host>-<hash of every start URL>`: the same command finds the same
/// directory, a different crawl a different one.
pub fn derived_dir(starts: &[Url]) -> PathBuf {
    let mut sorted: Vec<&str> = starts.iter().map(Url::as_str).collect();
    sorted.sort_unstable();
    let hash = xxhash_rust::xxh3::xxh3_64(sorted.join("\n").as_bytes());
    let host = starts.first().and_then(|u| u.host_str()).unwrap_or("crawl");
    let host: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
    Path::new(STATE_ROOT).join(format!("{host}-{:08x}", hash as u32))
}

/// A spider file's site: `--state DIR` holds one folder per site (`DIR/<site>`); else
/// `.kumo/state/<site>-<hash of its start URLs>`.
pub fn site_dir(a: &StateArgs, site: &str, starts: &[Url]) -> PathBuf {
    let name: String = site
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' })
        .collect();
    match &a.dir {
        Some(d) => d.join(name),
        None => {
            let derived = derived_dir(starts);
            let hash = derived.file_name().and_then(|f| f.to_str()).and_then(|f| f.rsplit('-').next());
            Path::new(STATE_ROOT).join(format!("{name}-{}", hash.unwrap_or("0")))
        }
    }
}

/// Opens the store in `path` (discarded first with `--fresh`), or `None` with `--memory`.
pub fn open_at(a: &StateArgs, path: &Path, politeness: Politeness) -> Result<Option<Arc<EmbeddedStore>>> {
    if a.memory {
        return Ok(None);
    }
    let cfg = EmbeddedConfig {
        politeness,
        durability: if a.fsync { Durability::Power } else { Durability::Process },
        ..Default::default()
    };
    // Both take the directory's lock before reading or deleting anything in it.
    let store = if a.fresh { EmbeddedStore::open_fresh(path, cfg)? } else { EmbeddedStore::open(path, cfg)? };
    Ok(Some(Arc::new(store)))
}

/// Says on standard error that a crawl resumes (and from where), and which hosts their
/// server paused, for how long this run will wait (`max_pause`, the host pause cap) and how
/// to lift it; `who` prefixes the lines. `scheduled`: a run of `kumo run`, which says itself
/// which run it is.
pub async fn announce(store: &EmbeddedStore, who: &str, max_pause: Duration, scheduled: bool) -> Result<()> {
    if store.resumed() {
        let stats = store.stats().await?;
        if !scheduled {
            say!(
                "{who}resuming from {} ({} queued, {} failed; --fresh starts over)",
                store.dir().display(),
                stats.queued,
                stats.failed
            );
        }
        for h in store.host_views() {
            let Some(left) = h.paused_for else { continue };
            let waits = left.min(max_pause);
            say!(
                "{who}  {} is paused by its server for {} more; this run waits {} \
                 (kumo frontier hosts --state {} --unpause {} lifts it)",
                h.key,
                span(left),
                span(waits),
                store.dir().display(),
                h.key
            );
        }
    } else {
        tracing::info!(state = %store.dir().display(), "{who}new crawl state");
    }
    Ok(())
}

/// `--recrawl`: a crawl that is done asks for every page it fetched again, each with the
/// validators of its last answer; one still under way is only resumed, and a new one keeps
/// its pages' records for the next time.
async fn recrawl(store: &EmbeddedStore, who: &str, conditional: bool) -> Result<()> {
    if !store.resumed() {
        return Ok(());
    }
    let stats = store.stats().await?;
    if stats.queued > 0 {
        say!("{who}--recrawl: the crawl is still under way ({} queued); this run finishes it", stats.queued);
        return Ok(());
    }
    let r = store.revisit_pages(kumo_spider::schedule::millis(SystemTime::now()), conditional)?;
    say_revisits(who, r, conditional);
    Ok(())
}

/// `--recrawl` on a crawl kept in Redis: as [`recrawl`], the round opened (or joined) by
/// whichever worker finds the crawl drained.
async fn recrawl_redis(redis: &RedisFrontier, who: &str, conditional: bool) -> Result<()> {
    match redis.revisit_pages(kumo_spider::schedule::millis(SystemTime::now()), conditional).await? {
        RoundStart::Busy(n) => {
            say!(
                "{who}--recrawl: the crawl is still under way ({n} queued or in flight); this run finishes it"
            )
        }
        RoundStart::NoRecords => say!(
            "{who}--recrawl: no page of this crawl has a record yet; this run keeps them, the next \
             --recrawl asks for them again"
        ),
        RoundStart::Queued(r) => say_revisits(who, r, conditional),
    }
    Ok(())
}

/// What a re-crawl round queued, as both stores say it.
fn say_revisits(who: &str, r: kumo_frontier::Revisits, conditional: bool) {
    let later = match r.next_due_ms {
        Some(ms) => {
            let left =
                kumo_spider::schedule::from_millis(ms).duration_since(SystemTime::now()).unwrap_or_default();
            format!(" ({} not due yet, the first in {})", r.not_due, span(left))
        }
        None => String::new(),
    };
    match r.queued {
        0 if r.not_due > 0 => say!("{who}recrawl: no page is due yet{later}"),
        0 => say!(
            "{who}--recrawl: no page of this crawl has a record yet (it ran without --recrawl); \
             this run keeps them, the next --recrawl asks for them again"
        ),
        n if conditional => {
            say!("{who}recrawl: {n} pages asked for again, each sent only if it changed{later}")
        }
        n => say!("{who}recrawl: {n} pages asked for again, whole (emit = \"all\"){later}"),
    }
}

/// What a crawl (or one site of a spider file) is stored as.
pub struct Storage<'a> {
    /// The state directory, without `--redis`.
    pub dir: PathBuf,
    /// The crawl's name in Redis, unless `--crawl` names it.
    pub crawl: String,
    /// What the state is checked against (its outputs also name the default worker).
    pub id: Identity,
    /// The output files among the outputs (not standard output, not a database).
    pub files: Vec<PathBuf>,
    pub max_host_pause: Duration,
    /// Prefixes what is said about it (`site "x": `).
    pub who: &'a str,
    /// `--recrawl`: once the crawl is done, ask for every page it fetched again.
    pub recrawl: bool,
    /// With `recrawl`: with the validators each page's last answer carried.
    pub conditional: bool,
    /// A run of `kumo run`.
    pub scheduled: bool,
}

pub use kumo::store::Opened;

/// The [`Store`] the state options name for a crawl stored as `s`.
fn store_of(a: &StateArgs, s: &Storage<'_>) -> Result<Store> {
    let Some(url) = &a.redis.url else {
        return Ok(match (a.memory, a.fresh, a.fsync) {
            (true, ..) => Store::memory(),
            (false, fresh, fsync) => {
                let dir = Store::dir(&s.dir);
                let dir = if fresh { dir.fresh() } else { dir };
                if fsync { dir.fsync() } else { dir }
            }
        });
    };
    let crawl = match (&a.redis.crawl, s.who.is_empty()) {
        (Some(name), true) => name.clone(),
        // A spider file's sites are crawls of their own under the name given.
        (Some(name), false) => format!("{name}/{}", s.crawl),
        (None, _) => s.crawl.clone(),
    };
    let secs = |v: f64, flag: &str| {
        Duration::try_from_secs_f64(v)
            .ok()
            .filter(|d| !d.is_zero())
            .with_context(|| format!("{flag} must be a positive number of seconds"))
    };
    Ok(Store::Redis(RedisStore {
        url: url.clone(),
        crawl,
        worker: a.redis.worker.clone().unwrap_or_else(|| default_worker(&s.id.outputs)),
        dead_after: secs(a.redis.dead_after, "--dead-after")?,
        outage_wait: secs(a.redis.redis_wait, "--redis-wait")?,
        fresh: a.fresh,
    }))
}

/// Opens the crawl's storage: the frontier, the item journal and the cookie storage, with
/// Redis (`--redis`), in a state directory (the default), or in memory (`--memory`); and says
/// what it found (a resumed crawl, changed settings, paused hosts, a re-crawl round).
pub async fn open_storage(a: &StateArgs, s: Storage<'_>) -> Result<Opened> {
    if s.recrawl && a.memory {
        // Usage: said before anything is opened.
        return Err(super::outcome::usage(anyhow::anyhow!(
            "--recrawl needs a state directory or Redis, which keep what each page was; --memory does not"
        )));
    }
    let store = store_of(a, &s)?;
    let opened = store.open(&s.id).await.map_err(|e| match e {
        // A mistake in the options, as another output is.
        OpenError::Settings { .. } | OpenError::NotInRedis(_) => {
            super::outcome::usage(anyhow::anyhow!("{}{e}", s.who))
        }
        other => other.into(),
    })?;
    if !opened.changed.is_empty() {
        let each: Vec<String> = opened.changed.iter().map(ToString::to_string).collect();
        say!("{}settings changed since the last run: {}", s.who, each.join(", "));
    }
    if let Some(store) = &opened.embedded {
        announce(store, s.who, s.max_host_pause, s.scheduled).await?;
        if s.recrawl {
            recrawl(store, s.who, s.conditional).await?;
        }
    }
    if let (Some(redis), Store::Redis(r)) = (&opened.redis, &store) {
        joined_redis(redis, r, &s, &opened).await?;
    }
    Ok(opened)
}

/// Says how this worker joined the crawl in Redis (and what `--fresh` cleared), warns when a
/// crawl new in Redis finds its outputs holding data, and opens a re-crawl round if asked.
async fn joined_redis(redis: &RedisFrontier, r: &RedisStore, s: &Storage<'_>, opened: &Opened) -> Result<()> {
    let (crawl, url, worker) = (&r.crawl, &r.url, &r.worker);
    if let Some(keys) = opened.cleared {
        say!("{}crawl {crawl:?} cleared in Redis ({keys} keys)", s.who);
    }
    if opened.joined == Some(Joined::New) && !r.fresh {
        outputs_predate(s, crawl, url);
    }
    let stats = redis.stats().await?;
    say!(
        "{}worker {worker:?} joins crawl {crawl:?} on {url} ({} queued, {} in flight, {} failed)",
        s.who,
        stats.queued,
        stats.leased,
        stats.failed
    );
    if s.recrawl {
        recrawl_redis(redis, s.who, s.conditional).await?;
    }
    Ok(())
}

/// The default worker name: this machine's host name and the outputs, so the same command on
/// the same machine is the same worker, and two commands writing elsewhere are two.
fn default_worker(outputs: &[String]) -> String {
    // A file output (`jsonl:out.jsonl`) by its absolute path; stdout and databases as named.
    let outputs: Vec<String> = outputs
        .iter()
        .map(|o| match o.split_once(':') {
            Some((kind, path)) if !path.contains("://") && path != "-" => {
                let path =
                    std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string());
                format!("{kind}:{path}")
            }
            _ => o.clone(),
        })
        .collect();
    format!("{}:{}", kumo::store::host_name(), outputs.join(","))
}

/// A crawl new in Redis (no key of it there, and no `--fresh` cleared it) whose worker's output
/// files already hold data: if an earlier run of the crawl wrote them, the crawl's keys have
/// vanished from Redis since, and nothing can resume them. Said before the outputs are opened
/// (a file holding data is then refused unless it may be replaced), since nothing in Redis is
/// left to tell it later.
fn outputs_predate(s: &Storage<'_>, crawl: &str, url: &str) {
    for path in &s.files {
        let Ok(meta) = std::fs::metadata(path) else { continue };
        if meta.len() == 0 {
            continue;
        }
        tracing::warn!(
            "{}crawl {crawl:?} is new in Redis at {url} (no key of it there), but {path} already holds \
             {} bytes: if an earlier run of this crawl wrote them, the crawl's state has vanished from \
             Redis since (restarted without persistence, or flushed) and cannot be resumed; start over \
             with --fresh, and run Redis with persistence (appendonly yes)",
            s.who,
            meta.len(),
            path = path.display()
        );
    }
}

/// The crawl's name in Redis for a crawl of `starts`: the state directory's name.
pub fn derived_crawl(starts: &[Url]) -> String {
    derived_dir(starts).file_name().and_then(|f| f.to_str()).unwrap_or("crawl").to_string()
}

/// A spider-file site's origin: the file (made absolute) and the site's name.
pub fn spider_origin(file: &Path, site: &str) -> String {
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    format!("spider file {}, site \"{site}\"", file.display())
}
