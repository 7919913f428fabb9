//! When a kept page is asked for again: its re-visit interval, set by rules on its URL (list
//! pages hourly, detail pages weekly) and, when adaptive, moved by what each visit found, as
//! Nutch's and StormCrawler's fetch schedules do: shorter after a change, longer after none.

use std::time::Duration;

use url::Url;

/// A rule: pages whose URL the regex finds a match in are re-visited every `every`.
#[derive(Debug, Clone)]
pub struct RevisitRule {
    /// Looked for anywhere in the URL (not anchored unless it says `^` or `$`).
    pub pattern: regex::Regex,
    /// The matching pages' interval; with [`Adaptive`], the one they start from.
    pub every: Duration,
}

/// Moves an interval after each visit: times `1 - rate` after a change, `1 + rate` after
/// none, kept within `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    /// The shortest interval (above 0).
    pub min: Duration,
    /// The longest interval.
    pub max: Duration,
    /// At most 0.4: larger steps make the interval swing (Nutch's warning).
    pub rate: f64,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive { min: Duration::from_secs(60), max: Duration::from_secs(30 * 86_400), rate: 0.2 }
    }
}

impl Adaptive {
    /// Why these bounds cannot work, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        if !(self.rate > 0.0 && self.rate <= 0.4) {
            return Err(format!("rate must be above 0 and at most 0.4 (got {})", self.rate));
        }
        if self.min.is_zero() || self.min > self.max {
            return Err("min must be above 0 and at most max".into());
        }
        Ok(())
    }
}

/// The re-visit intervals of a crawl's pages. The default asks for every page on every run.
#[derive(Debug, Clone, Default)]
pub struct RevisitPolicy {
    /// First match wins.
    pub rules: Vec<RevisitRule>,
    /// For pages no rule matches.
    pub every: Duration,
    /// Moves each page's interval by what its visits find; `None`: the rules' intervals hold.
    pub adaptive: Option<Adaptive>,
}

/// What a visit of a kept page found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Its first fetch.
    First,
    /// Asked again with the interval it had; `changed`: another body came.
    Again {
        /// The interval the page had; zero when none was recorded (it starts from its rule's).
        interval: Duration,
        /// Its body differs from the last visit's.
        changed: bool,
    },
}

impl RevisitPolicy {
    /// Whether every page is asked for on every run (nothing to keep track of between runs).
    pub fn every_run(&self) -> bool {
        self.rules.is_empty() && self.every.is_zero() && self.adaptive.is_none()
    }

    /// The interval its rules give `url`.
    pub fn base(&self, url: &Url) -> Duration {
        self.rules.iter().find(|r| r.pattern.is_match(url.as_str())).map_or(self.every, |r| r.every)
    }

    /// The page's interval until its next visit, after `visit`.
    pub fn interval(&self, url: &Url, visit: Visit) -> Duration {
        let base = self.base(url);
        let Some(a) = self.adaptive else { return base };
        let next = match visit {
            Visit::First => base,
            Visit::Again { interval, changed } => {
                // A record from before the rules (or from a non-adaptive run) starts at the base.
                let from = if interval.is_zero() { base } else { interval };
                from.mul_f64(if changed { 1.0 - a.rate } else { 1.0 + a.rate })
            }
        };
        next.clamp(a.min, a.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn policy(adaptive: Option<Adaptive>) -> RevisitPolicy {
        RevisitPolicy {
            rules: vec![RevisitRule {
                pattern: regex::Regex::new("/news/").unwrap(),
                every: Duration::from_secs(3600),
            }],
            every: Duration::from_secs(7 * 86_400),
            adaptive,
        }
    }

    #[test]
    fn rules_pick_the_interval_first_match_first() {
        let p = policy(None);
        assert_eq!(p.interval(&url("http://a/news/1"), Visit::First), Duration::from_secs(3600));
        assert_eq!(p.interval(&url("http://a/about"), Visit::First), Duration::from_secs(7 * 86_400));
        let again = Visit::Again { interval: Duration::from_secs(5), changed: true };
        assert_eq!(
            p.interval(&url("http://a/news/1"), again),
            Duration::from_secs(3600),
            "fixed, not adaptive"
        );
        assert!(RevisitPolicy::default().every_run());
        assert!(!p.every_run());
    }

    #[test]
    fn adaptive_intervals_shrink_on_change_and_grow_without_within_bounds() {
        let a = Adaptive { min: Duration::from_secs(1800), max: Duration::from_secs(4 * 3600), rate: 0.2 };
        let p = policy(Some(a));
        let news = url("http://a/news/1");
        let hour = Duration::from_secs(3600);
        assert_eq!(p.interval(&news, Visit::First), hour);
        let grown = p.interval(&news, Visit::Again { interval: hour, changed: false });
        assert_eq!(grown, Duration::from_secs(4320));
        let shrunk = p.interval(&news, Visit::Again { interval: hour, changed: true });
        assert_eq!(shrunk, Duration::from_secs(2880));
        // Kept within bounds, however often it changes or does not.
        let mut i = hour;
        for _ in 0..50 {
            i = p.interval(&news, Visit::Again { interval: i, changed: true });
        }
        assert_eq!(i, a.min);
        for _ in 0..50 {
            i = p.interval(&news, Visit::Again { interval: i, changed: false });
        }
        assert_eq!(i, a.max);
        // An interval never set (an old record) starts from the rule's.
        assert_eq!(
            p.interval(&news, Visit::Again { interval: Duration::ZERO, changed: false }),
            Duration::from_secs(4320)
        );
    }

    #[test]
    fn adaptive_bounds_are_checked() {
        assert!(Adaptive::default().check().is_ok());
        assert!(Adaptive { rate: 0.5, ..Adaptive::default() }.check().unwrap_err().contains("0.4"));
        let bad = Adaptive { min: Duration::from_secs(10), max: Duration::from_secs(5), rate: 0.2 };
        assert!(bad.check().unwrap_err().contains("min"));
    }
}
