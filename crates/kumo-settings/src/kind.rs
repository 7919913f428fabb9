//! What a setting's value is, and how it is read: from a flag's text or a spider file's TOML
//! value, both checked the same way.

use std::time::Duration;

/// The shape of a setting's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// On or off: a flag without a value, `true`/`false` in a file.
    Switch,
    /// A whole number, `min..=max`.
    Count {
        /// The smallest value taken.
        min: u64,
        /// The largest value taken.
        max: u64,
    },
    /// A number, `min..=max`.
    Number {
        /// The smallest value taken.
        min: f64,
        /// The largest value taken.
        max: f64,
    },
    /// A duration: `"250ms"`, `"10s"`, `"6h"`, or a bare number of seconds, at most `max`.
    /// `positive`: zero is refused.
    Duration {
        /// Whether zero is refused.
        positive: bool,
        /// The longest duration taken.
        max: Duration,
    },
    /// Any text.
    Text,
    /// Several texts: a flag repeated, an array (or one string) in a file.
    List,
}

/// A checked value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// On or off.
    Switch(bool),
    /// A whole number, within the kind's bounds.
    Count(u64),
    /// A finite number, within the kind's bounds.
    Number(f64),
    /// A duration, within the kind's bound.
    Duration(Duration),
    /// Any text ([`Kind::parse`] trims it; a spider file's string is kept as is).
    Text(String),
    /// Several texts, in the order given.
    List(Vec<String>),
}

impl Kind {
    /// What a value of this kind looks like, for errors and the reference.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Switch => "true or false",
            Kind::Count { .. } => "a whole number",
            Kind::Number { .. } => "a number",
            Kind::Duration { .. } => {
                "a duration such as \"250ms\", \"10s\" or \"6h\" (a bare number is seconds)"
            }
            Kind::Text => "a string",
            Kind::List => "a list of strings",
        }
    }

    /// Reads one value from text (a flag's value; for a list, one item).
    pub fn parse(self, text: &str) -> Result<Value, String> {
        let text = text.trim();
        match self {
            Kind::Switch => match text {
                "true" | "yes" | "on" | "1" => Ok(Value::Switch(true)),
                "false" | "no" | "off" | "0" => Ok(Value::Switch(false)),
                _ => Err(format!("{text:?} is not true or false")),
            },
            Kind::Count { min, max } => {
                let n = text.parse::<u64>().map_err(|_| format!("{text:?} is not a whole number"))?;
                count(n, min, max)
            }
            Kind::Number { min, max } => {
                let n = text.parse::<f64>().map_err(|_| format!("{text:?} is not a number"))?;
                number(n, min, max)
            }
            Kind::Duration { positive, max } => duration(text, positive, max),
            Kind::Text => Ok(Value::Text(text.to_string())),
            Kind::List => Ok(Value::List(vec![text.to_string()])),
        }
    }

    /// Reads a spider file's value.
    pub fn from_toml(self, value: &toml::Value) -> Result<Value, String> {
        use toml::Value as T;
        match (self, value) {
            (Kind::Switch, T::Boolean(b)) => Ok(Value::Switch(*b)),
            (Kind::Count { min, max }, T::Integer(n)) => {
                let n = u64::try_from(*n).map_err(|_| format!("{n} is negative"))?;
                count(n, min, max)
            }
            (Kind::Number { min, max }, T::Integer(n)) => number(*n as f64, min, max),
            (Kind::Number { min, max }, T::Float(n)) => number(*n, min, max),
            (Kind::Duration { positive, max }, T::String(s)) => duration(s, positive, max),
            (Kind::Duration { positive, max }, T::Integer(n)) => duration(&n.to_string(), positive, max),
            (Kind::Duration { positive, max }, T::Float(n)) => duration(&n.to_string(), positive, max),
            (Kind::Text, T::String(s)) => Ok(Value::Text(s.clone())),
            (Kind::List, T::String(s)) => Ok(Value::List(vec![s.clone()])),
            (Kind::List, T::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string).ok_or_else(|| format!("{i} is not a string")))
                .collect::<Result<_, _>>()
                .map(Value::List),
            (kind, other) => Err(format!("expected {}, found {}", kind.describe(), other.type_str())),
        }
    }
}

fn count(n: u64, min: u64, max: u64) -> Result<Value, String> {
    if n < min {
        return Err(format!("must be at least {min}"));
    }
    if n > max {
        return Err(format!("must be at most {max}"));
    }
    Ok(Value::Count(n))
}

fn number(n: f64, min: f64, max: f64) -> Result<Value, String> {
    if !n.is_finite() || n < min || n > max {
        return Err(if max.is_finite() {
            format!("{n} is not between {min} and {max}")
        } else {
            format!("{n} is not a number of at least {min}")
        });
    }
    Ok(Value::Number(n))
}

/// A humantime duration, or a bare number of seconds.
fn duration(text: &str, positive: bool, max: Duration) -> Result<Value, String> {
    let text = text.trim();
    let d = match text.parse::<f64>() {
        Ok(secs) => Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("{text:?} is not a number of seconds a duration can hold"))?,
        Err(_) => humantime::parse_duration(text)
            .map_err(|e| format!("{text:?} is not a duration ({e}): try \"250ms\", \"10s\" or \"6h\""))?,
    };
    if positive && d.is_zero() {
        return Err("must be longer than zero".into());
    }
    if d > max {
        return Err(format!("must be at most {}", humantime::format_duration(max)));
    }
    Ok(Value::Duration(d))
}

impl Value {
    /// The value written back as a spider file or a flag would spell it (durations in
    /// humantime's words): what the resume check and the reference show.
    pub fn text(&self) -> String {
        match self {
            Value::Switch(b) => b.to_string(),
            Value::Count(n) => n.to_string(),
            Value::Number(n) => n.to_string(),
            Value::Duration(d) if d.is_zero() => "0s".into(),
            Value::Duration(d) => humantime::format_duration(*d).to_string(),
            Value::Text(s) => format!("{s:?}"),
            Value::List(items) => format!("{items:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_human_strings_or_seconds() {
        let d = Kind::Duration { positive: false, max: Duration::from_secs(86_400) };
        assert_eq!(d.parse("250ms"), Ok(Value::Duration(Duration::from_millis(250))));
        assert_eq!(d.parse("1.5"), Ok(Value::Duration(Duration::from_millis(1500))));
        assert_eq!(d.parse("6h"), Ok(Value::Duration(Duration::from_secs(6 * 3600))));
        assert!(d.parse("soon").unwrap_err().contains("try \"250ms\""));
        assert!(d.parse("-1").is_err(), "negative seconds");
        assert!(Kind::Duration { positive: true, max: Duration::MAX }.parse("0s").is_err());
        assert_eq!(d.parse("2d").unwrap_err(), "must be at most 1day");
        let toml = toml::Value::String("10s".into());
        assert_eq!(d.from_toml(&toml), Ok(Value::Duration(Duration::from_secs(10))));
        assert_eq!(d.from_toml(&toml::Value::Integer(2)), Ok(Value::Duration(Duration::from_secs(2))));
    }

    #[test]
    fn wrong_types_say_what_was_expected() {
        let one = Kind::Count { min: 1, max: 9 };
        let e = one.from_toml(&toml::Value::String("8".into())).unwrap_err();
        assert_eq!(e, "expected a whole number, found string");
        assert_eq!(one.parse("0").unwrap_err(), "must be at least 1");
        assert_eq!(one.parse("10").unwrap_err(), "must be at most 9");
        assert!(Kind::Number { min: 0.0, max: 100.0 }.parse("101").is_err());
        let list = toml::Value::Array(vec![toml::Value::Integer(1)]);
        assert!(Kind::List.from_toml(&list).is_err());
    }

    #[test]
    fn values_are_written_back_as_users_spell_them() {
        assert_eq!(Value::Duration(Duration::from_millis(250)).text(), "250ms");
        assert_eq!(Value::Duration(Duration::ZERO).text(), "0s");
        assert_eq!(Value::List(vec!["a".into()]).text(), "[\"a\"]");
    }
}
