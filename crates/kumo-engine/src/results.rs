//! The scheduler's side of a page: turning stage results into one frontier commit (acks,
//! discoveries, retries with back-off, failures, host adjustments) and counting everything.
//! `commit.rs` sends the commit.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use kumo_core::{ErrorKind, Item, SkipReason, Stage};
use kumo_frontier::{Completion, FailureRecord, HostAdjustment};
use serde::{Deserialize, Serialize};

use crate::pauses::Answer;
use crate::run::Parts;
use crate::stages::{Outcome, PageResult};
use crate::{CrawlConfig, CrawlError};

/// Counts the scheduler keeps while it runs. A durable frontier saves them with every commit,
/// so a resumed crawl's summary counts every page once, whichever run fetched it. Any field
/// missing from saved counters reads as its default (a new round keeps only `warc`).
#[derive(Default, Clone, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Tally {
    pub pages: u64,
    pub bytes: u64,
    pub items: u64,
    pub retries: u64,
    pub failed: u64,
    /// Requests answered with a page that is not retried. Counters saved before it existed
    /// read as 0.
    #[serde(default)]
    pub done: u64,
    pub by_status: BTreeMap<u16, u64>,
    pub skipped: BTreeMap<SkipReason, u64>,
    pub errors: BTreeMap<String, u64>,
    /// Failed calls of a spider's script hooks, by hook.
    pub script_errors: BTreeMap<String, u64>,
    /// Where the WARC files' committed part ends (`CrawlConfig::warc`): a resumed crawl cuts
    /// them back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc: Option<kumo_warc::WarcPosition>,
    /// This run's re-crawl counts (not saved: a summary says what its own run found).
    #[serde(skip)]
    pub changes: crate::Changes,
    /// This run's answers' latency to their headers (not saved).
    #[serde(skip)]
    pub fetch_latency: crate::Histogram,
    /// This run's commits' latency (not saved).
    #[serde(skip)]
    pub commit_latency: crate::Histogram,
    /// How long this run had free slots and queued work but every host with work had to
    /// wait (its delay, a pause, its rate limits, a back-off). Not saved.
    #[serde(skip)]
    pub politeness_wait: std::time::Duration,
}

impl Tally {
    pub fn error(&mut self, stage: Stage, kind: ErrorKind) {
        self.errors_of(stage, kind, 1);
    }

    /// Counts `n` errors of one stage and kind at once.
    pub fn errors_of(&mut self, stage: Stage, kind: ErrorKind, n: u64) {
        *self.errors.entry(format!("{stage}:{kind}")).or_default() += n;
    }

    pub fn skip(&mut self, reason: SkipReason, n: u64) {
        if n > 0 {
            *self.skipped.entry(reason).or_default() += n;
        }
    }

    /// The saved counters of an earlier run; unreadable ones count from zero (they are
    /// counters, not work: nothing is lost).
    pub fn restore(bytes: &[u8]) -> Self {
        serde_json::from_slice(bytes).unwrap_or_default()
    }
}

/// Items committed by one scheduler step, for the pipeline; `journaled_to` is the journal
/// number of the last one when the frontier journals items.
pub(crate) struct ItemBatch {
    pub items: Vec<Item>,
    pub journaled_to: Option<u64>,
}

/// Exponential back-off with jitter: `base · 2^attempt`, times a random factor in [0.5, 1.5)
/// so that many failures at once do not retry in lock-step. Saturates, never panics.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempt.min(16));
    Duration::try_from_secs_f64(exp.as_secs_f64() * (0.5 + fastrand::f64())).unwrap_or(Duration::MAX)
}

pub(crate) fn storage_error(parts: &Parts, tally: &mut Tally, e: kumo_frontier::FrontierError) {
    tally.error(Stage::Scheduler, ErrorKind::Storage);
    parts.progress.errors.fetch_add(1, Ordering::Relaxed);
    parts.errors.send(CrawlError {
        stage: Stage::Scheduler,
        kind: ErrorKind::Storage,
        module: None,
        url: None,
        message: e.to_string(),
    });
}

/// A retry if attempts are left, else a failure record.
fn retry_or_fail(
    cfg: &CrawlConfig,
    tally: &mut Tally,
    lease: kumo_frontier::LeaseId,
    retries: u32,
    after: Option<Duration>,
    failure: impl FnOnce() -> FailureRecord,
) -> Completion {
    if retries < cfg.max_retries {
        tally.retries += 1;
        let after = after.unwrap_or_else(|| backoff(cfg.retry_backoff, retries));
        Completion::Retry { lease, after }
    } else {
        tally.failed += 1;
        Completion::Failed { lease, failure: failure() }
    }
}

/// A group of page results made ready for one frontier commit (see `commit.rs`).
pub(crate) struct Prepared {
    pub pushes: Vec<(kumo_core::Fingerprint, kumo_core::Request)>,
    pub completions: Vec<Completion>,
    pub items: Vec<Item>,
    pub item_sources: Vec<(kumo_frontier::LeaseId, usize)>,
}

/// Turns a batch of page results into one commit's parts and counts them; host adjustments
/// and the throttle's new delays go to the frontier first, before the commit queues more for
/// their hosts.
pub(crate) async fn prepare(parts: &mut Parts, batch: Vec<PageResult>, tally: &mut Tally) -> Prepared {
    let cfg = parts.cfg.clone();
    let mut completions = Vec::with_capacity(batch.len());
    let mut items = Vec::new();
    let mut item_sources = Vec::new();
    let mut extra = Vec::new();
    for mut r in batch {
        extra.append(&mut r.extra);
        // Adjust the host before the completion re-queues anything for it.
        if let Some((host, adj)) = r.adjust
            && let Err(e) = parts.frontier.adjust_host(&host, adj).await
        {
            storage_error(parts, tally, e);
        }
        if let Some(l) = r.latency {
            tally.fetch_latency.observe(l);
        }
        if let (Some(s), Some(latency)) = (r.sample, r.latency) {
            let floor = cfg.politeness.policy_for(&s.host).delay;
            parts.with_throttle(|t| t.observe(&s.host, latency, s.ok, floor));
        }
        if let Outcome::Page { discovered, .. } = &r.outcome {
            parts.meet_hosts(discovered);
        }
        let lease = r.lease;
        let completion = match r.outcome {
            Outcome::Page {
                status,
                bytes,
                mut discovered,
                items: mut found,
                skips,
                errors,
                script_hooks,
                failure,
                shape,
                page,
                change,
            } => {
                tally.pages += 1;
                if let Some(c) = change {
                    tally.changes.count(c);
                }
                if let Some(shape) = shape {
                    parts.traps.count(&shape);
                }
                tally.bytes += bytes;
                *tally.by_status.entry(status).or_default() += 1;
                for s in skips {
                    tally.skip(s, 1);
                }
                for kind in errors {
                    tally.error(Stage::Parser, kind);
                    parts.progress.errors.fetch_add(1, Ordering::Relaxed);
                }
                for hook in script_hooks {
                    *tally.script_errors.entry(hook.to_string()).or_default() += 1;
                }
                tally.items += found.len() as u64;
                tally.done += 1;
                if !found.is_empty() {
                    item_sources.push((lease, found.len()));
                }
                items.append(&mut found);
                match failure {
                    None => Completion::Done { lease, discovered, page },
                    Some(f) => {
                        // The page's links still count; its request goes to the failure list.
                        extra.append(&mut discovered);
                        tally.failed += 1;
                        let failure = FailureRecord {
                            url: f.url,
                            kind: f.kind,
                            message: f.message,
                            attempts: f.attempts,
                            last_status: Some(status),
                            at: SystemTime::now(),
                        };
                        Completion::Failed { lease, failure }
                    }
                }
            }
            Outcome::RetryableStatus { status, retry_after, request } => {
                retryable_status(parts, tally, lease, status, retry_after, &request).await
            }
            Outcome::Failed(e) => failed_fetch(parts, tally, lease, e),
            Outcome::Skipped(reason) => {
                tally.skip(reason, 1);
                Completion::Done { lease, discovered: Vec::new(), page: None }
            }
            Outcome::Deferred(after) => Completion::Defer { lease, after },
        };
        completions.push(completion);
    }
    // The throttle's new delays, one per host, before the commit queues more for the hosts.
    parts.meet_hosts(&extra);
    if let Err(e) = parts.send_throttle().await {
        storage_error(parts, tally, e);
    }
    parts.progress.pages.store(tally.pages, Ordering::Relaxed);
    parts.progress.items.store(tally.items, Ordering::Relaxed);
    Prepared { pushes: extra, completions, items, item_sources }
}

/// A 429 or 5xx answer: its host paused when the answer speaks for the host (`pauses.rs`),
/// before the completion re-queues anything for it; the request retried after its own
/// `Retry-After` (when believed) or back-off, or failed once its retries are spent.
async fn retryable_status(
    parts: &mut Parts,
    tally: &mut Tally,
    lease: kumo_frontier::LeaseId,
    status: u16,
    retry_after: Option<Duration>,
    request: &kumo_core::Request,
) -> Completion {
    let cfg = &*parts.cfg;
    tally.pages += 1;
    *tally.by_status.entry(status).or_default() += 1;
    let host = request.host_key();
    let answer = Answer { host: &host, url: &request.url, status, retry_after, retries: request.retries };
    let pause = parts.pauses.on_answer(cfg, &answer, Instant::now());
    if let Some(pause) = pause {
        let adjust = HostAdjustment { pause: Some(pause), ..Default::default() };
        if let Err(e) = parts.frontier.adjust_host(&host, adjust).await {
            storage_error(parts, tally, e);
        }
    }
    let retries = request.retries;
    if retries >= cfg.max_retries {
        tally.error(Stage::Downloader, ErrorKind::Status);
    }
    // A Retry-After longer than the crawl waits is not believed: the back-off instead.
    let after = crate::pauses::believed(cfg, retry_after);
    retry_or_fail(cfg, tally, lease, retries, after, || tally_failure_status(parts, status, &request.url))
}

/// A fetch that got no whole answer: reported, then retried if its kind and retries allow.
fn failed_fetch(
    parts: &Parts,
    tally: &mut Tally,
    lease: kumo_frontier::LeaseId,
    e: kumo_downloader::FetchError,
) -> Completion {
    let cfg = &*parts.cfg;
    tally.error(Stage::Downloader, e.kind);
    parts.progress.errors.fetch_add(1, Ordering::Relaxed);
    let err = CrawlError {
        stage: Stage::Downloader,
        kind: e.kind,
        module: e.module.clone(),
        url: Some(e.request.url.to_string()),
        message: e.message.clone(),
    };
    cfg.listeners.error(&err);
    parts.errors.send(err);
    // A failure may deserve fewer retries than the crawl allows (a body too slow is tried
    // again once: `FetchError::retry_limit`).
    let most = e.retry_limit.map_or(cfg.max_retries, |l| l.min(cfg.max_retries));
    let retries =
        if e.kind.is_retryable() && e.request.retries < most { e.request.retries } else { u32::MAX };
    retry_or_fail(cfg, tally, lease, retries, None, || FailureRecord {
        url: e.request.url.to_string(),
        kind: e.kind,
        message: e.message,
        attempts: e.request.retries + 1,
        last_status: e.status,
        at: SystemTime::now(),
    })
}

/// The failure record of a request whose retries all met a retryable status.
fn tally_failure_status(parts: &Parts, status: u16, url: &kumo_core::Url) -> FailureRecord {
    let err = CrawlError {
        stage: Stage::Downloader,
        kind: ErrorKind::Status,
        module: None,
        url: Some(url.to_string()),
        message: format!("status {status} after {} retries", parts.cfg.max_retries),
    };
    parts.cfg.listeners.error(&err);
    parts.errors.send(err);
    FailureRecord {
        url: url.to_string(),
        kind: ErrorKind::Status,
        message: format!("server answered {status}"),
        attempts: parts.cfg.max_retries + 1,
        last_status: Some(status),
        at: SystemTime::now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_never_overflows() {
        assert!(backoff(Duration::MAX, 30) >= Duration::MAX / 2);
        assert!(backoff(Duration::from_secs(u64::MAX / 2), 16) > Duration::ZERO);
    }

    #[test]
    fn backoff_doubles_with_jitter() {
        let base = Duration::from_millis(100);
        for attempt in 0..5 {
            let nominal = base * (1 << attempt);
            for _ in 0..50 {
                let d = backoff(base, attempt);
                assert!(d >= nominal / 2 && d < nominal * 3 / 2, "{attempt}: {d:?}");
            }
        }
    }
}
