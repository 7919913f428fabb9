//! The engine and its outputs: a fresh file output is checkpointed before anything is written
//! to it, so that even a crawl killed at once can prove on resume that the file is its own.

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{config, frontier};
use kumo_engine::Engine;
use kumo_pipeline::{Existing, ItemJournal, JournalError, JsonLinesSink, PipelineCheckpoint, ResumePoint};
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
