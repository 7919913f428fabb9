//! `--render` and its settings: pages fetched through headless Chromium, which runs their
//! scripts (the `browser` feature, on by default).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use kumo_downloader::{Block, RenderConfig, Wait};
use kumo_engine::Rendering;
use kumo_frontier::UrlPattern;

/// Rendering pages in a browser (`kumo crawl`, `kumo shell`).
#[derive(Args, Debug, Clone, Default)]
pub struct RenderArgs {
    /// Fetch pages through headless Chromium, which runs their scripts: links and records come
    /// from the rendered DOM. Robots.txt, scope, politeness, retries and outputs are as for any
    /// page. Needs Chromium (Debian: apt-get install chromium-headless-shell) or --browser.
    #[arg(long)]
    pub render: bool,
    /// Render only the pages whose URL matches PATTERN (a glob, or re:REGEX); the others are
    /// fetched plainly. Repeatable; implies --render.
    #[arg(long = "render-only", value_name = "PATTERN")]
    pub render_only: Vec<String>,
    /// The browser to run (by default Debian's chromium-headless-shell or chromium, else the
    /// first of those on PATH).
    #[arg(long, value_name = "PATH")]
    pub browser: Option<PathBuf>,
    /// Pages rendered at once, each in a tab of its own.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub browser_tabs: u16,
    /// When a rendered page is read: load (its load event), network-idle (then nothing in
    /// flight for 0.5 s, at most 3 s more), or a CSS selector to wait for (what the page's
    /// script adds last).
    #[arg(long, default_value = "load", value_name = "WAIT")]
    pub render_wait: String,
    /// The most a rendered page may take, in seconds; one that takes longer fails as a
    /// timeout and is retried as any failed fetch.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub render_timeout: u64,
    /// Resource types the browser does not load, comma-separated (image, font, media,
    /// stylesheet, script, xhr, fetch, ...), or none.
    #[arg(long, default_value = "image,font,media", value_name = "TYPES")]
    pub render_block: String,
    /// Nor URLs matching this glob (`*.css`, `*://ads.example/*`). Repeatable.
    #[arg(long, value_name = "GLOB")]
    pub render_block_url: Vec<String>,
    /// Save a PNG of each rendered page in DIR, named by a hash of its URL.
    #[arg(long, value_name = "DIR")]
    pub screenshots: Option<PathBuf>,
}

impl RenderArgs {
    /// Whether any page is rendered.
    pub fn wanted(&self) -> bool {
        self.render || !self.render_only.is_empty()
    }

    /// The crawl's rendering, if asked for: the browser is looked for now, so a missing one
    /// stops the command before it creates anything.
    pub fn rendering(&self) -> Result<Option<Rendering>> {
        if !self.wanted() {
            return Ok(None);
        }
        let only: Vec<UrlPattern> = self.render_only.iter().map(|p| UrlPattern::parse(p)).collect();
        Ok(Some(rendering(self.config(), &only)?))
    }

    fn config(&self) -> RenderConfig {
        let wait = Wait::named(&self.render_wait).unwrap_or_else(|| {
            let selector = &self.render_wait;
            Wait::Selector(selector.strip_prefix("selector:").unwrap_or(selector).to_string())
        });
        let types = match self.render_block.trim() {
            "none" | "" => Vec::new(),
            list => list.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect(),
        };
        RenderConfig {
            browser: self.browser.clone(),
            tabs: usize::from(self.browser_tabs),
            page_timeout: Duration::from_secs(self.render_timeout.max(1)),
            wait,
            block: Block { types, urls: self.render_block_url.clone() },
            screenshots: self.screenshots.clone(),
            ..RenderConfig::default()
        }
    }
}

/// A crawl's rendering of the pages matching `only` (every page when empty) with `cfg`: the
/// browser is found now, and the screenshot folder made.
pub fn rendering(cfg: RenderConfig, only: &[UrlPattern]) -> Result<Rendering> {
    if let Some(dir) = &cfg.screenshots {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot make the screenshot folder {}: {e}", dir.display()))?;
    }
    Ok(Rendering::new(renderer(cfg)?, only)?)
}

#[cfg(feature = "browser")]
fn renderer(cfg: RenderConfig) -> Result<std::sync::Arc<dyn kumo_downloader::Renderer>> {
    Ok(std::sync::Arc::new(kumo_render::BrowserRenderer::new(cfg)?))
}

#[cfg(not(feature = "browser"))]
fn renderer(_: RenderConfig) -> Result<std::sync::Arc<dyn kumo_downloader::Renderer>> {
    anyhow::bail!("rendering needs kumo built with its `browser` feature (on by default)")
}
