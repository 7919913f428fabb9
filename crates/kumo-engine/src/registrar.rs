//! The seeds' Registrar: several downloader modules (one per proxy, say), each request handed
//! to the one with the best (lowest) score. The default score prefers fewer requests in hand
//! and fewer recent errors, so a failing downloader is soon left alone. Downloaders can be
//! registered and unregistered while the crawl runs; unregistered ones stay in the summary.

use std::sync::{Arc, Mutex, RwLock};

use kumo_core::{CounterSnapshot, ModuleId, ModuleSummary};
use kumo_downloader::Downloader;

/// What a score calculator sees of a downloader.
#[derive(Debug, Clone, Copy)]
pub struct DownloaderLoad {
    pub counts: CounterSnapshot,
    /// Recent failures, decayed: each outcome multiplies it by 0.9, each failure adds 1.
    pub recent_errors: f64,
}

/// Turns a load into a score; lower wins.
pub type ScoreFn = Arc<dyn Fn(&DownloaderLoad) -> u64 + Send + Sync>;

/// The default score: requests in hand, plus a heavy weight on recent errors.
pub fn default_score(load: &DownloaderLoad) -> u64 {
    load.counts.handling * 4 + (load.recent_errors * 64.0) as u64
}

/// One registered downloader.
pub struct Registered {
    pub downloader: Downloader,
    recent_errors: Mutex<f64>,
}

impl Registered {
    /// Records the outcome of one fetch for the score.
    pub fn record(&self, ok: bool) {
        let mut e = self.recent_errors.lock().unwrap_or_else(|p| p.into_inner());
        *e = *e * 0.9 + if ok { 0.0 } else { 1.0 };
    }

    pub fn load(&self) -> DownloaderLoad {
        DownloaderLoad {
            counts: self.downloader.counters().snapshot(),
            recent_errors: *self.recent_errors.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// Why a registrar call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrarError {
    #[error("no downloader {0} is registered")]
    Unknown(String),
    #[error("{0} is the last downloader; a crawl needs one")]
    Last(String),
    #[error("a downloader {0} is already registered")]
    Duplicate(String),
}

/// The registered downloaders.
pub struct Registrar {
    active: RwLock<Vec<Arc<Registered>>>,
    retired: Mutex<Vec<Arc<Registered>>>,
    score: ScoreFn,
}

impl Registrar {
    /// A registrar over `downloaders` (at least one) with the default score.
    pub fn new(downloaders: Vec<Downloader>) -> Self {
        Registrar {
            active: RwLock::new(downloaders.into_iter().map(wrap).collect()),
            retired: Mutex::new(Vec::new()),
            score: Arc::new(default_score),
        }
    }

    /// Replaces the score calculator.
    pub fn with_score(mut self, score: ScoreFn) -> Self {
        self.score = score;
        self
    }

    /// The downloader with the lowest score (the first on ties).
    pub fn pick(&self) -> Arc<Registered> {
        let active = self.active.read().unwrap_or_else(|p| p.into_inner());
        if let [only] = active.as_slice() {
            return only.clone();
        }
        active
            .iter()
            .min_by_key(|r| (self.score)(&r.load()))
            .cloned()
            .expect("a registrar always holds a downloader")
    }

    pub fn register(&self, downloader: Downloader) -> Result<(), RegistrarError> {
        let mut active = self.active.write().unwrap_or_else(|p| p.into_inner());
        if active.iter().any(|r| r.downloader.id() == downloader.id()) {
            return Err(RegistrarError::Duplicate(downloader.id().to_string()));
        }
        active.push(wrap(downloader));
        Ok(())
    }

    /// Stops handing requests to `id`; what it has in hand finishes.
    pub fn unregister(&self, id: &ModuleId) -> Result<(), RegistrarError> {
        let mut active = self.active.write().unwrap_or_else(|p| p.into_inner());
        let pos = active
            .iter()
            .position(|r| r.downloader.id() == id)
            .ok_or_else(|| RegistrarError::Unknown(id.to_string()))?;
        if active.len() == 1 {
            return Err(RegistrarError::Last(id.to_string()));
        }
        let gone = active.remove(pos);
        self.retired.lock().unwrap_or_else(|p| p.into_inner()).push(gone);
        Ok(())
    }

    /// The IDs of the downloaders taking requests.
    pub fn active_ids(&self) -> Vec<ModuleId> {
        self.active
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|r| r.downloader.id().clone())
            .collect()
    }

    /// Every downloader, active and retired, for the summary.
    pub fn summaries(&self) -> Vec<ModuleSummary> {
        let active = self.active.read().unwrap_or_else(|p| p.into_inner()).clone();
        let retired = self.retired.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut all: Vec<(Arc<Registered>, bool)> =
            active.into_iter().map(|r| (r, true)).chain(retired.into_iter().map(|r| (r, false))).collect();
        all.sort_by_key(|(r, _)| r.downloader.id().serial);
        all.into_iter()
            .map(|(r, active)| {
                let load = r.load();
                ModuleSummary {
                    id: r.downloader.id().clone(),
                    counts: load.counts,
                    extra: serde_json::json!({
                        "active": active,
                        "score": (self.score)(&load),
                        "proxy": r.downloader.config().proxy,
                    }),
                }
            })
            .collect()
    }
}

fn wrap(downloader: Downloader) -> Arc<Registered> {
    Arc::new(Registered { downloader, recent_errors: Mutex::new(0.0) })
}
