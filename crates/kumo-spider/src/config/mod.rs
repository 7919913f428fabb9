//! Configured spiders: a TOML file of one or more `[[site]]` tables, read raw, checked all at
//! once (every selector and pattern compiled), then built into [`SiteSpec`]s that run on the
//! engine. A mistake is a [`SpiderConfigError`] naming the file, the line and the field.
//!
//! ```toml
//! base = "http://127.0.0.1:8000"        # replaces {base} in seeds; --seed-base overrides it
//!
//! [[site]]
//! name = "quotes"
//! seeds = ["{base}/"]
//! max_depth = 0                         # 0: unlimited
//! max_path_segments = 0                 # spider traps: deeper paths are skipped (0: 32),
//! max_segment_repeats = 0               # and so are /a/a/a, /x/y/x/y/x/y (0: 2 repeats)
//! concurrency = 8                       # any crawl setting, as `kumo crawl` flags
//! per_host = 4                          # spell them (kumo-settings' table): per-host
//! delay = "250ms"                       # parallelism, spacing, user_agent, timeout,
//! auto_throttle = true                  # retries, max_duration, sitemap, strip_param…;
//!                                       # at the top of the file they hold for every site
//! targets = ['/page/\d+/$', '/tag/']    # regexes (searched in the URL): item pages
//! sources = []                          # pages whose links lead to targets
//! follow = { allow = [], deny = ['/login'], restrict_css = "div.col-md-8" }
//! priority = { target = 20, source = 10, next_page = 10, follow = 0 }
//! next_page = "li.next > a"
//! processors = [{ require = ["text"] }]
//! output = { jsonl = "quotes.jsonl" }   # also csv, stdout = true, postgres (PostgresOutput);
//!                                       # overwrite = true: a new crawl may replace the files;
//!                                       # warc = "archive/": every exchange as WARC files
//!
//! [[site.limit]]                         # per-host limit rules, first match wins
//! host = "*.example.com"                # a glob, or regex = '…'
//! per_host = 2                          # what is left out is the site's
//! delay = "500ms"
//! headers = { "x-api-key" = "…" }
//! proxies = ["http://127.0.0.1:3128"]   # this host's requests go through one of these
//!
//! script = { file = "rules.js" }        # optional: JavaScript hooks, sandboxed (`config/script.rs`)
//! render = { pages = ['/app/'], wait = "network-idle" }
//!                                       # optional: these pages (or all: render = "browser")
//!                                       # through headless Chromium (`config/render.rs`)
//!
//! [site.schedule]                      # optional: when `kumo run` runs the site again
//! every = "6h"                          # or cron = "0 */6 * * *" (UTC); start = "…Z"; times = 3
//!
//! [site.revisit]                        # optional: when a later run asks for a known page
//! every = "1d"                          # again (default: every run); per-URL rules, adaptive:
//! rules = [{ match = '/news/', every = "1h" }]
//! adaptive = { min = "1h", max = "30d", rate = 0.2 }
//!
//! [[site.model]]
//! name = "quote"
//! on = ['/page/', '/tag/']              # optional: only on these target pages
//! root = { css = "div.quote" }
//! fields = [{ name = "text", css = "span.text", required = true }]
//! processors = [{ dedup = ["text"] }]   # only for this model's items
//! ```

mod build;
mod error;
#[cfg(feature = "postgres")]
mod postgres;
mod raw;
mod render;
mod revisit;
mod schedule;
mod schema;
#[cfg(feature = "script")]
mod script;
mod settings;

use std::path::{Path, PathBuf};

pub use build::{OutputSpec, SiteSpec};
pub use error::SpiderConfigError;
#[cfg(feature = "postgres")]
pub use postgres::PostgresOutput;
pub use render::RenderSpec;
pub use schema::spider_file_schema;

/// Settings from outside the file.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Replaces `{base}` in seeds, over the file's own `base`.
    pub base: Option<String>,
    /// The most a site's script may ask for (`call_ms`, `memory_mb`); more is cut to it.
    #[cfg(feature = "script")]
    pub script_ceiling: kumo_script::Ceiling,
    /// Settings over every site's own (the command line's).
    pub flags: Option<kumo_settings::Layer>,
}

/// A checked spider file: its sites, ready to run.
#[derive(Debug, Clone)]
pub struct SpiderFile {
    /// Its sites, in file order; no two share a name.
    pub sites: Vec<SiteSpec>,
    /// Old spellings it uses, each with the new one to write (`delay_ms = 250` → `delay =
    /// "250ms"`), for the front-end to show.
    pub warnings: Vec<String>,
}

/// Reading a spider file failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// The file was read, and is not a spider file that can run.
    #[error(transparent)]
    Config(#[from] SpiderConfigError),
}

impl SpiderFile {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path, opts: &LoadOptions) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| LoadError::Io { path: path.to_path_buf(), error })?;
        Ok(Self::parse(&text, &path.display().to_string(), opts)?)
    }

    /// Checks spider file `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str, opts: &LoadOptions) -> Result<Self, SpiderConfigError> {
        let lines = error::Lines { file, text };
        let raw: raw::RawFile = toml::from_str(text).map_err(|e| lines.toml(&e))?;
        let base = opts.base.clone().or(raw.base);
        let mut sites = Vec::with_capacity(raw.site.len());
        if raw.site.is_empty() {
            return Err(lines.error(0, "site", "the file defines no [[site]]"));
        }
        let file =
            settings::layer(&lines, None, kumo_settings::Source::File, &raw.settings, &|k| k.to_string())?;
        let mut warnings = file.warnings().to_vec();
        for (index, site) in raw.site.into_iter().enumerate() {
            let cx = build::Context { lines: &lines, base: base.as_deref(), opts, file: &file, index };
            let site = build::site(&cx, site, &mut warnings)?;
            if sites.iter().any(|s: &SiteSpec| s.name == site.name) {
                return Err(lines.error(0, format!("site \"{}\"", site.name), "two sites have this name"));
            }
            sites.push(site);
        }
        Ok(SpiderFile { sites, warnings })
    }
}
