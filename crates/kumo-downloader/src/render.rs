//! The plug-in point for pages fetched by something that runs their scripts: a browser
//! (`kumo-render`). The engine hands a renderer the requests its render rules pick, after
//! robots.txt and politeness, and reads the answer as any page.

use std::path::PathBuf;
use std::time::Duration;

use kumo_core::{Request, Response};

use crate::{Downloader, FetchError};

/// What fetches a page by running it (a browser), for the requests the engine's render rules
/// pick.
#[async_trait::async_trait]
pub trait Renderer: Send + Sync {
    /// Renders `req`'s page. `via` is the downloader the crawl picked for it: its User-Agent
    /// and body cap apply.
    async fn render(&self, req: Request, via: &Downloader) -> Result<Response, FetchError>;

    /// Stops what the renderer runs (a browser) at the end of a crawl; the next page starts
    /// it again.
    async fn close(&self) {}
}

/// The header a rendered page's response carries (`x-kumo-rendered: browser`), so analyzers and
/// page records can tell it from a plain fetch.
pub const RENDERED_HEADER: http::HeaderName = http::HeaderName::from_static("x-kumo-rendered");

/// When a rendered page is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Wait {
    /// The page's `load` event: its scripts have run and its sub-resources have come.
    #[default]
    Load,
    /// `load`, then no request in flight for [`IDLE_QUIET`], or [`RenderConfig::idle_cap`]
    /// after `load`, whichever comes first: an EventSource or a long poll never goes idle.
    NetworkIdle,
    /// `load`, then an element matching this CSS selector (what a script adds last).
    Selector(String),
}

impl Wait {
    /// A wait by its name: `load` or `network-idle` (a selector has no name).
    pub fn named(name: &str) -> Option<Wait> {
        match name {
            "load" => Some(Wait::Load),
            "network-idle" => Some(Wait::NetworkIdle),
            _ => None,
        }
    }
}

/// How long no request may be in flight for the network to count as idle.
pub const IDLE_QUIET: Duration = Duration::from_millis(500);

/// What a page's own requests are not allowed to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Resource types, as the DevTools protocol names them, in any case: `image`, `font`,
    /// `media`, `stylesheet`, `script`, `xhr`, `fetch`, ...
    pub types: Vec<String>,
    /// URL globs (`*.png`, `*://ads.example/*`); `*` crosses `/`.
    pub urls: Vec<String>,
}

impl Default for Block {
    /// Images, fonts and media: what a page's links and text never depend on.
    fn default() -> Self {
        Block { types: vec!["image".into(), "font".into(), "media".into()], urls: Vec::new() }
    }
}

/// A browser renderer's settings (what `kumo-render` runs; plain data, so spider files and
/// the command line can hold them without the browser code).
#[derive(Debug, Clone)]
pub struct RenderConfig {
    /// The browser to run; `None`: the first found of Debian's `chromium-headless-shell` and
    /// `chromium`, then those names and `google-chrome` on `PATH`.
    pub browser: Option<PathBuf>,
    /// Pages rendered at once (one tab each).
    pub tabs: usize,
    /// The most a page may take, from opening its tab to reading its DOM. One that takes
    /// longer fails as a timeout, and is retried as any failed fetch.
    pub page_timeout: Duration,
    /// When a page is read ([`Wait::Load`] by default).
    pub wait: Wait,
    /// The longest [`Wait::NetworkIdle`] waits after `load`.
    pub idle_cap: Duration,
    /// What a page's own requests may not load (images, fonts and media by default).
    pub block: Block,
    /// Pages one browser renders before a fresh one takes over (a browser's memory grows with
    /// the pages it has shown).
    pub recycle_after: u64,
    /// Where a full-page PNG of each rendered page goes (named by a hash of its URL), if
    /// anywhere.
    pub screenshots: Option<PathBuf>,
    /// The window's size in CSS pixels.
    pub viewport: (u32, u32),
}

impl Default for RenderConfig {
    fn default() -> Self {
        RenderConfig {
            browser: None,
            tabs: 4,
            page_timeout: Duration::from_secs(30),
            wait: Wait::Load,
            idle_cap: Duration::from_secs(3),
            block: Block::default(),
            recycle_after: 500,
            screenshots: None,
            viewport: (1280, 800),
        }
    }
}
