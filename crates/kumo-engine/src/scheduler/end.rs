//! The end of a run, once its loop is over: the last commit, the stage and pipeline tasks
//! closed in order, the archive closed, and the summary.

use std::sync::Arc;

use kumo_core::{ErrorKind, ModuleSummary, Stage};
use kumo_frontier::FrontierStats;
use kumo_pipeline::Pipeline;

use super::Scheduler;
use super::figures::summary_of;
use crate::run::Parts;
use crate::summary::StopCause;
use crate::writer::{self, OutputFailure};
use crate::{Status, Summary};

impl Scheduler<'_> {
    /// Commits what is left, closes the stages (their inputs first, so they end) and then the
    /// pipeline task, closes the archive, and returns the summary.
    pub async fn end(mut self) -> Summary {
        if !self.group.is_empty() {
            // Pages fetched before a stop-now: done work, so it is committed like any other.
            self.commit_group().await;
        }
        self.committer.finish(self.parts, &mut self.tally).await;
        self.parts.status.set(Status::Stopping);
        let Scheduler {
            parts,
            cfg,
            frontier,
            workers,
            items,
            writer,
            mut tally,
            mut cause,
            mut stop_error,
            started,
            pages_at_start,
            gauges,
            ..
        } = self;
        workers.shut(cause == Some(StopCause::StoppedNow)).await;
        // The stages are gone: nothing more is committed, and the pipeline task ends.
        drop(items);
        let written = match writer.await {
            Ok(v) => v,
            Err(e) => panic!("pipeline task panicked: {e}"),
        };
        for (k, v) in written.errors {
            *tally.errors.entry(k).or_default() += v;
        }
        let held = writer::count(&written.held);
        parts.backlog = written.held;
        if let Some(f) = &written.failure {
            output_failed(f, &mut cause, &mut stop_error);
        }
        let pipeline_summary = pipeline_module(&written.pipeline);
        parts.put_pipeline(written.pipeline);

        let warc_bytes = match close_archive(parts).await {
            Ok(n) => n,
            Err(e) => {
                cause = Some(StopCause::OutputError);
                stop_error.get_or_insert(e);
                0
            }
        };
        if let Some(r) = &cfg.render {
            // The browser goes with the run; the next run starts one again.
            r.renderer.close().await;
        }
        let frontier_stats = frontier.stats().await.unwrap_or_else(|_| FrontierStats::default());
        // The cookie jar saves inside the downloaders, away from the error stream: what failed is
        // counted here, for this run.
        let cookie_save_errors = cfg.downloader.cookie_jar.as_ref().map_or(0, |jar| jar.save_errors());
        if cookie_save_errors > 0 {
            tally.errors_of(Stage::Downloader, ErrorKind::Storage, cookie_save_errors);
        }
        let mut summary =
            summary_of(parts, &tally, started, pages_at_start, frontier_stats, Status::Stopped, cause);
        summary.hosts = frontier.host_figures().await.unwrap_or_default();
        summary.stop_error = stop_error;
        summary.items_unwritten = written.unwritten;
        summary.items = summary.items.saturating_sub(held);
        summary.items_held = held;
        summary.warc_bytes = warc_bytes;
        summary.peak_memory_bytes = crate::summary::peak_memory().unwrap_or(0);
        summary.modules.pipelines = vec![pipeline_summary];
        summary.buffers = gauges.iter().map(|g| g.stats()).collect();
        cfg.listeners.finish(&summary);
        summary
    }
}

/// An output that failed is why the run stopped.
fn output_failed(f: &OutputFailure, cause: &mut Option<StopCause>, stop_error: &mut Option<String>) {
    match f {
        OutputFailure::Sink(m) => {
            *cause = Some(StopCause::OutputError);
            *stop_error = Some(m.clone());
        }
        OutputFailure::Journal(m) => {
            *cause = Some(StopCause::StorageError);
            // The frontier's failed write comes first when there was one: the journal's is then
            // only its echo (the store takes no writes after one failed).
            stop_error.get_or_insert_with(|| m.clone());
        }
    }
}

/// The pipeline's module in the summary: its counts, its sinks and processors.
fn pipeline_module(pipeline: &Pipeline) -> ModuleSummary {
    ModuleSummary {
        id: pipeline.id().clone(),
        counts: pipeline.counters().snapshot(),
        extra: match pipeline.processor_stats() {
            p if p.is_empty() => serde_json::json!({ "sinks": pipeline.sink_names() }),
            p => serde_json::json!({ "sinks": pipeline.sink_names(), "processors": p }),
        },
    }
}

/// Closes the WARC files at the end of a run (the last one renamed and indexed); a resumed
/// crawl opens them again. Returns the bytes written to them in this run.
async fn close_archive(parts: &mut Parts) -> Result<u64, String> {
    let Some(w) = parts.warc.take() else { return Ok(0) };
    // The commit tasks are done: theirs were the only other handles.
    let w = Arc::try_unwrap(w).map_err(|_| "the WARC writer is still in use".to_string())?;
    let w = w.into_inner().unwrap_or_else(|e| e.into_inner());
    let written = w.bytes_written();
    tokio::task::spawn_blocking(move || w.close())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(written)
}
