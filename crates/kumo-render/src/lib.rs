//! kumo's browser rendering: pages whose links and content scripts write, fetched through
//! headless Chromium over the DevTools protocol (chromiumoxide) and read from the rendered DOM.
//!
//! [`BrowserRenderer`] implements the downloader's [`Renderer`](kumo_downloader::Renderer): the
//! engine hands it the requests a crawl's render rules pick, after robots.txt and politeness,
//! and reads its answer as any page. One browser, started with the first page, runs at most
//! [`RenderConfig::tabs`] pages at once, each in a tab of its own that is closed after it.
//! The browser is a process of kumo's own: its process group is killed when the renderer
//! goes, and a parent-death signal takes it along when kumo is killed.

#![warn(missing_docs)]

mod block;
mod cookies;
mod error;
mod launch;
mod renderer;
mod tab;

pub use error::RenderError;
pub use kumo_downloader::{Block, IDLE_QUIET, RenderConfig, Wait};
pub use launch::{FLAGS, find_browser};
pub use renderer::{BrowserRenderer, screenshot_name};
