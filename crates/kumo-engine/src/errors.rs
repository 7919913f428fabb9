//! The typed error stream: every stage reports here, and a slow or absent reader never
//! stalls the crawl (errors beyond the buffer are dropped and counted, as in the seeds'
//! `sendError`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kumo_core::{ErrorKind, ModuleId, Stage};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::buffers::{Gauge, Gauged};

/// One error of one stage.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{stage} error ({kind}){}: {message}", url.as_deref().map(|u| format!(" at {u}")).unwrap_or_default())]
pub struct CrawlError {
    /// The stage it happened in.
    pub stage: Stage,
    /// What went wrong, as the summary counts it (`stage:kind`).
    pub kind: ErrorKind,
    /// The downloader or analyzer it happened in, when one did.
    pub module: Option<ModuleId>,
    /// The URL of the request or response concerned, when there is one.
    pub url: Option<String>,
    /// What happened, in words.
    pub message: String,
}

/// The sending side, shared by all stages.
#[derive(Debug)]
pub struct ErrorStream {
    tx: Gauged<mpsc::Sender<CrawlError>>,
    dropped: AtomicU64,
}

impl ErrorStream {
    /// A stream that holds up to `buffer` errors (at least 1) for its reader, and the reader.
    pub fn new(buffer: usize) -> (Self, mpsc::Receiver<CrawlError>) {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        (ErrorStream { tx: Gauged::new("errors", tx), dropped: AtomicU64::new(0) }, rx)
    }

    /// Sends without waiting; a full or closed stream counts the error as dropped.
    pub fn send(&self, e: CrawlError) {
        if self.tx.try_send(e).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Errors dropped so far because the stream was full or its reader gone.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The stream's buffer, for the summary.
    pub(crate) fn gauge(&self) -> Arc<Gauge> {
        self.tx.gauge()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err() -> CrawlError {
        CrawlError {
            stage: Stage::Downloader,
            kind: ErrorKind::Timeout,
            module: None,
            url: None,
            message: "slow".into(),
        }
    }

    #[test]
    fn a_full_stream_drops_and_counts_instead_of_blocking() {
        let (s, mut rx) = ErrorStream::new(2);
        for _ in 0..5 {
            s.send(err());
        }
        assert_eq!(s.dropped(), 3);
        assert!(rx.try_recv().is_ok());
        drop(rx);
        s.send(err());
        assert_eq!(s.dropped(), 4, "nobody reading is the same as a full stream");
    }

    #[test]
    fn errors_print_stage_kind_and_url() {
        let mut e = err();
        e.url = Some("http://h/".into());
        assert_eq!(e.to_string(), "downloader error (timeout) at http://h/: slow");
    }
}
