//! Why a state directory could not be used, or a write failed.

use std::path::PathBuf;

use kumo_frontier::FrontierError;

/// A state directory problem. Every variant names the directory and says what to do: kumo
/// never starts over on its own when it finds state it cannot read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "{}: not a kumo state directory (it holds other files and no {marker}); choose another --state directory",
        path.display(),
        marker = crate::dir::MARKER
    )]
    Foreign { path: PathBuf },
    #[error(
        "{}: state written by an incompatible kumo ({found}; this kumo reads format {expected}); run with --fresh to start over, or use another --state directory",
        path.display()
    )]
    Incompatible { path: PathBuf, found: String, expected: u32 },
    #[error(
        "{}: the state directory is damaged ({detail}); kumo will not start over on its own: run with --fresh to discard it",
        path.display()
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "{}: no crawl state here (no {marker} file); give the --state directory of a crawl",
        path.display(),
        marker = crate::dir::MARKER
    )]
    Missing { path: PathBuf },
    #[error(
        "{}: the state directory is in use by another kumo process; wait for it to end (or stop it), or choose another --state directory",
        path.display()
    )]
    Locked { path: PathBuf },
    #[error(
        "{}: this crawl wrote to {saved}, not {now}; resume with the same outputs, or run with --fresh",
        path.display()
    )]
    OutputsChanged { path: PathBuf, saved: String, now: String },
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error("state storage: {0}")]
    Db(#[from] fjall::Error),
    #[error("state storage: cannot encode: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
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
