//! The pipeline's side of a run: items to the sinks, checkpoints to the item journal, the
//! crawl's item limit, and the crawl stopped when an output fails.
//!
//! An output that cannot be written (a full disk, a closed pipe, a dropped database) stops
//! the crawl gracefully: going on would fetch pages whose items go nowhere. After the first
//! failure nothing more is written or checkpointed, so the last checkpoint stays where the
//! outputs were last whole; with a journal, every item after it is written when the crawl
//! resumes.
//!
//! `max_items` is exact here, not in the scheduler: the pages in flight when it stops still
//! commit their items, so the task writes only what is left of the limit and holds the rest.
//! Held items are never checkpointed as consumed: they stay in the journal, and a resume with
//! a higher limit (or the next run of the same engine) writes them first, exactly once.

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
    /// Items past the limit, in journal order: not written and not consumed.
    pub held: Vec<ItemBatch>,
}

/// How many items `batches` hold.
pub(crate) fn count(batches: &[ItemBatch]) -> u64 {
    batches.iter().map(|b| b.items.len() as u64).sum()
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
/// checkpoint. The items committed after it become the backlog the first run writes before
/// its own (within its limit).
///
/// Fresh outputs are checkpointed at once, before anything is written to them: so a crawl
/// killed before its first regular checkpoint resumes its own files (the checkpoint proves
/// them) instead of taking them for someone else's.
pub(crate) async fn open_pipeline(parts: &mut Parts) -> Result<(), String> {
    let mut pipeline = parts.take_pipeline();
    let result = async {
        let Some(journal) = &parts.journal else {
            return first_error(pipeline.open(None).await).map(|()| Vec::new());
        };
        let point = journal.resume_point().await.map_err(|e| e.to_string())?;
        first_error(pipeline.open(point.pipeline.as_ref()).await)?;
        if point.pipeline.is_none() {
            let mut checkpoints = Checkpoints::new(Some(journal.clone()));
            checkpoints.consumed(Some(point.upto));
            checkpoints.maybe_commit(&mut pipeline, true).await.map_err(|f| f.message().to_string())?;
        }
        let last = point.pending.last().map(|&(n, _)| n);
        let items: Vec<_> = point.pending.into_iter().map(|(_, item)| item).collect();
        Ok(if items.is_empty() { Vec::new() } else { vec![ItemBatch { items, journaled_to: last }] })
    }
    .await;
    parts.put_pipeline(pipeline);
    parts.backlog = result?;
    Ok(())
}

fn first_error(errors: Vec<kumo_pipeline::SinkError>) -> Result<(), String> {
    errors.into_iter().next().map_or(Ok(()), |e| Err(e.to_string()))
}

/// The pipeline task of one run.
pub(crate) struct Writer {
    pub pipeline: Pipeline,
    pub journal: Option<Arc<dyn ItemJournal>>,
    pub stream: Arc<ErrorStream>,
    /// Set on the first output failure: the scheduler then stops the crawl.
    pub broken: watch::Sender<bool>,
    /// Items this run may still write; `None`: no limit.
    pub room: Option<u64>,
    /// Items committed before this run and not written yet, written first.
    pub backlog: Vec<ItemBatch>,
}

/// The task's running state.
struct Writing {
    pipeline: Pipeline,
    stream: Arc<ErrorStream>,
    broken: watch::Sender<bool>,
    room: Option<u64>,
    checkpoints: Checkpoints,
    errors: BTreeMap<String, u64>,
    failure: Option<OutputFailure>,
    unwritten: u64,
    /// Items written since the last successful flush: buffered, so not surely written if a
    /// write or flush fails before the next one.
    unflushed: u64,
    held: Vec<ItemBatch>,
}

impl Writer {
    /// Starts the task that writes the backlog, then the run's items, committing checkpoints
    /// as it goes. On the first output failure it sets `broken` and from then on only counts
    /// the items it is sent.
    pub fn spawn(self, mut items: mpsc::Receiver<ItemBatch>) -> JoinHandle<Written> {
        let Writer { pipeline, journal, stream, broken, room, backlog } = self;
        let mut w = Writing {
            pipeline,
            stream,
            broken,
            room,
            checkpoints: Checkpoints::new(journal),
            errors: BTreeMap::new(),
            failure: None,
            unwritten: 0,
            unflushed: 0,
            held: Vec::new(),
        };
        tokio::spawn(async move {
            for batch in backlog {
                w.take(batch).await;
            }
            while let Some(batch) = items.recv().await {
                w.take(batch).await;
            }
            w.end().await
        })
    }
}

impl Writing {
    fn report(&mut self, kind: ErrorKind, message: String) {
        *self.errors.entry(format!("{}:{}", Stage::Pipeline, kind)).or_default() += 1;
        self.stream.send(CrawlError {
            stage: Stage::Pipeline,
            kind,
            module: Some(self.pipeline.id().clone()),
            url: None,
            message,
        });
    }

    /// Reports a failure to flush or to checkpoint (a failed write is reported as it happens)
    /// and stops taking items.
    fn fail(&mut self, f: OutputFailure) {
        match &f {
            OutputFailure::Sink(m) => self.report(ErrorKind::Io, m.clone()),
            OutputFailure::Journal(m) => self.report(ErrorKind::Storage, m.clone()),
        }
        self.broken.send_replace(true);
        self.unwritten += self.unflushed;
        self.failure = Some(f);
    }

    /// Splits off what the limit leaves no room for; returns the part to write.
    fn within_limit(&mut self, mut batch: ItemBatch) -> ItemBatch {
        let Some(room) = self.room else { return batch };
        if !self.held.is_empty() {
            // Journal numbers are consumed in order: nothing after a held item is written.
            if !batch.items.is_empty() {
                self.held.push(batch);
            }
            return ItemBatch { items: Vec::new(), journaled_to: None };
        }
        let n = batch.items.len() as u64;
        if n <= room {
            self.room = Some(room - n);
            return batch;
        }
        self.room = Some(0);
        let rest = batch.items.split_off(usize::try_from(room).unwrap_or(usize::MAX));
        let rest_n = rest.len() as u64;
        self.held.push(ItemBatch { items: rest, journaled_to: batch.journaled_to });
        // The written part ends `rest_n` numbers before the batch does.
        let journaled_to = batch.journaled_to.map(|j| j.saturating_sub(rest_n));
        ItemBatch { items: batch.items, journaled_to }
    }

    async fn take(&mut self, batch: ItemBatch) {
        if self.failure.is_some() {
            self.unwritten += batch.items.len() as u64;
            return;
        }
        let batch = self.within_limit(batch);
        let n = batch.items.len() as u64;
        if n > 0 {
            let mut failed_write = None;
            for e in self.pipeline.send(&batch.items).await {
                self.report(ErrorKind::Io, e.to_string());
                failed_write.get_or_insert(OutputFailure::Sink(e.to_string()));
            }
            if let Some(f) = failed_write {
                self.broken.send_replace(true);
                self.unwritten += self.unflushed + n;
                self.failure = Some(f);
                return;
            }
        }
        self.unflushed += n;
        self.checkpoints.consumed(batch.journaled_to);
        match self.checkpoints.maybe_commit(&mut self.pipeline, false).await {
            Ok(true) => self.unflushed = 0,
            Ok(false) => {}
            Err(f) => self.fail(f),
        }
    }

    async fn end(mut self) -> Written {
        if self.failure.is_none() {
            let end = match self.pipeline.flush().await.into_iter().next() {
                Some(e) => Err(OutputFailure::Sink(e.to_string())),
                None => self.checkpoints.maybe_commit(&mut self.pipeline, true).await,
            };
            if let Err(f) = end {
                self.fail(f);
            }
        }
        Written {
            pipeline: self.pipeline,
            errors: self.errors,
            failure: self.failure,
            unwritten: self.unwritten,
            held: self.held,
        }
    }
}
