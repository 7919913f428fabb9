//! The pipeline's side of a run: items to the sinks, checkpoints to the item journal, and the
//! crawl stopped when an output fails.
//!
//! An output that cannot be written (a full disk, a closed pipe, a dropped database) stops
//! the crawl gracefully: going on would fetch pages whose items go nowhere. After the first
//! failure nothing more is written or checkpointed, so the last checkpoint stays where the
//! outputs were last whole; with a journal, every item after it is written when the crawl
//! resumes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_core::{ErrorKind, Stage};
use kumo_pipeline::{ItemJournal, Pipeline};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::results::ItemBatch;
use crate::run::Parts;
use crate::{CrawlError, ErrorStream};

/// Why the outputs stopped taking items.
#[derive(Debug, Clone)]
pub(crate) enum OutputFailure {
    /// A sink failed to write or flush.
    Sink(String),
    /// The journal failed to commit a checkpoint.
    Journal(String),
}

impl OutputFailure {
    pub fn message(&self) -> &str {
        match self {
            OutputFailure::Sink(m) | OutputFailure::Journal(m) => m,
        }
    }
}

/// What the pipeline task hands back at the end of a run.
pub(crate) struct Written {
    pub pipeline: Pipeline,
    /// Errors by `stage:kind`, for the summary.
    pub errors: BTreeMap<String, u64>,
    pub failure: Option<OutputFailure>,
    /// Items this run did not confirm written because of `failure`: every item since the
    /// last successful flush (a buffered writer's bytes may never have reached the output),
    /// the failed write's and every later one's.
    pub unwritten: u64,
}

/// Commits pipeline checkpoints to the journal: at most every `EVERY`, and at the end. Between
/// two, items are safe in the journal and are replayed after a crash.
struct Checkpoints {
    journal: Option<Arc<dyn ItemJournal>>,
    consumed: Option<u64>,
    committed: Option<u64>,
    last: Instant,
}

impl Checkpoints {
    const EVERY: Duration = Duration::from_millis(200);

    fn new(journal: Option<Arc<dyn ItemJournal>>) -> Self {
        Checkpoints { journal, consumed: None, committed: None, last: Instant::now() }
    }

    fn consumed(&mut self, upto: Option<u64>) {
        if upto.is_some() {
            self.consumed = upto;
        }
    }

    /// Flushes the sinks and commits where they stand, if due (or `now`). Returns whether it
    /// flushed.
    async fn maybe_commit(&mut self, pipeline: &mut Pipeline, now: bool) -> Result<bool, OutputFailure> {
        let (Some(journal), Some(upto)) = (&self.journal, self.consumed) else { return Ok(false) };
        if self.committed == Some(upto) || (!now && self.last.elapsed() < Self::EVERY) {
            return Ok(false);
        }
        self.last = Instant::now();
        if let Some(e) = pipeline.flush().await.into_iter().next() {
            // Not committed: the items stay in the journal and are written again on resume.
            return Err(OutputFailure::Sink(e.to_string()));
        }
        let checkpoint = pipeline.checkpoint();
        journal.checkpoint(upto, checkpoint).await.map_err(|e| OutputFailure::Journal(e.to_string()))?;
        self.committed = Some(upto);
        Ok(true)
    }
}

/// Opens the pipeline's sinks once per engine: fresh, or (with a journal) at the last
/// checkpoint, replaying the items committed after it.
///
/// Fresh outputs are checkpointed at once, before anything is written to them: so a crawl
/// killed before its first regular checkpoint resumes its own files (the checkpoint proves
/// them) instead of taking them for someone else's.
pub(crate) async fn open_pipeline(parts: &Parts) -> Result<(), String> {
    let mut pipeline = parts.take_pipeline();
    let result = async {
        let Some(journal) = &parts.journal else {
            return first_error(pipeline.open(None).await);
        };
        let point = journal.resume_point().await.map_err(|e| e.to_string())?;
        first_error(pipeline.open(point.pipeline.as_ref()).await)?;
        let last = point.pending.last().map(|&(n, _)| n);
        if last.is_some() {
            let items: Vec<_> = point.pending.into_iter().map(|(_, item)| item).collect();
            first_error(pipeline.send(&items).await)?;
        } else if point.pipeline.is_some() {
            return Ok(());
        }
        let mut checkpoints = Checkpoints::new(Some(journal.clone()));
        checkpoints.consumed(Some(last.unwrap_or(point.upto)));
        checkpoints.maybe_commit(&mut pipeline, true).await.map(drop).map_err(|f| f.message().to_string())
    }
    .await;
    parts.put_pipeline(pipeline);
    result
}

fn first_error(errors: Vec<kumo_pipeline::SinkError>) -> Result<(), String> {
    errors.into_iter().next().map_or(Ok(()), |e| Err(e.to_string()))
}

/// Starts the task that writes the run's items, committing checkpoints as it goes. On the
/// first output failure it sets `broken` (the scheduler then stops the crawl) and from then on
/// only counts the items it is sent.
pub(crate) fn spawn(
    mut pipeline: Pipeline,
    journal: Option<Arc<dyn ItemJournal>>,
    stream: Arc<ErrorStream>,
    mut items: mpsc::Receiver<ItemBatch>,
    broken: watch::Sender<bool>,
) -> JoinHandle<Written> {
    tokio::spawn(async move {
        let mut errors = BTreeMap::<String, u64>::new();
        let id = pipeline.id().clone();
        let mut report = |kind: ErrorKind, message: String| {
            *errors.entry(format!("{}:{}", Stage::Pipeline, kind)).or_default() += 1;
            stream.send(CrawlError {
                stage: Stage::Pipeline,
                kind,
                module: Some(id.clone()),
                url: None,
                message,
            });
        };
        let mut failure = None;
        let mut unwritten = 0;
        // Items written since the last successful flush: buffered, so not surely written if a
        // write or flush fails before the next one.
        let mut unflushed = 0;
        let mut checkpoints = Checkpoints::new(journal);
        while let Some(batch) = items.recv().await {
            let n = batch.items.len() as u64;
            if failure.is_some() {
                unwritten += n;
                continue;
            }
            let mut failed_write = None;
            for e in pipeline.send(&batch.items).await {
                report(ErrorKind::Io, e.to_string());
                failed_write.get_or_insert(OutputFailure::Sink(e.to_string()));
            }
            if let Some(f) = failed_write {
                broken.send_replace(true);
                unwritten += unflushed + n;
                failure = Some(f);
                continue;
            }
            unflushed += n;
            checkpoints.consumed(batch.journaled_to);
            match checkpoints.maybe_commit(&mut pipeline, false).await {
                Ok(true) => unflushed = 0,
                Ok(false) => {}
                Err(f) => {
                    report_failure(&mut report, &f);
                    broken.send_replace(true);
                    unwritten += unflushed;
                    failure = Some(f);
                }
            }
        }
        if failure.is_none() {
            let end = match pipeline.flush().await.into_iter().next() {
                Some(e) => Err(OutputFailure::Sink(e.to_string())),
                None => checkpoints.maybe_commit(&mut pipeline, true).await,
            };
            if let Err(f) = end {
                report_failure(&mut report, &f);
                broken.send_replace(true);
                unwritten += unflushed;
                failure = Some(f);
            }
        }
        Written { pipeline, errors, failure, unwritten }
    })
}

/// Reports a failure to flush or to checkpoint (a failed write is reported as it happens).
fn report_failure(report: &mut impl FnMut(ErrorKind, String), f: &OutputFailure) {
    match f {
        OutputFailure::Sink(m) => report(ErrorKind::Io, m.clone()),
        OutputFailure::Journal(m) => report(ErrorKind::Storage, m.clone()),
    }
}
