//! The spider file as written: serde structs that mirror the TOML, with spans kept on every
//! value a later check may complain about, so errors can name the line.

use kumo_parse::Model;
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    /// Replaces `{base}` in seeds (a command line `--seed-base` wins).
    pub base: Option<String>,
    pub site: Vec<Spanned<RawSite>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSite {
    pub name: String,
    pub seeds: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    #[serde(default)]
    pub max_depth: u32,
    /// Deeper paths are skipped as spider traps; 0: the default (32).
    #[serde(default)]
    pub max_path_segments: usize,
    /// A run of one to three path segments repeated back to back more often is skipped as a
    /// spider trap; 0: the default (2).
    #[serde(default)]
    pub max_segment_repeats: usize,
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    #[serde(default = "default_per_host")]
    pub per_host: u32,
    #[serde(default)]
    pub delay_ms: u64,
    #[serde(default)]
    pub random_delay_ms: u64,
    /// Present (even empty: `auto_throttle = {}`) turns the adaptive throttle on.
    pub auto_throttle: Option<RawAutoThrottle>,
    /// Per-host limit rules (`[[site.limit]]`), first match wins; other hosts get the site's
    /// `per_host`, `delay_ms` and `random_delay_ms`.
    #[serde(default)]
    pub limit: Vec<Spanned<RawLimit>>,
    /// At most so many requests per window to each host (`["10/s"]`), unless a `[[site.limit]]`
    /// rule says otherwise.
    #[serde(default)]
    pub rate_limit: Vec<Spanned<String>>,
    #[serde(default)]
    pub max_pages: u64,
    #[serde(default)]
    pub max_items: u64,
    #[serde(default)]
    pub max_errors: u64,
    #[serde(default = "yes")]
    pub obey_robots: bool,
    /// The longest a server may pause a whole host (a 429, 503s with `Retry-After` from
    /// several URLs), in seconds;
    /// the engine's default (300) when left out.
    pub max_host_pause_secs: Option<u64>,
    /// The longest `Retry-After` believed, in seconds (a longer one counts as absent: the
    /// request retries on its back-off); the engine's default (120) when left out.
    pub max_retry_after_secs: Option<u64>,
    #[serde(default)]
    pub follow: RawFollow,
    #[serde(default)]
    pub targets: Vec<Spanned<String>>,
    #[serde(default)]
    pub sources: Vec<Spanned<String>>,
    #[serde(default)]
    pub priority: RawPriority,
    pub next_page: Option<Spanned<String>>,
    #[serde(default)]
    pub model: Vec<Spanned<RawModel>>,
    #[serde(default)]
    pub processors: Vec<Spanned<RawProcessor>>,
    #[serde(default = "yes")]
    pub fail_fast: bool,
    #[serde(default)]
    pub output: RawOutput,
    /// When `kumo run` runs the site again (`[site.schedule]`).
    pub schedule: Option<Spanned<super::schedule::RawSchedule>>,
    /// When a later run asks for a known page again (`[site.revisit]`).
    pub revisit: Option<Spanned<super::revisit::RawRevisit>>,
    /// Pages fetched through a headless browser: `"browser"` or a table of settings.
    pub render: Option<Spanned<super::render::RawRender>>,
    /// JavaScript hooks, run sandboxed.
    #[cfg(feature = "script")]
    pub script: Option<Spanned<super::script::RawScript>>,
    /// Built without the `script` feature: read only to be refused.
    #[cfg(not(feature = "script"))]
    pub script: Option<Spanned<serde::de::IgnoredAny>>,
}

/// A limit rule (Colly's `LimitRule`): the hosts it matches (a glob `host` or a `regex`), and
/// what holds for them; a value left out is the site's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimit {
    pub host: Option<Spanned<String>>,
    pub regex: Option<Spanned<String>>,
    pub per_host: Option<u32>,
    pub delay_ms: Option<u64>,
    pub random_delay_ms: Option<u64>,
    /// Sent with every request to a matching host.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// A matching host's requests go through one of these (`http://`, `https://`, `socks5://`).
    #[serde(default)]
    pub proxies: Vec<Spanned<String>>,
    /// `["10/s", "500/h"]`: at most so many requests per window to each matching host (every
    /// window holds); the site's `rate_limit` when left out.
    pub rate_limit: Option<Vec<Spanned<String>>>,
}

/// `auto_throttle = { target_concurrency = 1.0, start_delay_ms = 5000, max_delay_ms = 60000 }`;
/// what is left out takes the engine's default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAutoThrottle {
    pub target_concurrency: Option<f64>,
    pub start_delay_ms: Option<u64>,
    pub max_delay_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFollow {
    #[serde(default)]
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub deny: Vec<Spanned<String>>,
    pub restrict_css: Option<Spanned<String>>,
}

/// Spiderman's task sort: links to item pages first, then pages that lead to them.
#[derive(Debug, Deserialize)]
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
#[derive(Debug, Deserialize)]
pub(super) struct RawModel {
    #[serde(default)]
    pub on: Vec<Spanned<String>>,
    #[serde(default)]
    pub processors: Vec<RawProcessor>,
    #[serde(flatten)]
    pub model: Model,
}

/// One processor, written as a one-key table: `{ dedup = ["text"] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RawProcessor {
    Dedup(Vec<String>),
    Require(Vec<String>),
    Drop(RawDrop),
    Rename { from: String, to: String },
    Set { field: String, value: toml::Value },
    Remove(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDrop {
    pub field: String,
    pub equals: Option<toml::Value>,
    pub regex: Option<String>,
    #[serde(default)]
    pub missing: bool,
}

#[derive(Debug, Default, Deserialize)]
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
    pub postgres: Option<Spanned<serde::de::IgnoredAny>>,
    #[serde(default)]
    pub stdout: bool,
    #[serde(default)]
    pub overwrite: bool,
    pub warc: Option<String>,
}

fn default_concurrency() -> usize {
    16
}

fn default_per_host() -> u32 {
    8
}

fn yes() -> bool {
    true
}
