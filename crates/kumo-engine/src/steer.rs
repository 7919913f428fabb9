//! Requests a running crawl's scheduler carries out between its steps (`Engine::steer`):
//! re-queueing failures, which must not race its commits and changes its counters, and
//! looking at one host's queue.

use std::sync::{Arc, Mutex};

use kumo_core::ErrorKind;
use kumo_frontier::{FrontierError, HostQueue, RequeueReport};
use tokio::sync::{mpsc, oneshot};

/// Why a request to the scheduler got no answer.
#[derive(Debug, thiserror::Error)]
pub enum SteerError {
    /// No run is under way, or it ended before it answered.
    #[error("the crawl is not running")]
    NotRunning,
    /// The frontier failed to carry the request out.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
}

/// One request, with where its answer goes.
pub(crate) enum Order {
    RequeueFailures { kinds: Vec<ErrorKind>, reply: oneshot::Sender<Result<RequeueReport, FrontierError>> },
    HostQueue { host: String, max: usize, reply: oneshot::Sender<Result<Option<HostQueue>, FrontierError>> },
}

/// The scheduler's inbox of the run under way; each start opens a new one.
pub(crate) type Inbox = Arc<Mutex<Option<mpsc::Sender<Order>>>>;

/// Steers a running crawl through its scheduler. Cheap to clone; outlives runs.
#[derive(Clone, Default)]
pub struct Steer {
    inbox: Inbox,
}

impl Steer {
    pub(crate) fn new(inbox: Inbox) -> Self {
        Steer { inbox }
    }

    async fn ask<T>(
        &self,
        order: impl FnOnce(oneshot::Sender<Result<T, FrontierError>>) -> Order,
    ) -> Result<T, SteerError> {
        let tx =
            self.inbox.lock().unwrap_or_else(|e| e.into_inner()).clone().ok_or(SteerError::NotRunning)?;
        let (reply, answer) = oneshot::channel();
        tx.send(order(reply)).await.map_err(|_| SteerError::NotRunning)?;
        Ok(answer.await.map_err(|_| SteerError::NotRunning)??)
    }

    /// Moves the failures of `kinds` (all if empty) back to the queue, once the commit in
    /// flight has finished, and counts them out of the crawl's failures.
    pub async fn requeue_failures(&self, kinds: Vec<ErrorKind>) -> Result<RequeueReport, SteerError> {
        self.ask(|reply| Order::RequeueFailures { kinds, reply }).await
    }

    /// What is queued for `host` (`host[:port]`), with its next `max` requests.
    pub async fn host_queue(&self, host: &str, max: usize) -> Result<Option<HostQueue>, SteerError> {
        let host = host.to_string();
        self.ask(|reply| Order::HostQueue { host, max, reply }).await
    }
}
