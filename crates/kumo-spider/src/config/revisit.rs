//! `[site.revisit]`: when a later run asks for a known page again.
//!
//! ```toml
//! [site.revisit]
//! every = "1d"                                  # pages no rule matches (default: every run)
//! rules = [{ match = '/news/', every = "1h" }]  # regexes searched in the URL; first match wins
//! adaptive = { min = "1h", max = "30d", rate = 0.2 }
//! emit = "changed"                              # or "all": unchanged pages are fetched whole
//!                                               # and their items written again
//!              # optional (`adaptive = {}`: these defaults): after each visit the interval
//!              # shrinks by `rate` if the page changed, grows by it if not, within min..max
//! ```

use std::time::Duration;

use kumo_engine::{Adaptive, RevisitPolicy, RevisitRule};
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};

/// When a later run of a site asks for a page it has fetched again.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRevisit {
    /// The interval for pages no rule matches (left out: every run).
    #[schemars(with = "Option<String>")]
    pub every: Option<Spanned<String>>,
    /// Intervals by URL; the first rule that matches wins.
    #[serde(default)]
    #[schemars(with = "Vec<RawRevisitRule>")]
    pub rules: Vec<Spanned<RawRevisitRule>>,
    /// Each page's interval adapts: it shrinks when the page changed, and grows when not.
    #[schemars(with = "Option<RawAdaptive>")]
    pub adaptive: Option<Spanned<RawAdaptive>>,
    /// "changed" (the default): an unchanged page writes no items; "all": it is fetched whole
    /// and its items written again.
    #[schemars(with = "Option<String>")]
    pub emit: Option<Spanned<String>>,
}

/// One interval rule: `{ match = "/news/", every = "1h" }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRevisitRule {
    /// A regular expression searched in the page's URL.
    #[serde(rename = "match")]
    #[schemars(with = "String")]
    pub pattern: Spanned<String>,
    /// The interval for the pages it matches.
    #[schemars(with = "String")]
    pub every: Spanned<String>,
}

/// How a page's interval adapts; `adaptive = {}` takes the defaults of all three.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAdaptive {
    /// The shortest interval.
    #[schemars(with = "Option<String>")]
    pub min: Option<Spanned<String>>,
    /// The longest interval.
    #[schemars(with = "Option<String>")]
    pub max: Option<Spanned<String>>,
    /// The share by which the interval shrinks after a change, or grows after none.
    pub rate: Option<f64>,
}

/// A duration as humantime reads it (`0s` allowed: every run).
fn duration(lines: &Lines, field: String, raw: &Spanned<String>) -> Result<Duration, SpiderConfigError> {
    humantime::parse_duration(raw.get_ref()).map_err(|e| {
        lines.error(raw.span().start, field, format!("not a duration ({e}): try \"1h\" or \"7d\""))
    })
}

/// The site's re-visit policy, and whether unchanged pages' items are written again.
pub(super) fn revisit(
    lines: &Lines,
    at: &str,
    raw: Spanned<RawRevisit>,
) -> Result<(RevisitPolicy, bool), SpiderConfigError> {
    let raw = raw.into_inner();
    let field = |name: &str| format!("{at}.{name}");
    let every =
        raw.every.as_ref().map(|e| duration(lines, field("every"), e)).transpose()?.unwrap_or_default();
    let mut rules = Vec::with_capacity(raw.rules.len());
    for (i, r) in raw.rules.iter().enumerate() {
        let r = r.get_ref();
        let pattern = regex::Regex::new(r.pattern.get_ref()).map_err(|e| {
            lines.error(
                r.pattern.span().start,
                field(&format!("rules[{i}].match")),
                format!("bad regex: {e}"),
            )
        })?;
        rules.push(RevisitRule {
            pattern,
            every: duration(lines, field(&format!("rules[{i}].every")), &r.every)?,
        });
    }
    let adaptive = match &raw.adaptive {
        None => None,
        Some(a) => {
            let d = Adaptive::default();
            let (a_at, a) = (a.span().start, a.get_ref());
            let bound = |v: &Option<Spanned<String>>, name: &str, default| {
                v.as_ref().map_or(Ok(default), |v| duration(lines, field(&format!("adaptive.{name}")), v))
            };
            let adaptive = Adaptive {
                min: bound(&a.min, "min", d.min)?,
                max: bound(&a.max, "max", d.max)?,
                rate: a.rate.unwrap_or(d.rate),
            };
            adaptive.check().map_err(|e| lines.error(a_at, field("adaptive"), e))?;
            Some(adaptive)
        }
    };
    let emit_unchanged = match raw.emit.as_ref().map(|e| (e.get_ref().as_str(), e.span().start)) {
        None | Some(("changed", _)) => false,
        Some(("all", _)) => true,
        Some((other, at)) => {
            return Err(lines.error(at, field("emit"), format!("{other:?}: write \"changed\" or \"all\"")));
        }
    };
    Ok((RevisitPolicy { rules, every, adaptive }, emit_unchanged))
}
