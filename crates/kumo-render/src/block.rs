//! Which of a page's own requests the browser is not let to make.

use chromiumoxide::cdp::browser_protocol::network::ResourceType;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::{Block, RenderError};

/// A compiled [`Block`].
#[derive(Debug, Clone)]
pub(crate) struct Blocker {
    types: Vec<String>,
    urls: GlobSet,
}

impl Blocker {
    pub fn new(block: &Block) -> Result<Self, RenderError> {
        let mut urls = GlobSetBuilder::new();
        for g in &block.urls {
            let glob = GlobBuilder::new(g)
                .literal_separator(false)
                .build()
                .map_err(|e| RenderError::Browser(format!("bad block pattern {g:?}: {e}")))?;
            urls.add(glob);
        }
        let urls = urls.build().map_err(|e| RenderError::Browser(format!("bad block patterns: {e}")))?;
        Ok(Blocker { types: block.types.iter().map(|t| t.to_ascii_lowercase()).collect(), urls })
    }

    /// Whether a request of this type for this URL is refused. The page itself never is.
    pub fn blocks(&self, kind: &ResourceType, url: &str) -> bool {
        if *kind == ResourceType::Document {
            return false;
        }
        let name = kind.as_ref();
        self.types.iter().any(|t| t.eq_ignore_ascii_case(name)) || self.urls.is_match(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_fonts_media_and_globs_are_blocked_but_never_the_page() {
        let b = Blocker::new(&Block { urls: vec!["*.css".into()], ..Block::default() }).unwrap();
        assert!(b.blocks(&ResourceType::Image, "http://a.test/x.png"));
        assert!(b.blocks(&ResourceType::Font, "http://a.test/f.woff2"));
        assert!(b.blocks(&ResourceType::Stylesheet, "http://a.test/s/site.css"));
        assert!(!b.blocks(&ResourceType::Script, "http://a.test/app.js"));
        assert!(!b.blocks(&ResourceType::Document, "http://a.test/page.css"));
    }
}
