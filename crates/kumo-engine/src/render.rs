//! Which pages a crawl fetches through its renderer (a browser that runs their scripts)
//! rather than the HTTP client. Everything else about them (scope, robots.txt, politeness,
//! leases, retries, outputs, resume) is as for any page.

use std::sync::Arc;

use kumo_core::{Request, RequestKind};
use kumo_downloader::Renderer;
use kumo_frontier::{ScopeError, UrlPattern, UrlPatterns};

/// A renderer and the URLs it takes.
#[derive(Clone)]
pub struct Rendering {
    /// What fetches the pages taken; closed when each run ends (the next starts it again).
    pub renderer: Arc<dyn Renderer>,
    /// Only pages whose URL matches one of these; none: every page.
    only: Arc<UrlPatterns>,
}

impl Rendering {
    /// Renders the pages whose URL matches one of `only` (every page when it is empty).
    pub fn new(renderer: Arc<dyn Renderer>, only: &[UrlPattern]) -> Result<Self, ScopeError> {
        Ok(Rendering { renderer, only: Arc::new(UrlPatterns::build(only)?) })
    }

    /// Whether `req` is rendered: a page (robots.txt and sitemaps never are) the patterns take.
    pub fn takes(&self, req: &Request) -> bool {
        matches!(req.kind, RequestKind::Page | RequestKind::Revisit { .. })
            && (self.only.is_empty() || self.only.matches(req.url.as_str()))
    }
}

impl std::fmt::Debug for Rendering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rendering").field("only", &self.only).finish_non_exhaustive()
    }
}
