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
    Kind(String),
    Table(RawRenderTable),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRenderTable {
    #[serde(default)]
    pub pages: Vec<String>,
    pub wait: Option<RawWait>,
    pub timeout_secs: Option<u64>,
    pub tabs: Option<usize>,
    pub block: Option<Vec<String>>,
    #[serde(default)]
    pub block_urls: Vec<String>,
    pub browser: Option<String>,
    pub screenshots: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(super) enum RawWait {
    Named(String),
    Selector { selector: String },
}

/// A site's rendering: the pages it takes (none: every page) and the browser's settings.
#[derive(Debug, Clone)]
pub struct RenderSpec {
    pub pages: Vec<UrlPattern>,
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
