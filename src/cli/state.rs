//! The crawl's state directory: derived from the start URLs unless `--state` names one,
//! discarded by `--fresh`, opened as the embedded store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use kumo_frontier::{Frontier, Politeness};
use kumo_store_embedded::{Durability, EmbeddedConfig, EmbeddedStore};
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

/// Opens the store for a crawl of `starts`, or `None` with `--memory`.
pub fn open(a: &StateArgs, starts: &[Url], politeness: Politeness) -> Result<Option<Arc<EmbeddedStore>>> {
    let path = a.dir.clone().unwrap_or_else(|| derived_dir(starts));
    open_at(a, &path, politeness)
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
/// to lift it; `who` prefixes the lines.
pub async fn announce(store: &EmbeddedStore, who: &str, max_pause: Duration) -> Result<()> {
    if store.resumed() {
        let stats = store.stats().await?;
        eprintln!(
            "{who}resuming from {} ({} queued, {} failed; --fresh starts over)",
            store.dir().display(),
            stats.queued,
            stats.failed
        );
        for h in store.host_views() {
            let Some(left) = h.paused_for else { continue };
            let waits = left.min(max_pause);
            eprintln!(
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
