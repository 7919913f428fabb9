//! The engine and its outputs: a fresh file output is checkpointed before anything is written
//! to it, so that even a crawl killed at once can prove on resume that the file is its own;
//! an output that cannot be written stops the crawl rather than drop item after item.

use crate::common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{config, frontier};
use kumo_core::Item;
use kumo_engine::{Engine, StopCause};
use kumo_pipeline::{
    Existing, ItemJournal, JournalError, JsonLinesSink, PipelineCheckpoint, ResumePoint, Sink, SinkError,
};
use kumo_testsite::{ServerBuilder, SiteConfig};

/// A journal with nothing to resume that keeps every checkpoint committed to it.
#[derive(Default)]
struct Recorder {
    checkpoints: Mutex<Vec<(u64, PipelineCheckpoint)>>,
}

#[async_trait]
impl ItemJournal for Recorder {
    async fn resume_point(&self) -> Result<ResumePoint, JournalError> {
        Ok(ResumePoint::default())
    }

    async fn checkpoint(&self, upto: u64, checkpoint: PipelineCheckpoint) -> Result<(), JournalError> {
        self.checkpoints.lock().unwrap().push((upto, checkpoint));
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_file_output_is_checkpointed_before_its_first_write() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 10, ..Default::default() }).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let journal = Arc::new(Recorder::default());
    let mut engine = Engine::new().with_journal(journal.clone());
    let cfg = config(&server.url("/index.html"));
    let f = frontier(&cfg);
    let sink = JsonLinesSink::create_with(&path, Existing::Refuse).unwrap();
    engine.init(cfg, f, vec![Box::new(sink)]).unwrap();
    engine.start().await.unwrap();
    {
        let cps = journal.checkpoints.lock().unwrap();
        let [(upto, first)] = &cps[..] else { panic!("one checkpoint at the start: {cps:?}") };
        assert_eq!(*upto, 0);
        assert_eq!(first.sinks[0].offset, Some(0), "nothing written yet");
        let proof = first.sinks[0].file.expect("the file's proof");
        assert_eq!(proof.tail_len, 0);
        assert!(proof.file_id.is_some(), "the file's identity, for a resume before any byte");
    }
    engine.wait().await.unwrap();
}

/// A sink whose disk fills up after `room` items.
struct FillsUp {
    room: usize,
}

#[async_trait]
impl Sink for FillsUp {
    fn name(&self) -> String {
        "full".into()
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        if items.len() > self.room {
            let error = std::io::Error::from_raw_os_error(28); // ENOSPC
            return Err(SinkError::Io { target: "full".into(), error });
        }
        self.room -= items.len();
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_that_cannot_be_written_stops_the_crawl() {
    let site = SiteConfig { pages: 2_000, page_bytes: 1_000, ..Default::default() };
    let total = site.ground_truth().unique_urls as u64;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let mut cfg = config(&server.url("/index.html"));
    cfg.concurrency = 2;
    cfg.politeness.default.parallelism = 2;
    let f = frontier(&cfg);
    let mut engine = Engine::new();
    engine.init(cfg, f, vec![Box::new(FillsUp { room: 5 })]).unwrap();
    engine.start().await.unwrap();
    let summary =
        tokio::time::timeout(std::time::Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.stopped_by, StopCause::OutputError, "{summary}");
    let why = summary.stop_error.as_deref().unwrap_or_default();
    assert!(why.contains("cannot write full") && why.contains("No space left"), "{why}");
    assert!(summary.pages < total / 2, "stopped early: {} of {total} pages", summary.pages);
    // The sink took at most 5; every other item is counted as not written.
    assert!(summary.items_unwritten > 0, "{summary}");
    assert!(summary.items - summary.items_unwritten <= 5, "{summary}");
    assert!(summary.to_string().contains("stopped by: cannot write full"), "{summary}");
}
