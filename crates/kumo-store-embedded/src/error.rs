//! Why a state directory could not be used, or a write failed.

use std::path::{Path, PathBuf};

use kumo_frontier::FrontierError;

/// A state directory problem. Every variant names the directory and says what to do: kumo
/// never starts over on its own when it finds state it cannot read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory holds other files and no marker: it is not a state directory.
    #[error(
        "{}: not a kumo state directory (it holds other files and no {marker}); choose another --state directory",
        path.display(),
        marker = crate::dir::MARKER
    )]
    Foreign {
        /// The directory.
        path: PathBuf,
    },
    /// The state is in a format this build does not read.
    #[error(
        "{}: state written by an incompatible kumo ({found}; this kumo reads format {expected}); run with --fresh to start over, or use another --state directory",
        path.display()
    )]
    Incompatible {
        /// The state directory.
        path: PathBuf,
        /// The format found, in words (`format 1 by kumo 0.1.0`, `database format 2`).
        found: String,
        /// The format this build reads ([`FORMAT`](crate::dir::FORMAT)).
        expected: u32,
    },
    /// The state is damaged; kumo does not start over on its own.
    #[error(
        "{}: the state directory is damaged ({detail}); kumo will not start over on its own: keep the directory if you need what it holds, or run with --fresh to discard it (`kumo state check --state DIR` checks a state without changing it)",
        path.display()
    )]
    Corrupt {
        /// The state directory, or the damaged file or folder in it.
        path: PathBuf,
        /// What is damaged.
        detail: String,
    },
    /// No state where a command expected one: no marker, and the directory empty or absent.
    #[error(
        "{}: no crawl state here (no {marker} file); give the --state directory of a crawl",
        path.display(),
        marker = crate::dir::MARKER
    )]
    Missing {
        /// The directory given.
        path: PathBuf,
    },
    /// Another process holds the state directory ([`StateLock`](crate::StateLock)).
    #[error(
        "{}: the state directory is in use by another kumo process; wait for it to end (or stop it), or choose another --state directory",
        path.display()
    )]
    Locked {
        /// The state directory.
        path: PathBuf,
    },
    /// A resumed crawl names other outputs than the state was crawled with.
    #[error(
        "{}: this crawl wrote to {saved}, not {now}; resume with the same outputs, or run with --fresh",
        path.display()
    )]
    OutputsChanged {
        /// The state directory.
        path: PathBuf,
        /// The outputs recorded, comma-separated.
        saved: String,
        /// The outputs given now, comma-separated.
        now: String,
    },
    /// A resumed crawl starts from something other than what the state's crawl started from.
    #[error(
        "{}: this state is the crawl of {saved}, not of {now}; resume it with the same start, or give this crawl another --state directory (--fresh discards the old crawl)",
        path.display()
    )]
    OriginChanged {
        /// The state directory.
        path: PathBuf,
        /// The origin recorded: start URLs, or spider file and site, in words.
        saved: String,
        /// The origin given now.
        now: String,
    },
    /// A file system operation failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or directory it failed on.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The database reported an error.
    #[error("state storage: {0}")]
    Db(#[from] fjall::Error),
    /// A value could not be encoded as JSON.
    #[error("state storage: cannot encode: {0}")]
    Encode(#[from] serde_json::Error),
    /// A frontier operation failed: a write, or one refused because an earlier write failed.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    /// Shown with its cause after it (`{:#}`), as the command line prints errors.
    #[error("cannot write the output")]
    Output(#[source] std::io::Error),
}

impl StoreError {
    /// The same error about `to`, for one met in its copy `from` (`kumo state check` opens a
    /// copy): paths under `from` are named under `to`.
    pub(crate) fn rebase(self, from: &Path, to: &Path) -> Self {
        let re = |p: PathBuf| match p.strip_prefix(from) {
            Ok(rest) if rest.as_os_str().is_empty() => to.to_path_buf(),
            Ok(rest) => to.join(rest),
            Err(_) => p,
        };
        let text = |s: String| s.replace(&from.display().to_string(), &to.display().to_string());
        match self {
            StoreError::Foreign { path } => StoreError::Foreign { path: re(path) },
            StoreError::Incompatible { path, found, expected } => {
                StoreError::Incompatible { path: re(path), found, expected }
            }
            StoreError::Corrupt { path, detail } => {
                StoreError::Corrupt { path: re(path), detail: text(detail) }
            }
            StoreError::Missing { path } => StoreError::Missing { path: re(path) },
            StoreError::Locked { path } => StoreError::Locked { path: re(path) },
            StoreError::OutputsChanged { path, saved, now } => {
                StoreError::OutputsChanged { path: re(path), saved, now }
            }
            StoreError::Io { path, error } => StoreError::Io { path: re(path), error },
            other => other,
        }
    }
}

impl From<StoreError> for FrontierError {
    fn from(e: StoreError) -> Self {
        FrontierError::Storage(e.to_string())
    }
}

pub(crate) fn db(e: fjall::Error) -> FrontierError {
    FrontierError::Storage(e.to_string())
}

pub(crate) fn encode(e: serde_json::Error) -> FrontierError {
    FrontierError::Storage(format!("cannot encode: {e}"))
}
