//! URL rules: lists of regexes searched in absolute URLs.

use regex::{Regex, RegexSet, RegexSetBuilder};

/// A set of URL patterns. An empty set matches nothing.
#[derive(Debug, Clone)]
pub struct UrlRules {
    set: RegexSet,
}

/// Patterns come from users: cap compiled size so a hostile pattern cannot eat memory.
const SIZE_LIMIT: usize = 1 << 22;

impl UrlRules {
    /// The set of `patterns`; an error when one does not compile, or they compile too large.
    pub fn new<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> Result<Self, regex::Error> {
        Ok(UrlRules { set: RegexSetBuilder::new(patterns).size_limit(SIZE_LIMIT).build()? })
    }

    /// The set without patterns: it matches nothing.
    pub fn empty() -> Self {
        UrlRules { set: RegexSet::empty() }
    }

    /// Checks one pattern alone, for an error that names it.
    pub fn check(pattern: &str) -> Result<(), regex::Error> {
        regex::RegexBuilder::new(pattern).size_limit(SIZE_LIMIT).build().map(|_: Regex| ())
    }

    /// Whether the set has no pattern.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether any pattern is found anywhere in `url`.
    pub fn is_match(&self, url: &str) -> bool {
        self.set.is_match(url)
    }
}
