//! `render`: which of a site's pages are fetched through a headless browser, which runs their
//! scripts, and how.
//!
//! ```toml
//! [[site]]
//! render = "browser"                  # every page, with the defaults below
//! # or
//! render = { pages = ["*/app/*", "re:/p/\\d+"],   # only these (globs, or re:REGEX)
//!            wait = "network-idle",   # "load" (default), "network-idle", or { selector = "…" }
//!            timeout_secs = 30, tabs = 4,
//!            block = ["image", "font", "media"],  # resource types not loaded (the default)
//!            block_urls = ["*.css"], browser = "/usr/lib/chromium/chromium",
//!            screenshots = "shots/" }
//! ```

use std::path::PathBuf;
use std::time::Duration;

use kumo_downloader::{Block, RenderConfig, Wait};
use kumo_frontier::{UrlPattern, UrlPatterns};
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};

/// `"browser"`, or a table of settings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum RawRender {
    /// `"browser"`: every page of the site, with the default settings.
    Kind(String),
    /// Some pages, or other settings.
    Table(RawRenderTable),
}

/// Which pages a browser renders, and how.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRenderTable {
    /// URL patterns of the pages to render (left out: every page).
    #[serde(default)]
    pub pages: Vec<String>,
    /// When a page is read: `"load"` (the default), `"network-idle"`, or `{ selector = "CSS" }`.
    pub wait: Option<RawWait>,
    /// The most a page may take, in seconds (30), from opening its tab to reading it.
    pub timeout_secs: Option<u64>,
    /// Pages rendered at once, one tab each (4; from 1 to 64).
    pub tabs: Option<usize>,
    /// Resource types a page may not load (`image`, `font`, `media`, the default).
    pub block: Option<Vec<String>>,
    /// URL globs a page may not load (`*.png`, `*://ads.example/*`).
    #[serde(default)]
    pub block_urls: Vec<String>,
    /// The browser's path (left out: Chromium's headless shell or Chromium, as found).
    pub browser: Option<String>,
    /// A folder for a full-page PNG of each rendered page.
    pub screenshots: Option<String>,
}

/// When a rendered page is read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum RawWait {
    /// `"load"` or `"network-idle"`.
    Named(String),
    /// Once an element matches the CSS selector.
    Selector {
        /// The CSS selector.
        selector: String,
    },
}

/// A site's rendering: the pages it takes (none: every page) and the browser's settings.
#[derive(Debug, Clone)]
pub struct RenderSpec {
    /// Patterns of the pages to render (globs, or `re:REGEX`); empty: every page.
    pub pages: Vec<UrlPattern>,
    /// The browser's settings.
    pub config: RenderConfig,
}

/// Checks a site's `render`.
pub(super) fn render(
    lines: &Lines,
    at: &str,
    raw: Spanned<RawRender>,
) -> Result<RenderSpec, SpiderConfigError> {
    let offset = raw.span().start;
    let error = |field: &str, message: String| lines.error(offset, format!("{at}{field}"), message);
    let table = match raw.into_inner() {
        RawRender::Kind(kind) if kind == "browser" => {
            return Ok(RenderSpec { pages: Vec::new(), config: RenderConfig::default() });
        }
        RawRender::Kind(other) => {
            return Err(error("", format!("{other:?} is not a renderer: write render = \"browser\"")));
        }
        RawRender::Table(t) => t,
    };
    let pages: Vec<UrlPattern> = table.pages.iter().map(|p| UrlPattern::parse(p)).collect();
    UrlPatterns::build(&pages).map_err(|e| error(".pages", e.to_string()))?;
    let defaults = RenderConfig::default();
    let wait = match table.wait {
        None => defaults.wait.clone(),
        Some(RawWait::Named(w)) => Wait::named(&w).ok_or_else(|| {
            error(
                ".wait",
                format!("{w:?} is no wait: \"load\", \"network-idle\" or {{ selector = \"CSS\" }}"),
            )
        })?,
        Some(RawWait::Selector { selector }) => {
            scraper::Selector::parse(&selector)
                .map_err(|e| error(".wait.selector", format!("bad selector: {e}")))?;
            Wait::Selector(selector)
        }
    };
    let tabs = table.tabs.unwrap_or(defaults.tabs);
    if !(1..=64).contains(&tabs) {
        return Err(error(".tabs", format!("{tabs} tabs: between 1 and 64")));
    }
    let config = RenderConfig {
        browser: table.browser.map(PathBuf::from),
        tabs,
        page_timeout: table.timeout_secs.map_or(defaults.page_timeout, |s| Duration::from_secs(s.max(1))),
        wait,
        block: Block { types: table.block.unwrap_or(defaults.block.types), urls: table.block_urls },
        screenshots: table.screenshots.map(PathBuf::from),
        ..defaults
    };
    Ok(RenderSpec { pages, config })
}
