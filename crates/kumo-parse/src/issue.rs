//! What can go wrong while extracting links. None of it stops extraction ("parsing never
//! fails"): each becomes a line in [`PageLinks::issues`](crate::PageLinks::issues).

use thiserror::Error;

/// A problem met on one page, rendered into `PageLinks::issues` with `to_string()`.
#[derive(Debug, Error)]
pub(crate) enum Issue {
    /// An `href`/`src` that does not resolve to an absolute URL.
    #[error("unparseable link {href:?}: {source}")]
    BadLink {
        href: String,
        #[source]
        source: url::ParseError,
    },
    /// `<base href>` that does not resolve; the page URL is used instead, as browsers do.
    #[error("unparseable <base href={href:?}> ({source}); resolving against the page URL")]
    BadBase {
        href: String,
        #[source]
        source: url::ParseError,
    },
    /// Issues past the per-page cap are counted, not kept.
    #[error("{0} more unparseable links not listed")]
    Suppressed(usize),
}

/// Longest raw `href` quoted in an issue; pages can carry megabyte-long `data:`-like junk.
const MAX_QUOTED: usize = 120;

/// `href` shortened for quoting in an issue, cut on a character boundary.
pub(crate) fn quoted(href: &str) -> String {
    match href.char_indices().nth(MAX_QUOTED) {
        Some((cut, _)) => format!("{}…", &href[..cut]),
        None => href.to_owned(),
    }
}

/// Collects a page's issues, keeping at most [`Issues::CAP`] so that a page full of broken
/// links costs a bounded amount of memory.
#[derive(Debug, Default)]
pub(crate) struct Issues {
    kept: Vec<String>,
    suppressed: usize,
}

impl Issues {
    pub(crate) const CAP: usize = 32;

    /// Records the issue `make` describes; `make` only runs (and allocates) under the cap.
    pub(crate) fn push(&mut self, make: impl FnOnce() -> Issue) {
        if self.kept.len() < Self::CAP {
            self.kept.push(make().to_string());
        } else {
            self.suppressed += 1;
        }
    }

    pub(crate) fn into_vec(mut self) -> Vec<String> {
        if self.suppressed > 0 {
            self.kept.push(Issue::Suppressed(self.suppressed).to_string());
        }
        self.kept
    }
}
