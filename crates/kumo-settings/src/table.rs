//! What the table says of each setting, and how a name (new or old, key or flag) finds its
//! entry. The entries themselves are in `entries.rs`.

use crate::{Kind, Value};

/// One setting: its names, its documentation and its rules, for every surface at once.
#[derive(Debug)]
pub struct Setting {
    /// The spider-file key; the flag is the same with `-` for `_` (`user_agent`,
    /// `--user-agent`).
    pub name: &'static str,
    /// One line for `--help` and the reference.
    pub doc: &'static str,
    /// The shape of its value, with its bounds.
    pub kind: Kind,
    /// The default, spelt as a user would write it; empty: unset (a limit that is off).
    pub default: &'static str,
    /// What `--help` calls the value.
    pub value_name: &'static str,
    /// The short flag, if any (`-c`).
    pub short: Option<char>,
    /// The `--help` heading and reference section it is listed under.
    pub group: Group,
    /// Whether a resumed crawl may take another value.
    pub resume: Resume,
    /// Earlier spellings, still read, with a warning that names this one.
    pub old: &'static [Old],
    /// Settings that cannot be set together with this one.
    pub conflicts: &'static [&'static str],
    /// A switch this one needs on (`auto_throttle_target` needs `auto_throttle`).
    pub requires: Option<&'static str>,
    /// A further check of each text value (each item of a list).
    pub check: Option<Check>,
}

/// A check of one text value: the reason it is refused.
pub type Check = fn(&str) -> Result<(), String>;

/// Where a setting belongs, for `--help` headings and the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// What is crawled.
    Scope,
    /// How URLs are told apart.
    Dedup,
    /// How hard hosts are pressed.
    Politeness,
    /// When the crawl stops.
    Limits,
    /// How pages are fetched.
    Fetching,
    /// robots.txt, retries and pauses.
    Robots,
}

impl Group {
    /// The heading `--help` and the reference print.
    pub fn title(self) -> &'static str {
        match self {
            Group::Scope => "Scope",
            Group::Dedup => "De-duplication",
            Group::Politeness => "Politeness",
            Group::Limits => "Limits",
            Group::Fetching => "Fetching",
            Group::Robots => "Robots, retries and pauses",
        }
    }
}

/// What a resumed crawl does when the setting differs from the stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The new value holds, and the summary says what changed.
    Free,
    /// Refused: the stored frontier was built with the old value (what is crawled, how URLs
    /// are told apart).
    Fixed,
}

/// An earlier spelling of a setting.
#[derive(Debug)]
pub struct Old {
    /// The old spider-file key (`delay_ms`), if the file spelt it so.
    pub key: Option<&'static str>,
    /// The old flag, without dashes (`delay-ms`), if the command line spelt it so.
    pub flag: Option<&'static str>,
    /// How its value reads into the setting's.
    pub unit: OldUnit,
}

/// How an old spelling's value reads into the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OldUnit {
    /// As it is.
    Same,
    /// A whole number of milliseconds (`delay_ms = 250`).
    Millis,
    /// The opposite switch (`obey_robots = false` is `ignore_robots = true`).
    Inverted,
}

/// A name found in the table: the setting, and the old spelling if the name was one.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    /// The setting the name finds.
    pub setting: &'static Setting,
    /// The old spelling the name was; `None`: the setting's own name.
    pub old: Option<&'static Old>,
}

/// The setting a spider-file key names (its name or an old key).
pub fn by_key(key: &str) -> Option<Found> {
    crate::SETTINGS.iter().find_map(|s| {
        if s.name == key {
            return Some(Found { setting: s, old: None });
        }
        s.old.iter().find(|o| o.key == Some(key)).map(|o| Found { setting: s, old: Some(o) })
    })
}

/// The setting a flag names (without its dashes: `delay-ms`).
pub fn by_flag(flag: &str) -> Option<Found> {
    crate::SETTINGS.iter().find_map(|s| {
        if s.flag() == flag {
            return Some(Found { setting: s, old: None });
        }
        s.old.iter().find(|o| o.flag == Some(flag)).map(|o| Found { setting: s, old: Some(o) })
    })
}

/// The setting of this name (the new spelling only).
pub fn setting(name: &str) -> Option<&'static Setting> {
    crate::SETTINGS.iter().find(|s| s.name == name)
}

/// The known name closest to `unknown`, if one is close enough to be a likely typo.
pub fn nearest(unknown: &str) -> Option<&'static str> {
    let names = crate::SETTINGS
        .iter()
        .flat_map(|s| std::iter::once(s.name).chain(s.old.iter().filter_map(|o| o.key)));
    names
        .map(|n| (strsim::jaro_winkler(unknown, n), n))
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

impl Setting {
    /// The flag's long name: the key with `-` for `_`.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// Reads a value from text, checked.
    pub fn read(&self, text: &str) -> Result<Value, String> {
        self.checked(self.kind.parse(text)?)
    }

    /// Reads a spider file's value, checked.
    pub fn read_toml(&self, value: &toml::Value) -> Result<Value, String> {
        self.checked(self.kind.from_toml(value)?)
    }

    fn checked(&self, value: Value) -> Result<Value, String> {
        if let Some(check) = self.check {
            match &value {
                Value::Text(t) => check(t)?,
                Value::List(items) => items.iter().try_for_each(|t| check(t))?,
                _ => {}
            }
        }
        Ok(value)
    }
}
