//! The scheduler of one run, in rust-analyzer's main-loop shape: a [`Scheduler`] owns the
//! run's state, and `run.rs`'s loop alternates a [`Scheduler::turn`] (read the stop, pause and
//! failure signals and the limits, lease, then commit, end or wait) with one [`Event`] waited
//! for and handled (`events.rs`).
//!
//! The other files hold the rest of its job: the stage tasks and their channels
//! (`workers.rs`), the figures published while it runs (`figures.rs`), and the end of the run
//! (`end.rs`).

mod end;
mod events;
mod figures;
mod lookups;
mod workers;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kumo_core::SkipReason;
use kumo_frontier::{Frontier, FrontierError, Readiness};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub(crate) use self::events::Event;
use self::figures::LiveFeed;
use self::lookups::Lookups;
use self::workers::Workers;
use crate::buffers::{Gauge, Gauged};
use crate::commit::Committer;
use crate::group::Group;
use crate::limits::Limits;
use crate::results::{ItemBatch, Tally, storage_error};
use crate::run::{Parts, Watchers};
use crate::steer::Order;
use crate::summary::StopCause;
use crate::writer::{self, Written};
use crate::{CrawlConfig, StopMode};

/// What the loop does after a turn.
pub(crate) enum Turn {
    /// Wait for the next event.
    Wait,
    /// Take another turn at once (a commit was started: what it changes is read again).
    Again,
    /// The run is over.
    End,
}

/// One run's scheduler: everything the loop reads and changes.
pub(crate) struct Scheduler<'p> {
    /// The engine's parts; only the scheduler touches its own state in them (the throttle,
    /// the trap watch, the host pauses, the recent failures).
    parts: &'p mut Parts,
    cfg: Arc<CrawlConfig>,
    frontier: Arc<dyn Frontier>,
    workers: Workers,
    /// Items to the pipeline task, once the frontier committed their pages.
    items: Gauged<mpsc::Sender<ItemBatch>>,
    /// The pipeline task; it outlives the loop.
    writer: JoinHandle<Written>,
    /// Set by the pipeline task when an output fails: the crawl then stops.
    broken: watch::Receiver<bool>,
    stop_rx: watch::Receiver<Option<StopMode>>,
    pause_rx: watch::Receiver<bool>,
    /// A pause sender gone (its engine dropped) leaves the run unpaused, not spinning.
    pause_open: bool,
    steer_rx: mpsc::Receiver<Order>,
    live: LiveFeed,
    /// The buffers between the stages, for the summary (`buffers.rs`).
    gauges: [Arc<Gauge>; 5],
    tally: Tally,
    limits: Limits,
    started: std::time::Instant,
    pages_at_start: u64,
    /// Leases out whose results have not come back.
    in_flight: usize,
    /// `max_pages` counts pages (results analyzed into page records), not leases: a lease can
    /// end as robots.txt work (a deferral, a skip), a retry or a failure, and those must not
    /// use up the budget. Pages done plus leases in flight never exceed it.
    pages_done: u64,
    /// No more leases: the run ends once what is in flight is back and committed.
    stopping: bool,
    cause: Option<StopCause>,
    /// The message of the error that stopped the crawl, if one did.
    stop_error: Option<String>,
    /// When `max_duration` runs out; a duration past any clock means no deadline.
    deadline: Option<Instant>,
    /// Results waiting for their commit (`group.rs`).
    group: Group,
    /// The commit in flight beside the loop, at most one (`commit.rs`).
    committer: Committer,
    // What the last turn saw, for the wait that follows it.
    paused: bool,
    /// Someone watches the live figures.
    watched: bool,
    /// When leases may go out again, if they may and nothing else wakes the loop first.
    wake: Option<Instant>,
    /// Since when slots are free and work is queued but no host may go yet: politeness.
    polite_since: Option<Instant>,
    /// Hosts being looked up, with per-IP politeness (`lookups.rs`).
    lookups: Option<Lookups>,
}

impl<'p> Scheduler<'p> {
    /// Starts the run's stage tasks and its pipeline task, and takes over what the run counts
    /// on from (a resumed crawl's counters, the items waiting to be written).
    pub async fn new(
        parts: &'p mut Parts,
        stop_rx: watch::Receiver<Option<StopMode>>,
        watchers: Watchers,
        tally_skips: BTreeMap<SkipReason, u64>,
    ) -> Self {
        let Watchers { pause: pause_rx, live, steer: steer_rx } = watchers;
        let live = LiveFeed::new(live);
        let started = std::time::Instant::now();
        let (cfg, frontier) = (parts.cfg.clone(), parts.frontier.clone());
        let workers = Workers::start(parts);
        let (item_tx, item_rx) = mpsc::channel::<ItemBatch>(256);
        let items = Gauged::new("items", item_tx);
        let [leases, fetched, results] = workers.gauges();
        let gauges = [leases, fetched, results, items.gauge(), parts.errors.gauge()];

        // A resumed crawl counts on from its last commit.
        let mut tally = match frontier.saved_counters().await {
            Ok(Some(bytes)) => Tally::restore(&bytes),
            _ => Tally::default(),
        };
        for (reason, n) in tally_skips {
            tally.skip(reason, n);
        }
        let backlog = std::mem::take(&mut parts.backlog);
        let limits = Limits::new(&cfg, &tally, writer::count(&backlog));
        let (broken_tx, broken) = watch::channel(false);
        let writer = writer::Writer {
            pipeline: parts.take_pipeline(),
            journal: parts.journal.clone(),
            stream: parts.errors.clone(),
            broken: broken_tx,
            room: limits.item_room(),
            backlog,
        }
        .spawn(item_rx);
        let deadline = cfg.max_duration.and_then(|d| Instant::now().checked_add(d));
        let lookups = cfg.politeness.per_ip.and(cfg.downloader.dns.clone()).map(Lookups::new);
        Scheduler {
            pages_at_start: tally.pages,
            pages_done: limits.pages_before(),
            group: Group::new(frontier.group_linger()),
            parts,
            cfg,
            frontier,
            workers,
            items,
            writer,
            broken,
            stop_rx,
            pause_rx,
            pause_open: true,
            steer_rx,
            live,
            gauges,
            tally,
            limits,
            started,
            in_flight: 0,
            stopping: false,
            cause: None,
            stop_error: None,
            deadline,
            committer: Committer::default(),
            paused: false,
            watched: false,
            wake: None,
            polite_since: None,
            lookups,
        }
    }

    /// One turn before waiting: reads the signals and the limits, leases what it may, then
    /// commits the waiting group or ends the run when the crawl calls for it.
    pub async fn turn(&mut self) -> Turn {
        self.paused = *self.pause_rx.borrow_and_update();
        self.watched = self.live.watched();
        if self.watched && self.live.due() {
            self.publish_live().await;
        }
        if !self.read_stop() {
            return Turn::End;
        }
        self.read_failures();
        self.check_limits();
        if !self.stopping {
            self.start_lookups().await;
        }
        if !self.stopping && !self.paused && self.room() > 0 {
            self.lease().await;
        }
        let readiness = self.readiness().await;
        // Waiting results are committed at once when the crawl needs what they found (nothing
        // else is queued) or is about to end.
        if !self.group.is_empty() && (self.stopping || self.in_flight == 0 || readiness == Readiness::Empty) {
            self.commit_group().await;
            return Turn::Again;
        }
        // A commit in flight may queue more: the crawl is drained only when it is done.
        if self.in_flight == 0 && self.committer.is_idle() && (self.stopping || readiness == Readiness::Empty)
        {
            self.cause.get_or_insert(StopCause::Drained);
            return Turn::End;
        }
        self.plan_wait(readiness);
        Turn::Wait
    }

    /// Takes in a stop request; false on a stop-now, which ends the loop at once.
    fn read_stop(&mut self) -> bool {
        let mode = *self.stop_rx.borrow_and_update();
        match mode {
            Some(StopMode::Now) => {
                self.cause = Some(StopCause::StoppedNow);
                return false;
            }
            Some(StopMode::Graceful) if !self.stopping => {
                self.stopping = true;
                self.cause.get_or_insert(StopCause::Stopped);
            }
            _ => {}
        }
        true
    }

    /// Stops the crawl when an output, a commit or the archive failed, whatever else was
    /// stopping it: the failure is the cause.
    fn read_failures(&mut self) {
        if *self.broken.borrow_and_update() && self.cause != Some(StopCause::OutputError) {
            self.stopping = true;
            self.cause = Some(StopCause::OutputError);
        }
        if let Some(why) = self.parts.commit_failure.get()
            && self.cause != Some(StopCause::StorageError)
        {
            self.stopping = true;
            self.cause = Some(StopCause::StorageError);
            self.stop_error = Some(why.clone());
        }
        if let Some(why) = self.parts.warc_failure.get()
            && self.cause != Some(StopCause::OutputError)
        {
            self.stopping = true;
            self.cause = Some(StopCause::OutputError);
            self.stop_error = Some(why.clone());
        }
    }

    /// Stops the crawl at its page, item or error limit.
    fn check_limits(&mut self) {
        let cfg = &self.cfg;
        let page_cap_hit = cfg.max_pages != 0 && self.pages_done >= cfg.max_pages;
        if page_cap_hit && !self.stopping {
            self.stopping = true;
            self.cause.get_or_insert(StopCause::MaxPages);
        }
        if !self.stopping && self.limits.items_reached(&self.tally) {
            self.stopping = true;
            self.cause.get_or_insert(StopCause::MaxItems);
        }
        if !self.stopping && cfg.max_errors != 0 && self.tally.errors.values().sum::<u64>() >= cfg.max_errors
        {
            self.stopping = true;
            self.cause.get_or_insert(StopCause::MaxErrors);
        }
    }

    /// How many more leases may go out now: the free slots, within what is left of the page
    /// budget once the leases in flight are counted as pages.
    fn room(&self) -> usize {
        let slots = self.cfg.concurrency - self.in_flight;
        if self.cfg.max_pages == 0 {
            return slots;
        }
        let left = self.cfg.max_pages.saturating_sub(self.pages_done + self.in_flight as u64);
        slots.min(usize::try_from(left).unwrap_or(usize::MAX))
    }

    /// Leases up to [`Self::room`] requests and hands them to the downloaders.
    async fn lease(&mut self) {
        match self.frontier.lease(self.room()).await {
            Ok(leases) => {
                for l in leases {
                    self.in_flight += 1;
                    if !self.workers.send(l, self.in_flight).await {
                        break;
                    }
                }
            }
            Err(e) => self.storage_failed(e),
        }
        self.parts.progress.in_flight.store(self.in_flight as u64, Ordering::Relaxed);
    }

    /// Starts looking up the hosts the frontier hands out to be resolved (per-IP politeness).
    async fn start_lookups(&mut self) {
        let Some(lookups) = &mut self.lookups else { return };
        let room = lookups.room();
        if room == 0 {
            return;
        }
        match self.frontier.unresolved(room).await {
            Ok(hosts) => hosts.into_iter().for_each(|h| lookups.start(h)),
            Err(e) => self.storage_failed(e),
        }
    }

    /// When the frontier can next hand out work; `Empty` once the crawl is stopping.
    async fn readiness(&mut self) -> Readiness {
        if self.stopping {
            return Readiness::Empty;
        }
        match self.frontier.readiness().await {
            Ok(r) => r,
            Err(e) => {
                self.storage_failed(e);
                Readiness::Empty
            }
        }
    }

    /// Sets when the wait ends for leasing, and whether it is a wait for politeness.
    fn plan_wait(&mut self, readiness: Readiness) {
        // With no lease allowed (slots or budget full, or paused), only a result (or the end of
        // the pause) can change that.
        let can_lease = self.room() > 0 && !self.paused;
        self.wake = match readiness {
            Readiness::At(t) if can_lease => {
                // A shared frontier may get work from elsewhere before `t`: look again sooner.
                let t = match self.frontier.poll_interval() {
                    Some(poll) => t.min(std::time::Instant::now() + poll),
                    None => t,
                };
                Some(Instant::from_std(t))
            }
            // Leasable now but nothing was handed out: a short pause avoids spinning.
            Readiness::Now if can_lease => Some(Instant::now() + Duration::from_millis(1)),
            _ => None,
        };
        // Slots are free and work is queued, but no host may go before `t`: politeness.
        self.polite_since = matches!(readiness, Readiness::At(_) if can_lease).then(Instant::now);
    }

    /// Counts the wait that just ended toward the politeness wait, if it was one.
    pub fn count_politeness_wait(&mut self) {
        if let Some(since) = self.polite_since {
            self.tally.politeness_wait += since.elapsed();
        }
    }

    /// Starts committing the waiting group, once the commit in flight has finished.
    async fn commit_group(&mut self) {
        self.committer.start(self.parts, self.group.take(), &mut self.tally, &self.items).await;
    }

    /// A frontier call the crawl cannot go on without failed: it stops, naming the first
    /// such error.
    pub(crate) fn storage_failed(&mut self, e: FrontierError) {
        self.stop_error.get_or_insert_with(|| e.to_string());
        storage_error(self.parts, &mut self.tally, e);
        self.cause = Some(StopCause::StorageError);
        self.stopping = true;
    }
}
