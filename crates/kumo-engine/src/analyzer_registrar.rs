//! The analyzers' registrar, as the downloaders' is (`registrar.rs`, whose load, decay and
//! score it shares): several analyzers can be registered for a crawl, each with its ID (`A1`,
//! `A2`, …), counters and decaying recent errors. The parser tasks stay as they were
//! (`CrawlConfig::parser_count` of them); for each page a parser task picks the registered
//! analyzer with the best (lowest) score and counts the page on it. With the default score a
//! slow analyzer (pages in hand) or a failing one (recent errors) gets fewer pages.
//!
//! An analyzer's *error* is a page whose analysis failed through the analyzer's own doing: a
//! script hook failed on it (`Analysis::script_errors`, or a failed `Analyzer::steer_link`),
//! or a model stopped at an extraction limit (`Analysis::extract_errors`). Those are what the
//! parse stage fails a page for (`script`, `extract`) that come from the analyzer, so another
//! analyzer may well do better. `Analysis::issues` (malformed markup, a bad link) and a
//! redirect that cannot be followed are the page's own: any analyzer would meet them, so they
//! count against none.

use std::sync::Arc;

use kumo_core::{ModuleCounters, ModuleId, ModuleKind, ModuleSummary};

use crate::analyze::Analyzer;
use crate::registrar::{ModuleLoad, RecentErrors, ScoreFn, default_score, lowest};

/// One registered analyzer.
pub(crate) struct RegisteredAnalyzer {
    id: ModuleId,
    analyzer: Arc<dyn Analyzer>,
    counters: ModuleCounters,
    recent_errors: RecentErrors,
}

impl RegisteredAnalyzer {
    pub fn id(&self) -> &ModuleId {
        &self.id
    }

    pub fn analyzer(&self) -> &dyn Analyzer {
        self.analyzer.as_ref()
    }

    pub fn load(&self) -> ModuleLoad {
        ModuleLoad { counts: self.counters.snapshot(), recent_errors: self.recent_errors.now() }
    }

    /// A page is handed to it: in hand until [`Self::finish`] or [`Self::finish_unanalyzed`].
    pub fn begin(&self) {
        self.counters.called();
        self.counters.accepted();
    }

    /// The page's analysis ended; `failed` as the module docs say. The outcome counts for the
    /// score.
    pub fn finish(&self, failed: bool) {
        self.counters.finished(!failed);
        self.recent_errors.record(!failed);
    }

    /// The page needed no analysis (a re-crawled page found unchanged): it is done, and says
    /// nothing of the analyzer, so the score is left as it is.
    pub fn finish_unanalyzed(&self) {
        self.counters.finished(true);
    }
}

/// The registered analyzers of a crawl (at least one).
pub(crate) struct AnalyzerRegistrar {
    analyzers: Vec<Arc<RegisteredAnalyzer>>,
    score: ScoreFn,
}

impl AnalyzerRegistrar {
    /// `analyzers` as `A1`, `A2`, … in their order, with the default score; `None` when there
    /// is none.
    pub fn new(analyzers: Vec<Arc<dyn Analyzer>>) -> Option<Self> {
        if analyzers.is_empty() {
            return None;
        }
        let analyzers = (1..)
            .zip(analyzers)
            .map(|(serial, analyzer)| {
                Arc::new(RegisteredAnalyzer {
                    id: ModuleId::new(ModuleKind::Analyzer, serial),
                    analyzer,
                    counters: ModuleCounters::default(),
                    recent_errors: RecentErrors::new(),
                })
            })
            .collect();
        Some(AnalyzerRegistrar { analyzers, score: Arc::new(default_score) })
    }

    /// Replaces the score calculator.
    pub fn with_score(mut self, score: ScoreFn) -> Self {
        self.score = score;
        self
    }

    /// The analyzer with the lowest score (the first registered on ties).
    pub fn pick(&self) -> Arc<RegisteredAnalyzer> {
        if let [only] = self.analyzers.as_slice() {
            return only.clone();
        }
        lowest(&self.analyzers, &self.score, RegisteredAnalyzer::load).expect("at least one analyzer")
    }

    /// Every analyzer, for the summary: its ID, its counters and its score now.
    pub fn summaries(&self) -> Vec<ModuleSummary> {
        self.analyzers
            .iter()
            .map(|a| {
                let load = a.load();
                ModuleSummary {
                    id: a.id.clone(),
                    counts: load.counts,
                    extra: serde_json::json!({ "score": (self.score)(&load) }),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use kumo_core::Response;

    use super::*;
    use crate::analyze::{Analysis, PageAnalyzer};
    use crate::registrar::ERROR_HALF_LIFE;

    /// Never called: the pick only reads the counters and the errors.
    struct Unused;

    impl Analyzer for Unused {
        fn analyze(&self, _: &Response) -> Analysis {
            unreachable!("the pick does not analyze")
        }
    }

    fn two() -> AnalyzerRegistrar {
        AnalyzerRegistrar::new(vec![Arc::new(Unused), Arc::new(PageAnalyzer)]).expect("two analyzers")
    }

    fn serial(a: &RegisteredAnalyzer) -> u64 {
        a.id().serial
    }

    #[test]
    fn no_analyzer_is_no_registrar() {
        assert!(AnalyzerRegistrar::new(Vec::new()).is_none());
    }

    #[test]
    fn equal_scores_go_to_the_first() {
        let r = two();
        assert_eq!(serial(&r.pick()), 1);
        // Both with a page done and none in hand: still equal.
        for a in &r.analyzers {
            a.begin();
            a.finish(false);
        }
        assert_eq!(serial(&r.pick()), 1);
    }

    #[test]
    fn the_busier_one_is_passed_over() {
        let r = two();
        let first = r.pick();
        first.begin();
        assert_eq!(serial(&r.pick()), 2, "A1 has a page in hand");
        let second = r.pick();
        second.begin();
        second.begin();
        assert_eq!(serial(&r.pick()), 1, "A2 has two in hand, A1 one");
        second.finish(false);
        second.finish(false);
        first.finish(false);
        assert_eq!(serial(&r.pick()), 1, "idle again: the first on ties");
    }

    #[test]
    fn the_one_with_errors_is_passed_over_until_they_fade() {
        let r = two();
        let first = r.pick();
        first.begin();
        first.finish(true);
        assert_eq!(first.load().counts.completed, 0, "a failed analysis is not completed");
        // One recent error (64) outweighs several pages in hand (4 each).
        let second = r.pick();
        assert_eq!(serial(&second), 2);
        for _ in 0..3 {
            second.begin();
        }
        assert_eq!(serial(&r.pick()), 2);
        first.recent_errors.age(ERROR_HALF_LIFE * 10);
        assert_eq!(serial(&r.pick()), 1, "its errors faded; A2 is the busier now");
    }

    #[test]
    fn an_unanalyzed_page_leaves_the_errors_as_they_are() {
        let r = two();
        let first = r.pick();
        first.begin();
        first.finish(true);
        let before = first.load().recent_errors;
        first.begin();
        first.finish_unanalyzed();
        let after = first.load();
        assert!(after.recent_errors > before * 0.99, "{before} then {}", after.recent_errors);
        assert_eq!((after.counts.called, after.counts.completed, after.counts.handling), (2, 1, 0));
    }

    #[test]
    fn the_score_can_be_replaced_and_shows_in_the_summary() {
        // Prefers the busiest: the opposite of the default.
        let r = two().with_score(Arc::new(|l: &ModuleLoad| 100 - l.counts.handling));
        r.analyzers[1].begin();
        assert_eq!(serial(&r.pick()), 2);
        let s = r.summaries();
        let ids: Vec<String> = s.iter().map(|m| m.id.to_string()).collect();
        assert_eq!(ids, ["A1", "A2"]);
        assert_eq!(s[0].extra["score"], 100);
        assert_eq!(s[1].extra["score"], 99);
        assert_eq!(s[1].counts.handling, 1);
    }
}
