//! What a crawl's state keeps of its settings, and what a resumed crawl may change: each
//! setting by name, as a user would write it. A resumed crawl compares its own record with
//! the stored one; free settings take the new value (and are reported), fixed ones are
//! refused by name with both values.

use std::collections::BTreeMap;
use std::fmt;

use crate::{Resume, Settings};

/// The name under which a record keeps the crawl's start URLs (not a setting of the table,
/// and fixed: another start is another crawl).
pub const STARTS: &str = "start";

/// A crawl's settings, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record(BTreeMap<String, String>);

/// One setting whose value differs from the stored one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The setting's name, or [`STARTS`].
    pub name: String,
    /// Its value in the stored record, as a user would write it.
    pub stored: String,
    /// Its value in the resumed crawl's record.
    pub now: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} → {}", self.name, self.stored, self.now)
    }
}

/// What differs between a stored record and a resumed crawl's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Changes a resumed crawl takes.
    pub free: Vec<Change>,
    /// Changes it refuses.
    pub fixed: Vec<Change>,
}

impl Record {
    /// The record of resolved settings, with the crawl's start URLs.
    pub fn of(settings: &Settings, starts: &[impl AsRef<str>]) -> Record {
        let mut map: BTreeMap<String, String> =
            settings.texts().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let starts: Vec<&str> = starts.iter().map(AsRef::as_ref).collect();
        map.insert(STARTS.into(), format!("{starts:?}"));
        Record(map)
    }

    /// Read from what [`Record::to_json`] wrote; `None` if it is not such a record.
    pub fn from_json(text: &str) -> Option<Record> {
        serde_json::from_str(text).ok().map(Record)
    }

    /// The record as one JSON object of names to values, for the state to keep.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).expect("a map of strings")
    }

    /// The value kept for a setting (or [`STARTS`]), as a user would write it; `none`: unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// What `self` (the resumed crawl's) changes of `stored`. A setting the stored record
    /// lacks (a kumo that did not have it yet) or has and this one lacks is no change.
    pub fn compare(&self, stored: &Record) -> Comparison {
        let mut c = Comparison::default();
        for (name, now) in &self.0 {
            let Some(was) = stored.0.get(name) else { continue };
            if was == now {
                continue;
            }
            let change = Change { name: name.clone(), stored: was.clone(), now: now.clone() };
            let free = crate::setting(name).is_some_and(|s| s.resume == Resume::Free);
            if free { c.free.push(change) } else { c.fixed.push(change) }
        }
        c
    }
}

impl Comparison {
    /// The refusal to resume, naming each fixed setting with its stored and new value.
    pub fn refusal(&self) -> Option<String> {
        if self.fixed.is_empty() {
            return None;
        }
        let each: Vec<String> =
            self.fixed.iter().map(|c| format!("{} was {}, now {}", c.name, c.stored, c.now)).collect();
        Some(format!(
            "the crawl was started with other settings, which a resumed crawl cannot change: {}",
            each.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layer, Source};

    fn record(flags: &[(&str, &str)], start: &str) -> Record {
        let mut l = Layer::new(Source::Flag);
        for (k, v) in flags {
            l.set(k, v).unwrap();
        }
        Record::of(&Settings::resolve([&l]).unwrap(), &[start])
    }

    #[test]
    fn free_changes_are_taken_and_fixed_ones_named() {
        let stored = record(&[("delay", "20ms"), ("strip_param", "ref")], "http://a.test/");
        let same = record(&[("delay", "20ms"), ("strip_param", "ref")], "http://a.test/");
        assert_eq!(same.compare(&stored), Comparison::default());
        let now = record(&[("delay", "0s"), ("strip_param", "sid")], "http://b.test/");
        let c = now.compare(&stored);
        assert_eq!(c.free.iter().map(ToString::to_string).collect::<Vec<_>>(), ["delay: 20ms → 0s"]);
        let refusal = c.refusal().unwrap();
        assert!(refusal.contains("start was [\"http://a.test/\"], now [\"http://b.test/\"]"), "{refusal}");
        assert!(refusal.contains("strip_param was [\"ref\"], now [\"sid\"]"), "{refusal}");
        assert_eq!(Record::from_json(&stored.to_json()), Some(stored));
        let plain = record(&[], "http://a.test/");
        let refusal = record(&[("strip_param", "ref")], "http://a.test/").compare(&plain).refusal().unwrap();
        assert!(
            refusal.contains("strip_param was [], now [\"ref\"]"),
            "a list set where none was: {refusal}"
        );
        let c = record(&[("max_duration", "1h")], "http://a.test/").compare(&plain);
        assert_eq!(c.free[0].to_string(), "max_duration: none → 1h");
    }
}
