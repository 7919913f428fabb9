//! The control server of a running crawl (`kumo crawl --listen ADDR`): Prometheus metrics
//! (`/metrics`), its status (`/api/status`: the summary so far, the busiest hosts, the last
//! failures; `/api/failures`; `/api/frontier?host=`: what is queued for a host), the verbs
//! that steer it (`POST /api/pause`, `/api/resume`, `/api/stop`, `/api/requeue-failures`),
//! and a status page (`/`: one self-contained file, no CDN, polling the API).
//!
//! Handlers never touch the frontier themselves: they read the summary the engine publishes
//! twice a second and the progress counters, and they send requests through the engine's
//! [`Pauser`], [`Stopper`] and [`Steer`], which the scheduler reads between its steps.
//!
//! Guarded against other web pages (a browser reaches loopback too): the `Host` header must
//! name the server's own address, control verbs are `POST` only and must come from the
//! server's own origin (`Origin`, `Sec-Fetch-Site`, no form or text body), and no CORS header
//! is sent. A non-loopback address needs a token, which every request must then carry
//! (`Authorization: Bearer …`, compared in constant time). Connections are capped and timed
//! out (see [`serve`]), so the port cannot use up the crawl's file descriptors.

#![warn(missing_docs)]

mod auth;
mod error;
mod metrics;
pub mod serve;
mod server;

use std::sync::Arc;

use kumo_engine::{Live, Pauser, Progress, Steer, Stopper};
use tokio::sync::watch;

pub use error::ControlError;
pub use metrics::{SiteSnapshot, render as render_metrics};
pub use server::{ControlServer, ListenConfig};

/// What the server reads and steers: one running engine.
#[derive(Clone)]
pub struct Control {
    /// Stops the run (`POST /api/stop` asks for a graceful stop).
    pub stopper: Stopper,
    /// Pauses and resumes the run; the status and `/metrics` say whether it is paused.
    pub pauser: Pauser,
    /// Re-queues failures and shows a host's queue, through the scheduler.
    pub steer: Steer,
    /// The engine's summary, busiest hosts and last failures as of its last publication
    /// (`None` before its run starts).
    pub live: watch::Receiver<Option<Arc<Live>>>,
    /// The engine's counters as it goes; `/metrics` reads the requests in flight from them.
    pub progress: Arc<Progress>,
}

impl Control {
    /// The controls of `engine` (initialized).
    pub fn of(engine: &kumo_engine::Engine) -> Self {
        Control {
            stopper: engine.stopper(),
            pauser: engine.pauser(),
            steer: engine.steer(),
            live: engine.live(),
            progress: engine.progress(),
        }
    }
}

/// The engines a server watches, by site name (a spider file runs one per site; `kumo run`
/// replaces a site's at each of its runs). Metrics carry the name as their `site` label.
#[derive(Clone, Default)]
pub struct Sites(Arc<std::sync::RwLock<Vec<(String, Control)>>>);

impl Sites {
    /// One engine, named `name`.
    pub fn one(name: &str, control: Control) -> Self {
        let sites = Sites::default();
        sites.put(name, control);
        sites
    }

    /// Watches `control` as site `name`, in place of the one it had.
    pub fn put(&self, name: &str, control: Control) {
        let mut all = self.0.write().unwrap_or_else(|e| e.into_inner());
        match all.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = control,
            None => all.push((name.to_string(), control)),
        }
    }

    /// The sites, in the order they came.
    pub fn list(&self) -> Vec<(String, Control)> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
