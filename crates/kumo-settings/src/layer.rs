//! A layer: the settings one place gives (the defaults, a spider file, its `[[site]]`, the
//! command line, a library call), each checked as it is set. Old spellings are read in their
//! own units and noted as warnings that name the new spelling.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::table::{self, Found, OldUnit, Setting};
use crate::{Kind, SettingError, Value};

/// Where a layer's values come from; later sources win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The table's defaults, and those `broad` sets.
    Default,
    /// The spider file's crawl-wide keys.
    File,
    /// A `[[site]]` table.
    Site,
    /// A program using the library.
    Library,
    /// The command line.
    Flag,
}

/// The defaults `broad` sets, by name.
const BROAD: [(&str, &str); 12] = [
    ("any_domain", "true"),
    ("concurrency", "256"),
    ("per_host", "1"),
    ("delay", "1s"),
    ("per_ip", "1"),
    ("ip_delay", "100ms"),
    ("max_crawl_delay", "10s"),
    ("timeout", "15s"),
    ("retries", "1"),
    ("no_cookies", "true"),
    ("keep_alive", "0s"),
    ("max_pages_per_domain", "10000"),
];

/// The settings one source gives.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where its values come from, as [`Settings::source`](crate::Settings::source) reports
    /// them.
    pub source: Source,
    values: BTreeMap<&'static str, Value>,
    warnings: Vec<String>,
}

impl Layer {
    /// A layer that gives nothing yet.
    pub fn new(source: Source) -> Self {
        Layer { source, values: BTreeMap::new(), warnings: Vec::new() }
    }

    /// Every setting's default.
    pub fn defaults() -> Self {
        let mut layer = Layer::new(Source::Default);
        for s in crate::SETTINGS {
            let value = match s.kind {
                Kind::List => Value::List(Vec::new()),
                _ if s.default.is_empty() => continue,
                _ => s.read(s.default).expect("the table's defaults parse"),
            };
            layer.values.insert(s.name, value);
        }
        layer
    }

    /// What `broad` changes in the defaults, for a crawl of many hosts (Scrapy's broad-crawl
    /// checklist and the research brief's table): its values count as defaults, so anything
    /// a spider file, the library or a flag gives still holds.
    pub fn broad() -> Self {
        let mut layer = Layer::new(Source::Default);
        for (name, value) in BROAD {
            layer.set(name, value).expect("the broad defaults parse");
        }
        layer
    }

    /// Sets a setting from text, by its name (`delay`), its flag (`delay-ms`) or an old
    /// spelling; a list takes the one item (see [`Layer::set_list`] for several).
    pub fn set(&mut self, name: &str, text: &str) -> Result<(), SettingError> {
        let found = table::by_key(&name.replace('-', "_"))
            .or_else(|| table::by_flag(&name.replace('_', "-")))
            .ok_or_else(|| unknown(name))?;
        let value = match found.old.map(|o| o.unit) {
            Some(OldUnit::Millis) => millis(found.setting, text.trim().parse::<u64>().ok(), text)?,
            Some(OldUnit::Inverted) => invert(found.setting.read(text).map_err(|m| bad(found.setting, m))?),
            _ => found.setting.read(text).map_err(|m| bad(found.setting, m))?,
        };
        if let Some(old) = found.old {
            let was = old.flag.map(|f| format!("--{f}")).or(old.key.map(str::to_string)).unwrap_or_default();
            self.warn_old(&was, found.setting, &value);
        }
        self.values.insert(found.setting.name, value);
        Ok(())
    }

    /// Sets a list setting to these items.
    pub fn set_list<S: Into<String>>(
        &mut self,
        name: &str,
        items: impl IntoIterator<Item = S>,
    ) -> Result<(), SettingError> {
        let s = table::setting(name).ok_or_else(|| unknown(name))?;
        if s.kind != Kind::List {
            return Err(bad(s, format!("{name} is not a list")));
        }
        self.values.insert(s.name, Value::List(items.into_iter().map(Into::into).collect()));
        Ok(())
    }

    /// Sets a setting from a spider file's key and value.
    pub fn set_toml(&mut self, key: &str, value: &toml::Value) -> Result<(), SettingError> {
        if key == "auto_throttle"
            && let toml::Value::Table(t) = value
        {
            return self.old_auto_throttle(t);
        }
        let found: Found = table::by_key(key).ok_or_else(|| unknown(key))?;
        let s = found.setting;
        let value = match found.old.map(|o| o.unit) {
            Some(OldUnit::Millis) => {
                millis(s, value.as_integer().and_then(|n| u64::try_from(n).ok()), value)?
            }
            Some(OldUnit::Inverted) => invert(s.read_toml(value).map_err(|m| bad(s, m))?),
            _ => s.read_toml(value).map_err(|m| bad(s, m))?,
        };
        if found.old.is_some() {
            self.warn_old(key, s, &value);
        }
        self.values.insert(s.name, value);
        Ok(())
    }

    /// `auto_throttle = { target_concurrency = 1.0, start_delay_ms = 5000, max_delay_ms =
    /// 60000 }`, the table this setting once was.
    fn old_auto_throttle(&mut self, t: &toml::Table) -> Result<(), SettingError> {
        self.set("auto_throttle", "true")?;
        for (k, v) in t {
            let (name, ms) = match k.as_str() {
                "target_concurrency" => ("auto_throttle_target", false),
                "start_delay_ms" => ("auto_throttle_start_delay", true),
                "max_delay_ms" => ("auto_throttle_max_delay", true),
                _ => return Err(SettingError::Unknown { name: k.clone(), suggestion: None }),
            };
            let s = table::setting(name).expect("in the table");
            let value = if ms {
                millis(s, v.as_integer().and_then(|n| u64::try_from(n).ok()), v)?
            } else {
                s.read_toml(v).map_err(|m| bad(s, m))?
            };
            self.values.insert(name, value);
        }
        self.warnings.push(
            "auto_throttle = { … } is the old spelling: write auto_throttle = true, with \
             auto_throttle_target, auto_throttle_start_delay and auto_throttle_max_delay beside it"
                .into(),
        );
        Ok(())
    }

    fn warn_old(&mut self, was: &str, s: &Setting, value: &Value) {
        let now = match value {
            Value::Switch(true) if !was.starts_with("--") => format!("{} = true", s.name),
            v if was.starts_with("--") => format!("--{} {}", s.flag(), v.text().trim_matches('"')),
            v => format!("{} = {}", s.name, quoted(v)),
        };
        self.warnings.push(format!("{was} is the old spelling of {}: write {now}", s.name));
    }

    /// The value it gives a setting, by the setting's name (not a flag or an old spelling).
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The settings it gives, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }

    /// Whether it gives no setting at all.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// What an old spelling in this layer should be written as now.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// A value as a spider file writes it: durations as strings.
fn quoted(v: &Value) -> String {
    match v {
        Value::Duration(_) => format!("\"{}\"", v.text()),
        other => other.text(),
    }
}

fn unknown(name: &str) -> SettingError {
    SettingError::Unknown { name: name.to_string(), suggestion: table::nearest(name) }
}

fn bad(s: &'static Setting, message: impl Into<String>) -> SettingError {
    SettingError::Bad { name: s.name, message: message.into() }
}

/// An old whole number of milliseconds, within the setting's bound.
pub(crate) fn millis(
    s: &'static Setting,
    ms: Option<u64>,
    given: impl std::fmt::Display,
) -> Result<Value, SettingError> {
    let ms = ms.ok_or_else(|| bad(s, format!("{given} is not a whole number of milliseconds")))?;
    let d = Duration::from_millis(ms);
    if let Kind::Duration { max, .. } = s.kind
        && d > max
    {
        return Err(bad(s, format!("{ms} ms is too long: at most {} ms", max.as_millis())));
    }
    Ok(Value::Duration(d))
}

fn invert(v: Value) -> Value {
    match v {
        Value::Switch(b) => Value::Switch(!b),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_spellings_read_in_their_units_and_warn() {
        let mut l = Layer::new(Source::Site);
        l.set_toml("delay_ms", &toml::Value::Integer(250)).unwrap();
        assert_eq!(l.get("delay"), Some(&Value::Duration(Duration::from_millis(250))));
        assert_eq!(l.warnings(), ["delay_ms is the old spelling of delay: write delay = \"250ms\""]);
        l.set_toml("obey_robots", &toml::Value::Boolean(false)).unwrap();
        assert_eq!(l.get("ignore_robots"), Some(&Value::Switch(true)));
        let mut f = Layer::new(Source::Flag);
        f.set("delay-ms", "20").unwrap();
        assert_eq!(f.get("delay"), Some(&Value::Duration(Duration::from_millis(20))));
        assert_eq!(f.warnings(), ["--delay-ms is the old spelling of delay: write --delay 20ms"]);
    }

    #[test]
    fn a_typo_gets_the_nearest_name() {
        let e = Layer::new(Source::Site).set_toml("max_deph", &toml::Value::Integer(3)).unwrap_err();
        assert_eq!(e.to_string(), "unknown field `max_deph`, did you mean `max_depth`?");
        let e = Layer::new(Source::Site).set_toml("colour", &toml::Value::Integer(1)).unwrap_err();
        assert_eq!(e.to_string(), "unknown field `colour`");
    }

    #[test]
    fn the_old_auto_throttle_table_still_reads() {
        let t: toml::Table = toml::from_str("target_concurrency = 2.0\nstart_delay_ms = 100").unwrap();
        let mut l = Layer::new(Source::Site);
        l.set_toml("auto_throttle", &toml::Value::Table(t)).unwrap();
        assert_eq!(l.get("auto_throttle"), Some(&Value::Switch(true)));
        assert_eq!(l.get("auto_throttle_target"), Some(&Value::Number(2.0)));
        assert_eq!(l.get("auto_throttle_start_delay"), Some(&Value::Duration(Duration::from_millis(100))));
        assert_eq!(l.warnings().len(), 1);
    }
}
