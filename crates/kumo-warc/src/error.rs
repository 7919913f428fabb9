//! The one error type of the crate: every variant names the file or folder it is about.

use std::path::PathBuf;

/// Reading, writing or resuming WARC output failed.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// An operation on a file or folder failed (open, read, write, rename, sync, remove...).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A fresh crawl found an unfinished file of the same prefix: only the crawl that wrote it
    /// knows what of it was committed.
    #[error("{} holds {file}, a WARC file of an unfinished crawl; resume that crawl (run its command again) or choose another folder", dir.display())]
    NotEmpty {
        /// The output folder.
        dir: PathBuf,
        /// The unfinished file's name, `.open` included.
        file: String,
    },

    /// The file the resume position names is shorter than the position: it lost committed records.
    #[error(
        "{file} is {len} bytes long, shorter than its committed end {offset}: committed records were lost"
    )]
    Shorter {
        /// The file's final name.
        file: String,
        /// Its length, in bytes.
        len: u64,
        /// The committed end, in bytes.
        offset: u64,
    },

    /// The file the resume position names is gone (neither it nor its `.open` form exists).
    #[error("{file} (or {file}.open), where the committed output ends, does not exist")]
    Missing {
        /// The file's final name.
        file: String,
    },

    /// The resume position does not fit this writer's settings.
    #[error("the resume position {file} (seq {seq}) {why}")]
    BadPosition {
        /// The position's file name.
        file: String,
        /// The position's sequence number.
        seq: u32,
        /// What does not fit.
        why: &'static str,
    },

    /// A file that does not read as gzip members holding one WARC record each.
    #[error("{} at byte {offset}: {why}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Where the gzip member at fault starts.
        offset: u64,
        /// What is wrong with it.
        why: String,
    },
}

impl WarcError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> WarcError {
        let path = path.into();
        move |source| WarcError::Io { path, source }
    }
}
