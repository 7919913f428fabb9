//! What the scheduler waits for between two turns: one [`Event`] per thing it listens to,
//! [`Scheduler::next_event`] (the only `select!` of the loop) and a handler per event that
//! changes the run's state.

use std::net::IpAddr;
use std::sync::atomic::Ordering;

use tokio::time::{Instant, sleep_until};

use super::Scheduler;
use super::lookups::Lookups;
use crate::commit::{self, Committed};
use crate::results::storage_error;
use crate::stages::PageResult;
use crate::steer::Order;
use crate::summary::StopCause;

/// One thing the scheduler was waiting for.
pub(crate) enum Event {
    /// Page results from the stages: the first that came and those queued behind it.
    Results(Vec<PageResult>),
    /// Every stage's results sender is gone.
    ResultsClosed,
    /// The waiting group's linger is over: it is committed.
    GroupDue,
    /// The commit in flight finished.
    Committed(Committed),
    /// Leases may go out again: a host's turn came, or a short pause to avoid spinning ended.
    LeaseWake,
    /// `max_duration` ran out.
    Deadline,
    /// A stop was asked for (the next turn reads how), or its sender is gone.
    Stop { sender_gone: bool },
    /// The pause was switched (the next turn reads it), or its sender is gone.
    Pause { sender_gone: bool },
    /// An order from [`crate::Steer`].
    Steer(Order),
    /// The live figures are due (the next turn publishes them).
    LiveTick,
    /// An output failed (the next turn stops the crawl).
    OutputBroken,
    /// A host's address was looked up (`None`: it has none).
    Resolved(String, Option<IpAddr>),
}

/// The next answer of the DNS stage; pending forever without one.
async fn next_answer(lookups: &mut Option<Lookups>) -> (String, Option<IpAddr>) {
    match lookups {
        Some(l) => l.next().await,
        None => std::future::pending().await,
    }
}

impl Scheduler<'_> {
    /// Waits for the next event. Every branch is cancel-safe: the one that loses a race
    /// leaves its message for the next wait.
    pub async fn next_event(&mut self) -> Event {
        let group_due = self.group.deadline().unwrap_or_else(Instant::now);
        let wake = self.wake.unwrap_or_else(Instant::now);
        let deadline = self.deadline.unwrap_or_else(Instant::now);
        tokio::select! {
            batch = self.workers.next_results() => match batch {
                Some(batch) => Event::Results(batch),
                None => Event::ResultsClosed,
            },
            _ = sleep_until(group_due), if !self.group.is_empty() => Event::GroupDue,
            done = self.committer.wait(), if !self.committer.is_idle() => Event::Committed(done),
            _ = sleep_until(wake), if self.wake.is_some() => Event::LeaseWake,
            _ = sleep_until(deadline), if self.deadline.is_some() && !self.stopping => Event::Deadline,
            changed = self.stop_rx.changed() => Event::Stop { sender_gone: changed.is_err() },
            changed = self.pause_rx.changed(), if self.pause_open => {
                Event::Pause { sender_gone: changed.is_err() }
            }
            Some(order) = self.steer_rx.recv() => Event::Steer(order),
            _ = sleep_until(self.live.next()), if self.watched => Event::LiveTick,
            // The pipeline task outlives the loop, so its sender does not go away before.
            _ = self.broken.changed(), if !self.stopping => Event::OutputBroken,
            (host, addr) = next_answer(&mut self.lookups), if self.lookups.as_ref().is_some_and(|l| !l.is_idle()) => {
                Event::Resolved(host, addr)
            }
        }
    }

    /// Results came back: their slots are free; they wait in the group, or the group is
    /// committed at once when one of them cannot wait or it is full.
    pub async fn handle_results(&mut self, batch: Vec<PageResult>) {
        self.in_flight -= batch.len();
        self.pages_done += batch.iter().filter(|r| r.outcome.is_page()).count() as u64;
        self.parts.progress.in_flight.store(self.in_flight as u64, Ordering::Relaxed);
        match self.group.add(batch) {
            Some(ids) if !self.group.is_full() => {
                if let Err(e) = self.frontier.release(&ids).await {
                    storage_error(self.parts, &mut self.tally, e);
                }
            }
            _ => self.commit_group().await,
        }
    }

    /// A host's address is known: the frontier gates it by that address from now on.
    pub async fn handle_resolved(&mut self, host: String, addr: Option<IpAddr>) {
        if let Err(e) = self.frontier.resolved(&host, addr).await {
            self.storage_failed(e);
        }
    }

    pub async fn handle_group_due(&mut self) {
        self.commit_group().await;
    }

    pub fn handle_committed(&mut self, done: Committed) {
        commit::apply(self.parts, &mut self.tally, done);
    }

    pub fn handle_deadline(&mut self) {
        self.stopping = true;
        self.cause.get_or_insert(StopCause::MaxDuration);
    }

    /// A stop sender gone (its engine dropped) stops the crawl gracefully; a stop asked for
    /// is read by the next turn.
    pub fn handle_stop(&mut self, sender_gone: bool) {
        if sender_gone {
            self.stopping = true;
            self.cause.get_or_insert(StopCause::Stopped);
        }
    }

    pub fn handle_pause(&mut self, sender_gone: bool) {
        self.pause_open = !sender_gone;
    }

    /// Carries out an order between two steps, and answers it.
    pub async fn handle_steer(&mut self, order: Order) {
        match order {
            Order::RequeueFailures { kinds, reply } => {
                // After the commit in flight, whose failures the frontier then holds.
                self.committer.finish(self.parts, &mut self.tally).await;
                let report = self.frontier.requeue_failures(&kinds).await;
                if let Ok(r) = &report {
                    self.tally.failed = self.tally.failed.saturating_sub(r.requeued as u64);
                    self.parts.recent_failures.forget(&kinds);
                }
                let _ = reply.send(report);
            }
            Order::HostQueue { host, max, reply } => {
                let _ = reply.send(self.frontier.host_queue(&host, max).await);
            }
        }
    }
}
