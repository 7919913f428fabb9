//! What a renderer is told: which browser, how many tabs, how long a page may take, what to
//! wait for and what not to load.

use std::path::PathBuf;
use std::time::Duration;

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

/// A renderer's settings.
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
    pub wait: Wait,
    /// The longest [`Wait::NetworkIdle`] waits after `load`.
    pub idle_cap: Duration,
    pub block: Block,
    /// Pages one browser renders before a fresh one takes over (a browser's memory grows with
    /// the pages it has shown).
    pub recycle_after: u64,
    /// Where a PNG of each rendered page goes (named by a hash of its URL), if anywhere.
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
