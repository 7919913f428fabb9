//! The one error type of the crate: every variant names the file or folder it is about.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A fresh crawl found an unfinished file of the same prefix: only the crawl that wrote it
    /// knows what of it was committed.
    #[error("{} holds {file}, a WARC file of an unfinished crawl; resume that crawl (run its command again) or choose another folder", dir.display())]
    NotEmpty { dir: PathBuf, file: String },

    /// The file the resume position names is shorter than the position: it lost committed records.
    #[error(
        "{file} is {len} bytes long, shorter than its committed end {offset}: committed records were lost"
    )]
    Shorter { file: String, len: u64, offset: u64 },

    /// The file the resume position names is gone (neither it nor its `.open` form exists).
    #[error("{file} (or {file}.open), where the committed output ends, does not exist")]
    Missing { file: String },

    /// The resume position does not fit this writer's settings.
    #[error("the resume position {file} (seq {seq}) {why}")]
    BadPosition { file: String, seq: u32, why: &'static str },

    /// A file that does not read as gzip members holding one WARC record each.
    #[error("{} at byte {offset}: {why}", path.display())]
    Malformed { path: PathBuf, offset: u64, why: String },
}

impl WarcError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> WarcError {
        let path = path.into();
        move |source| WarcError::Io { path, source }
    }
}
