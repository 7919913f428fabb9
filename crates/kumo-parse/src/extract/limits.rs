//! Bounds on what one page can cost the models run on it: how deeply its elements nest, how
//! long extraction may take, how much text its values may hold. A page past one of them fails
//! with an [`ExtractError`] (the crawl records it and goes on) instead of freezing a crawl.
//!
//! Why a depth cap: html5ever's tree builder and skyscraper's XPath tree and evaluator take time
//! quadratic in the nesting depth (36 s for a page 100 000 `<div>`s deep), and neither can be
//! interrupted from outside. Browsers cap depth too (Chromium at 512); real pages stay far
//! below (a few dozen levels).

use std::cell::Cell;
use std::time::{Duration, Instant};

use thiserror::Error;

/// Deepest element nesting a page may have for models to run on it.
pub const MAX_DEPTH: usize = 512;

/// How long the models on one page may take together, unless [`Document::with_budget`] says
/// otherwise. Ordinary pages take milliseconds.
///
/// [`Document::with_budget`]: super::Document::with_budget
pub const EXTRACT_BUDGET: Duration = Duration::from_secs(5);

/// Most bytes of text the values of one extraction may hold (an element's text holds its
/// descendants' text, so nested matches multiply a page: 512 levels of a 10 MiB page would be
/// 5 GiB).
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// Why the models could not run on a page. The page is failed, not the model.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExtractError {
    /// The page nests elements deeper than the limit: no DOM is built for it.
    #[error("the page nests elements deeper than {limit} levels, so no model runs on it")]
    TooDeep {
        /// The deepest nesting allowed ([`MAX_DEPTH`]).
        limit: usize,
    },
    /// The models on the page ran past its time budget.
    #[error("extraction ran past its budget of {} ms on this page", budget.as_millis())]
    Timeout {
        /// The page's budget ([`EXTRACT_BUDGET`] unless its document was given another).
        budget: Duration,
    },
    /// The values taken from the page hold more text than the limit.
    #[error("the values extracted from this page exceed {limit} bytes")]
    TooLarge {
        /// The most bytes allowed ([`MAX_VALUE_BYTES`]).
        limit: usize,
    },
}

impl ExtractError {
    /// A short name for the failure list (`too-deep`, `extract-timeout`, `extract-too-large`).
    pub fn kind(&self) -> &'static str {
        match self {
            ExtractError::TooDeep { .. } => "too-deep",
            ExtractError::Timeout { .. } => "extract-timeout",
            ExtractError::TooLarge { .. } => "extract-too-large",
        }
    }
}

/// A page's time budget: the clock starts at the first extraction on the page.
#[derive(Debug)]
pub(super) struct Budget {
    budget: Duration,
    deadline: Cell<Option<Instant>>,
}

impl Budget {
    pub(super) fn new(budget: Duration) -> Budget {
        Budget { budget, deadline: Cell::new(None) }
    }

    /// Starts the clock if it has not started.
    pub(super) fn start(&self) {
        if self.deadline.get().is_none() {
            self.deadline.set(Some(Instant::now() + self.budget));
        }
    }

    /// An error once the deadline has passed.
    pub(super) fn check(&self) -> Result<(), ExtractError> {
        match self.deadline.get() {
            Some(deadline) if Instant::now() > deadline => Err(ExtractError::Timeout { budget: self.budget }),
            _ => Ok(()),
        }
    }
}
