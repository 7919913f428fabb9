//! What can go wrong while rendering.

use std::time::Duration;

use kumo_core::ErrorKind;

/// Why a page was not rendered; [`RenderError::kind`] maps it to the crawl's [`ErrorKind`].
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No browser to run: the message says where kumo looked.
    #[error("{0}")]
    NoBrowser(String),
    /// The browser did not start, or exited or stayed silent before giving its DevTools address.
    #[error("cannot start the browser {browser}: {message}")]
    Launch {
        /// The path of the browser run.
        browser: String,
        /// What went wrong; when the browser exited, with what it wrote to stderr.
        message: String,
    },
    /// The browser could not load the page (its network error, as Chromium names it).
    #[error("the browser could not load the page: {0}")]
    Navigate(String),
    /// The page was not loaded, waited for and read within the page timeout (the value).
    #[error("the page was not rendered within {0:?}")]
    Timeout(Duration),
    /// The serialized DOM is longer than the downloader's body cap (the value, in bytes).
    #[error("the rendered page is over the {0}-byte cap")]
    TooLarge(usize),
    /// The DevTools connection failed (the browser crashed or was killed).
    #[error("the browser failed: {0}")]
    Browser(String),
    /// The page rendered, but its screenshot could not be written.
    #[error("cannot write the screenshot {path}: {source}")]
    Screenshot {
        /// The file the screenshot was to go to.
        path: String,
        /// The write's error.
        source: std::io::Error,
    },
}

impl RenderError {
    /// The crawl's name for it: what the failure list and the retries go by.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RenderError::Navigate(text) if text.contains("TIMED_OUT") => ErrorKind::Timeout,
            RenderError::Navigate(text) if text.contains("CERT") || text.contains("SSL") => ErrorKind::Tls,
            RenderError::Navigate(_) => ErrorKind::Connect,
            RenderError::Timeout(_) => ErrorKind::Timeout,
            RenderError::TooLarge(_) => ErrorKind::TooLarge,
            RenderError::Screenshot { .. } => ErrorKind::Io,
            RenderError::NoBrowser(_) | RenderError::Launch { .. } | RenderError::Browser(_) => {
                ErrorKind::Other
            }
        }
    }
}

impl From<chromiumoxide::error::CdpError> for RenderError {
    fn from(e: chromiumoxide::error::CdpError) -> Self {
        RenderError::Browser(e.to_string())
    }
}
