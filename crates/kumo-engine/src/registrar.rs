//! The seeds' Registrar: several downloader modules (one per proxy, say), each request handed
//! to the one with the best (lowest) score. The default score prefers fewer requests in hand
//! and fewer recent errors, so a failing downloader is soon left alone. Downloaders can be
//! registered and unregistered while the crawl runs; unregistered ones stay in the summary.
//!
//! Two kinds of downloader take requests: the crawl's own (*general*: direct, or one per
//! crawl-wide proxy) take every request whose limit rule names no proxy; a *rule* downloader
//! (one per proxy a limit rule names) takes only the requests of rules naming its proxy. A
//! request whose rule names proxies goes to the best of the active downloaders with one of
//! them, general or not; it never goes direct.
//!
//! What a module is scored by ([`ModuleLoad`], and `RecentErrors`, which decays), the score
//! ([`ScoreFn`], [`default_score`]) and the pick (`lowest`) are shared with the analyzers'
//! registrar (`analyzer_registrar.rs`).

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use kumo_core::{CounterSnapshot, ModuleId, ModuleSummary};
use kumo_downloader::Downloader;

/// What a score calculator sees of a registered module, a downloader or an analyzer.
#[derive(Debug, Clone, Copy)]
pub struct ModuleLoad {
    /// Its counters; `handling` is the work in hand: requests for a downloader, pages for an
    /// analyzer.
    pub counts: CounterSnapshot,
    /// Recent failures, decayed: each outcome multiplies it by 0.9, each failure adds 1, and
    /// it halves every [`ERROR_HALF_LIFE`] besides.
    pub recent_errors: f64,
}

/// The name a downloader's load had before analyzers were scored too.
pub type DownloaderLoad = ModuleLoad;

/// Turns a load into a score; lower wins.
pub type ScoreFn = Arc<dyn Fn(&ModuleLoad) -> u64 + Send + Sync>;

/// The default score: work in hand, plus a heavy weight on recent errors.
pub fn default_score(load: &ModuleLoad) -> u64 {
    load.counts.handling * 4 + (load.recent_errors * 64.0) as u64
}

/// How fast recent errors fade with time alone. Decay by outcomes only would leave a
/// module that failed a while ago with its bad score for good: it is not picked, so it
/// has no outcomes to decay by. With time it comes back and is tried again.
pub const ERROR_HALF_LIFE: Duration = Duration::from_secs(30);

/// Recent failures as of a moment.
#[derive(Clone, Copy)]
struct Mark {
    value: f64,
    at: Instant,
}

impl Mark {
    /// The value at `now`, faded by the time since `at`.
    fn at(&self, now: Instant) -> f64 {
        let halves = now.saturating_duration_since(self.at).as_secs_f64() / ERROR_HALF_LIFE.as_secs_f64();
        self.value * 0.5f64.powf(halves)
    }
}

/// A registered module's recent failures, decaying by outcome and by time.
pub(crate) struct RecentErrors(Mutex<Mark>);

impl RecentErrors {
    pub fn new() -> Self {
        RecentErrors(Mutex::new(Mark { value: 0.0, at: Instant::now() }))
    }

    /// Records the outcome of one piece of work.
    pub fn record(&self, ok: bool) {
        let now = Instant::now();
        let mut e = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let value = e.at(now) * 0.9 + if ok { 0.0 } else { 1.0 };
        *e = Mark { value, at: now };
    }

    /// The value now.
    pub fn now(&self) -> f64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).at(Instant::now())
    }

    /// Moves every recorded error back in time by `ago`, as if nothing had happened since.
    #[cfg(test)]
    pub fn age(&self, ago: Duration) {
        let mut e = self.0.lock().unwrap_or_else(|p| p.into_inner());
        e.at = e.at.checked_sub(ago).expect("the machine has been up longer than that");
    }
}

/// The candidate with the lowest score (the first on ties).
pub(crate) fn lowest<'a, T: 'a>(
    candidates: impl IntoIterator<Item = &'a Arc<T>>,
    score: &ScoreFn,
    load: impl Fn(&T) -> ModuleLoad,
) -> Option<Arc<T>> {
    candidates.into_iter().min_by_key(|c| score(&load(c))).cloned()
}

/// One registered downloader.
pub struct Registered {
    /// The downloader the requests picked for it go to.
    pub downloader: Downloader,
    recent_errors: RecentErrors,
    /// Takes requests whose rule names no proxy.
    general: bool,
}

impl Registered {
    /// Records the outcome of one fetch for the score.
    pub fn record(&self, ok: bool) {
        self.recent_errors.record(ok);
    }

    /// Whether it goes through one of `proxies` (as limit rules write them).
    fn goes_through(&self, proxies: &[String]) -> bool {
        self.downloader.config().proxy.as_ref().is_some_and(|p| proxies.contains(p))
    }

    /// Whether it takes the requests of rules naming no proxy (else only those naming its
    /// proxy).
    pub fn is_general(&self) -> bool {
        self.general
    }

    /// What the score sees of it now: its counters and its decayed recent errors.
    pub fn load(&self) -> ModuleLoad {
        ModuleLoad { counts: self.downloader.counters().snapshot(), recent_errors: self.recent_errors.now() }
    }
}

/// Why a registrar call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrarError {
    /// No active downloader has this ID.
    #[error("no downloader {0} is registered")]
    Unknown(String),
    /// This downloader is the last general one, which requests of rules naming no proxy need.
    #[error("{0} is the last downloader; a crawl needs one")]
    Last(String),
    /// A downloader of this crawl, active or retired, already has this ID.
    #[error("a downloader {0} is or was registered in this crawl")]
    Duplicate(String),
    /// This downloader (the first value) is the last one through the proxies a limit rule
    /// names (the second, joined by commas).
    #[error("{0} is the last downloader for the proxies {1}, which a limit rule names")]
    LastForRule(String, String),
}

/// The registered downloaders.
pub struct Registrar {
    active: RwLock<Vec<Arc<Registered>>>,
    retired: Mutex<Vec<Arc<Registered>>>,
    score: ScoreFn,
    /// The proxy lists of the crawl's limit rules: each keeps at least one downloader.
    rule_proxies: Vec<Vec<String>>,
}

impl Registrar {
    /// A registrar over `downloaders` (at least one, all general) with the default score.
    pub fn new(downloaders: Vec<Downloader>) -> Self {
        Registrar {
            active: RwLock::new(downloaders.into_iter().map(|d| wrap(d, true)).collect()),
            retired: Mutex::new(Vec::new()),
            score: Arc::new(default_score),
            rule_proxies: Vec::new(),
        }
    }

    /// Adds the downloaders for the proxies limit rules name (`rule_proxies`: each rule's
    /// list; a proxy also given crawl-wide is served by the general downloader already
    /// registered for it). A rule downloader only takes its rules' requests.
    pub fn with_rule_downloaders(
        mut self,
        downloaders: Vec<Downloader>,
        rule_proxies: Vec<Vec<String>>,
    ) -> Self {
        self.active
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .extend(downloaders.into_iter().map(|d| wrap(d, false)));
        self.rule_proxies = rule_proxies;
        self
    }

    /// Replaces the score calculator.
    pub fn with_score(mut self, score: ScoreFn) -> Self {
        self.score = score;
        self
    }

    /// The general downloader with the lowest score (the first on ties).
    pub fn pick(&self) -> Arc<Registered> {
        let active = self.active.read().unwrap_or_else(|p| p.into_inner());
        if let [only] = active.as_slice() {
            return only.clone();
        }
        lowest(active.iter().filter(|r| r.general), &self.score, Registered::load)
            .expect("a registrar always holds a general downloader")
    }

    /// The downloader for a request whose limit rule names `proxies`: the best of those going
    /// through one of them, or, when the rule names none, [`Registrar::pick`]. `None` only if
    /// no downloader for those proxies is registered.
    pub fn pick_for(&self, proxies: &[String]) -> Option<Arc<Registered>> {
        if proxies.is_empty() {
            return Some(self.pick());
        }
        let active = self.active.read().unwrap_or_else(|p| p.into_inner());
        lowest(active.iter().filter(|r| r.goes_through(proxies)), &self.score, Registered::load)
    }

    /// Adds a general downloader. Its ID must be new to the crawl: a retired downloader keeps
    /// its own in the summary, so a second one of that ID would mix their counts.
    pub fn register(&self, downloader: Downloader) -> Result<(), RegistrarError> {
        let mut active = self.active.write().unwrap_or_else(|p| p.into_inner());
        let retired = self.retired.lock().unwrap_or_else(|p| p.into_inner());
        if active.iter().chain(retired.iter()).any(|r| r.downloader.id() == downloader.id()) {
            return Err(RegistrarError::Duplicate(downloader.id().to_string()));
        }
        active.push(wrap(downloader, true));
        Ok(())
    }

    /// Stops handing requests to `id`; what it has in hand finishes. The last general
    /// downloader, and the last one for a rule's proxies, stay.
    pub fn unregister(&self, id: &ModuleId) -> Result<(), RegistrarError> {
        let mut active = self.active.write().unwrap_or_else(|p| p.into_inner());
        let pos = active
            .iter()
            .position(|r| r.downloader.id() == id)
            .ok_or_else(|| RegistrarError::Unknown(id.to_string()))?;
        let others = || active.iter().enumerate().filter(move |(i, _)| *i != pos).map(|(_, r)| r);
        if active[pos].general && !others().any(|r| r.general) {
            return Err(RegistrarError::Last(id.to_string()));
        }
        for proxies in &self.rule_proxies {
            if active[pos].goes_through(proxies) && !others().any(|r| r.goes_through(proxies)) {
                return Err(RegistrarError::LastForRule(id.to_string(), proxies.join(", ")));
            }
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
                        "rules_only": !r.general,
                    }),
                }
            })
            .collect()
    }
}

fn wrap(downloader: Downloader, general: bool) -> Arc<Registered> {
    Arc::new(Registered { downloader, recent_errors: RecentErrors::new(), general })
}

#[cfg(test)]
mod tests {
    use kumo_downloader::DownloaderConfig;

    use super::*;

    fn registrar_of_two() -> Registrar {
        let d = |serial| Downloader::new(serial, DownloaderConfig::default()).expect("downloader");
        Registrar::new(vec![d(1), d(2)])
    }

    #[test]
    fn recent_errors_halve_every_half_life() {
        let now = Instant::now();
        let e = Mark { value: 8.0, at: now };
        assert_eq!(e.at(now), 8.0);
        assert!((e.at(now + ERROR_HALF_LIFE) - 4.0).abs() < 1e-9);
        assert!((e.at(now + ERROR_HALF_LIFE * 3) - 1.0).abs() < 1e-9);
        // A moment before `at` (another thread's record) counts as no time at all.
        assert_eq!(Mark { value: 2.0, at: now + ERROR_HALF_LIFE }.at(now), 2.0);
    }

    #[test]
    fn a_failing_downloader_is_left_alone_then_tried_again_once_its_errors_fade() {
        let registrar = registrar_of_two();
        let first = registrar.pick();
        for _ in 0..5 {
            first.record(false);
        }
        let other = registrar.pick();
        assert_ne!(other.downloader.id(), first.downloader.id(), "the failing one is left alone");
        // Nothing is recorded for ten half-lives: the first one's errors are all but gone, so
        // it wins the tie again (the first on ties) and is tried.
        first.recent_errors.age(ERROR_HALF_LIFE * 10);
        assert!(first.load().recent_errors < 0.01, "{}", first.load().recent_errors);
        assert_eq!(registrar.pick().downloader.id(), first.downloader.id());
    }

    #[test]
    fn an_id_names_one_downloader_for_the_whole_crawl() {
        let d = |serial| Downloader::new(serial, DownloaderConfig::default()).expect("downloader");
        let registrar = registrar_of_two();
        assert!(matches!(registrar.register(d(2)), Err(RegistrarError::Duplicate(_))), "an active one's");
        registrar.unregister(&d(1).id().clone()).unwrap();
        assert!(matches!(registrar.register(d(1)), Err(RegistrarError::Duplicate(_))), "a retired one's");
        registrar.register(d(3)).unwrap();
        let ids: Vec<u64> = registrar.summaries().iter().map(|s| s.id.serial).collect();
        assert_eq!(ids, [1, 2, 3], "each ID once in the summary");
    }
}
