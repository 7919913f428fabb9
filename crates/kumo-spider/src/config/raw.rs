//! The spider file as written: serde structs that mirror the TOML, with spans kept on every
//! value a later check may complain about, so errors can name the line.

use std::collections::BTreeMap;

use kumo_parse::Model;
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

/// Crawl settings (`delay`, `user_agent`, …) are not fields here: a flattened table takes
/// them, and kumo-settings' table checks each (and refuses an unknown key, as
/// `deny_unknown_fields` would, which serde cannot combine with `flatten`).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::schema::with_settings)]
pub(super) struct RawFile {
    /// Replaces `{base}` in seeds (a command line `--seed-base` wins).
    pub base: Option<String>,
    #[schemars(with = "Vec<RawSite>")]
    pub site: Vec<Spanned<RawSite>>,
    /// Crawl-wide settings, under every site's own.
    #[serde(flatten)]
    #[schemars(skip)]
    pub settings: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::schema::with_settings)]
pub(super) struct RawSite {
    pub name: String,
    #[schemars(with = "Vec<String>")]
    pub seeds: Spanned<Vec<Spanned<String>>>,
    /// Per-host limit rules (`[[site.limit]]`), first match wins; other hosts get the site's
    /// `per_host`, `delay` and `random_delay`.
    #[serde(default)]
    #[schemars(with = "Vec<RawLimit>")]
    pub limit: Vec<Spanned<RawLimit>>,
    #[serde(default)]
    pub follow: RawFollow,
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub targets: Vec<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub sources: Vec<Spanned<String>>,
    #[serde(default)]
    pub priority: RawPriority,
    #[schemars(with = "Option<String>")]
    pub next_page: Option<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Vec<RawModel>")]
    pub model: Vec<Spanned<RawModel>>,
    #[serde(default)]
    #[schemars(with = "Vec<RawProcessor>")]
    pub processors: Vec<Spanned<RawProcessor>>,
    #[serde(default = "yes")]
    pub fail_fast: bool,
    #[serde(default)]
    pub output: RawOutput,
    /// When `kumo run` runs the site again (`[site.schedule]`).
    #[schemars(with = "Option<super::schedule::RawSchedule>")]
    pub schedule: Option<Spanned<super::schedule::RawSchedule>>,
    /// When a later run asks for a known page again (`[site.revisit]`).
    #[schemars(with = "Option<super::revisit::RawRevisit>")]
    pub revisit: Option<Spanned<super::revisit::RawRevisit>>,
    /// Pages fetched through a headless browser: `"browser"` or a table of settings.
    #[schemars(with = "Option<super::render::RawRender>")]
    pub render: Option<Spanned<super::render::RawRender>>,
    /// JavaScript hooks, run sandboxed.
    #[cfg_attr(feature = "script", schemars(with = "Option<super::script::RawScript>"))]
    #[cfg_attr(not(feature = "script"), schemars(skip))]
    pub script: Option<Spanned<RawScriptField>>,
    /// The crawl settings (kumo-settings' table: `delay`, `user_agent`, `max_pages`, …).
    #[serde(flatten)]
    #[schemars(skip)]
    pub settings: BTreeMap<String, toml::Value>,
}

/// `script`: the hooks, or (built without the `script` feature) read only to be refused.
#[cfg(feature = "script")]
pub(super) type RawScriptField = super::script::RawScript;
#[cfg(not(feature = "script"))]
pub(super) type RawScriptField = serde::de::IgnoredAny;

/// A limit rule (Colly's `LimitRule`): the hosts it matches (a glob `host` or a `regex`), and
/// what holds for them; a value left out is the site's.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimit {
    #[schemars(with = "Option<String>")]
    pub host: Option<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    pub regex: Option<Spanned<String>>,
    pub per_host: Option<u32>,
    #[schemars(schema_with = "super::schema::optional_duration")]
    pub delay: Option<toml::Value>,
    #[schemars(schema_with = "super::schema::optional_duration")]
    pub random_delay: Option<toml::Value>,
    /// The old spellings of `delay` and `random_delay`, in milliseconds.
    pub delay_ms: Option<u64>,
    pub random_delay_ms: Option<u64>,
    /// Sent with every request to a matching host.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// A matching host's requests go through one of these (`http://`, `https://`, `socks5://`).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub proxies: Vec<Spanned<String>>,
    /// `["10/s", "500/h"]`: at most so many requests per window to each matching host (every
    /// window holds); the site's `rate_limit` when left out.
    #[schemars(with = "Option<Vec<String>>")]
    pub rate_limit: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFollow {
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub deny: Vec<Spanned<String>>,
    #[schemars(with = "Option<String>")]
    pub restrict_css: Option<Spanned<String>>,
}

/// Spiderman's task sort: links to item pages first, then pages that lead to them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(super) struct RawPriority {
    pub target: i32,
    pub source: i32,
    pub next_page: i32,
    pub follow: i32,
}

impl Default for RawPriority {
    fn default() -> Self {
        RawPriority { target: 20, source: 10, next_page: 10, follow: 0 }
    }
}

/// A model entry: the extraction [`Model`] plus where it applies and its own processors.
/// (Unknown keys are reported by the model itself, naming it.)
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(super) struct RawModel {
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub on: Vec<Spanned<String>>,
    #[serde(default)]
    pub processors: Vec<RawProcessor>,
    #[serde(flatten)]
    pub model: Model,
}

/// One processor, written as a one-key table: `{ dedup = ["text"] }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RawProcessor {
    Dedup(Vec<String>),
    Require(Vec<String>),
    Drop(RawDrop),
    Rename {
        from: String,
        to: String,
    },
    Set {
        field: String,
        #[schemars(with = "serde_json::Value")]
        value: toml::Value,
    },
    Remove(Vec<String>),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDrop {
    pub field: String,
    #[schemars(with = "Option<serde_json::Value>")]
    pub equals: Option<toml::Value>,
    pub regex: Option<String>,
    #[serde(default)]
    pub missing: bool,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutput {
    pub jsonl: Option<String>,
    pub csv: Option<String>,
    /// One JSON array.
    pub json: Option<String>,
    #[cfg(feature = "postgres")]
    pub postgres: Option<super::postgres::RawPostgres>,
    /// Built without the `postgres` feature: read only to be refused.
    #[cfg(not(feature = "postgres"))]
    #[schemars(skip)]
    pub postgres: Option<Spanned<serde::de::IgnoredAny>>,
    #[serde(default)]
    pub stdout: bool,
    #[serde(default)]
    pub overwrite: bool,
    pub warc: Option<String>,
}

fn yes() -> bool {
    true
}
