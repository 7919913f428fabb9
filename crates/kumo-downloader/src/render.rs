//! The plug-in point for pages fetched by something that runs their scripts: a browser
//! (`kumo-render`). The engine hands a renderer the requests its render rules pick, after
//! robots.txt and politeness, and reads the answer as any page.

use kumo_core::{Request, Response};

use crate::{Downloader, FetchError};

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
