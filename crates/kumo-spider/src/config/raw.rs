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
    /// One table per site (`[[site]]`); the sites of one file run at once.
    #[schemars(with = "Vec<RawSite>")]
    pub site: Vec<Spanned<RawSite>>,
    /// Crawl-wide settings, under every site's own.
    #[serde(flatten)]
    #[schemars(skip)]
    pub settings: BTreeMap<String, toml::Value>,
}

/// One site: its seeds, which links it follows, what it extracts and where the items go.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transform = super::schema::with_settings)]
pub(super) struct RawSite {
    /// The site's name; the names of one file must differ.
    pub name: String,
    /// Its start URLs, `{base}` replaced.
    #[schemars(with = "Vec<String>")]
    pub seeds: Spanned<Vec<Spanned<String>>>,
    /// Per-host limit rules (`[[site.limit]]`), first match wins; other hosts get the site's
    /// `per_host`, `delay` and `random_delay`.
    #[serde(default)]
    #[schemars(with = "Vec<RawLimit>")]
    pub limit: Vec<Spanned<RawLimit>>,
    /// Which other links are followed, and the region of a page links are taken from.
    #[serde(default)]
    pub follow: RawFollow,
    /// Regular expressions searched in a link's absolute URL: the pages that hold items.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub targets: Vec<Spanned<String>>,
    /// Regular expressions, likewise: the pages that lead to items.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub sources: Vec<Spanned<String>>,
    /// The order links are fetched in, by what they lead to.
    #[serde(default)]
    pub priority: RawPriority,
    /// A CSS selector for the next page's link.
    #[schemars(with = "Option<String>")]
    pub next_page: Option<Spanned<String>>,
    /// Extraction models (`[[site.model]]`): what an item is and where its fields are.
    #[serde(default)]
    #[schemars(with = "Vec<RawModel>")]
    pub model: Vec<Spanned<RawModel>>,
    /// Processors for every item of the site, after the model's own, in order.
    #[serde(default)]
    #[schemars(with = "Vec<RawProcessor>")]
    pub processors: Vec<Spanned<RawProcessor>>,
    /// An item found invalid goes no further; false: it is counted and still written.
    #[serde(default = "yes")]
    pub fail_fast: bool,
    /// Where the site's items go.
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
    /// The hosts the rule holds for, as a glob (`*.example.com`).
    #[schemars(with = "Option<String>")]
    pub host: Option<Spanned<String>>,
    /// The hosts the rule holds for, as a regular expression.
    #[schemars(with = "Option<String>")]
    pub regex: Option<Spanned<String>>,
    /// Requests in flight at once to each matching host.
    pub per_host: Option<u32>,
    /// Least time between two requests to a matching host (`"250ms"`, or seconds).
    #[serde(default)]
    #[schemars(schema_with = "super::schema::optional_duration")]
    pub delay: Option<toml::Value>,
    /// Up to this much more, at random, on top of `delay`.
    #[serde(default)]
    #[schemars(schema_with = "super::schema::optional_duration")]
    pub random_delay: Option<toml::Value>,
    /// The old spelling of `delay`, in milliseconds.
    pub delay_ms: Option<u64>,
    /// The old spelling of `random_delay`, in milliseconds.
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

/// Which links besides targets, sources and the next page a site follows.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFollow {
    /// Regular expressions: a link whose URL matches one is followed.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// Regular expressions: a link whose URL matches one is not, whatever else matches it.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub deny: Vec<Spanned<String>>,
    /// A CSS selector: links are taken only from inside what it matches.
    #[schemars(with = "Option<String>")]
    pub restrict_css: Option<Spanned<String>>,
}

/// Spiderman's task sort: links to item pages first, then pages that lead to them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(super) struct RawPriority {
    /// A link to an item page.
    pub target: i32,
    /// A link to a page that leads to items.
    pub source: i32,
    /// The next page's link.
    pub next_page: i32,
    /// Any other link followed.
    pub follow: i32,
}

impl Default for RawPriority {
    fn default() -> Self {
        RawPriority { target: 20, source: 10, next_page: 10, follow: 0 }
    }
}

/// An extraction model: what an item is, on which pages, and the processors of its items.
// Unknown keys are reported by the model itself, naming it.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(super) struct RawModel {
    /// Regular expressions: the model runs only on pages whose URL matches one (left out:
    /// every page the site's `targets` take, or every page when it has none).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub on: Vec<Spanned<String>>,
    /// Processors for this model's items, in order, before the site's.
    #[serde(default)]
    pub processors: Vec<RawProcessor>,
    #[serde(flatten)]
    pub model: Model,
}

/// One processor, written as a one-key table: `{ dedup = ["text"] }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RawProcessor {
    /// Drops an item whose values of these fields an earlier item had.
    Dedup(Vec<String>),
    /// Finds an item invalid when one of these fields is missing, null or empty.
    Require(Vec<String>),
    /// Drops the items a test on one field picks.
    Drop(RawDrop),
    /// Renames a field.
    Rename {
        /// The field's name now.
        from: String,
        /// Its new name.
        to: String,
    },
    /// Sets a field to a fixed value.
    Set {
        /// The field.
        field: String,
        /// Its value: any TOML value.
        #[schemars(with = "serde_json::Value")]
        value: toml::Value,
    },
    /// Removes these fields.
    Remove(Vec<String>),
}

/// `drop`: which items to drop, by one field.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDrop {
    /// The field tested.
    pub field: String,
    /// Drop the item when the field equals this value.
    #[schemars(with = "Option<serde_json::Value>")]
    pub equals: Option<toml::Value>,
    /// Drop the item when the field matches this regular expression.
    pub regex: Option<String>,
    /// Drop the item when it has no such field.
    #[serde(default)]
    pub missing: bool,
}

/// Where a site's items go: one or more of these.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutput {
    /// A file of JSON lines, one item a line.
    pub jsonl: Option<String>,
    /// A CSV file, one item a row.
    pub csv: Option<String>,
    /// A file holding one JSON array of the items.
    pub json: Option<String>,
    /// A PostgreSQL table.
    #[cfg(feature = "postgres")]
    pub postgres: Option<super::postgres::RawPostgres>,
    /// Built without the `postgres` feature: read only to be refused.
    #[cfg(not(feature = "postgres"))]
    #[schemars(skip)]
    pub postgres: Option<Spanned<serde::de::IgnoredAny>>,
    /// Items to standard output, as JSON lines (where they go when no output is named).
    #[serde(default)]
    pub stdout: bool,
    /// A new run may replace a file that holds data (otherwise it is refused).
    #[serde(default)]
    pub overwrite: bool,
    /// A folder for WARC files of the site's requests and answers.
    pub warc: Option<String>,
}

fn yes() -> bool {
    true
}
