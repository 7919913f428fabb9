//! The engine's status machine, with the gopcp scheduler's transition rules.
//!
//! ```text
//! uninitialized ─init─▶ initializing ─▶ initialized ─start─▶ starting ─▶ started ─stop─▶ stopping ─▶ stopped
//!                           ▲  (re-init from uninitialized, initialized or stopped)                    │
//!                           └──────────────────────────────────────────────────────────────────────────┘
//! ```
//! Rules (seeds, 000 and 002): while initializing, starting or stopping nothing may change the
//! status from outside; an uninitialized engine can be neither started nor stopped; a started
//! engine can be neither initialized nor started; only a started engine can be stopped. A
//! failed step returns to the status it came from. As in the seeds' `checkStatus`, a stopped
//! engine may be started again: it resumes from the frontier it kept.

use std::fmt;
use std::sync::Mutex;

use serde::Serialize;

/// The seven statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// New: no crawl given yet.
    Uninitialized,
    /// [`Engine::init`](crate::Engine::init) is checking the settings and building the modules.
    Initializing,
    /// Ready to start.
    Initialized,
    /// [`Engine::start`](crate::Engine::start) is opening the outputs and queueing the seeds.
    Starting,
    /// Running, paused or not.
    Started,
    /// Winding down: a stop was asked for, or the run ended and its stages are closing.
    Stopping,
    /// The run is over: the engine may start again (resuming from its frontier) or be
    /// initialized anew.
    Stopped,
}

impl Status {
    /// Every status, in the order a run goes through them.
    pub const ALL: [Status; 7] = [
        Status::Uninitialized,
        Status::Initializing,
        Status::Initialized,
        Status::Starting,
        Status::Started,
        Status::Stopping,
        Status::Stopped,
    ];

    /// Its name, as shown and serialized (`started`).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Uninitialized => "uninitialized",
            Status::Initializing => "initializing",
            Status::Initialized => "initialized",
            Status::Starting => "starting",
            Status::Started => "started",
            Status::Stopping => "stopping",
            Status::Stopped => "stopped",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused transition, saying why in the seeds' terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot go from {from} to {wanted}: {reason}")]
pub struct TransitionError {
    /// The status the engine was in.
    pub from: Status,
    /// The status the call asked for.
    pub wanted: Status,
    /// Why it was refused.
    pub reason: &'static str,
}

/// Whether an outside call may move the engine from `from` to `wanted`. Only the three
/// "-ing" statuses can be wanted; the others are reached by finishing a step.
pub fn check_transition(from: Status, wanted: Status) -> Result<(), TransitionError> {
    let refuse = |reason| Err(TransitionError { from, wanted, reason });
    match from {
        Status::Initializing => return refuse("the engine is being initialized"),
        Status::Starting => return refuse("the engine is being started"),
        Status::Stopping => return refuse("the engine is being stopped"),
        _ => {}
    }
    match wanted {
        Status::Initializing => match from {
            Status::Started => refuse("the engine has been started"),
            _ => Ok(()),
        },
        Status::Starting => match from {
            Status::Uninitialized => refuse("the engine has not been initialized"),
            Status::Started => refuse("the engine has been started"),
            _ => Ok(()),
        },
        Status::Stopping => match from {
            Status::Started => Ok(()),
            Status::Uninitialized => refuse("the engine has not been initialized"),
            _ => refuse("the engine has not been started"),
        },
        _ => refuse("only initializing, starting and stopping can be asked for"),
    }
}

/// The status with its lock: check-and-set is one step, as in the seeds' `checkAndSetStatus`.
#[derive(Debug)]
pub struct StatusCell(Mutex<Status>);

impl Default for StatusCell {
    fn default() -> Self {
        StatusCell(Mutex::new(Status::Uninitialized))
    }
}

impl StatusCell {
    /// The status now.
    pub fn get(&self) -> Status {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves to `wanted` if allowed; returns the status it came from, for rolling back.
    pub fn begin(&self, wanted: Status) -> Result<Status, TransitionError> {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        check_transition(*s, wanted)?;
        let from = *s;
        *s = wanted;
        Ok(from)
    }

    /// Ends a step: sets the status the step reached (or rolled back to).
    pub fn set(&self, to: Status) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

#[cfg(test)]
mod tests {
    use super::Status::*;
    use super::*;

    /// Every (from, wanted) pair: the allowed ones exactly, everything else refused.
    #[test]
    fn every_transition_allowed_or_refused() {
        let allowed = [
            (Uninitialized, Initializing),
            (Initialized, Initializing),
            (Stopped, Initializing),
            (Initialized, Starting),
            (Stopped, Starting),
            (Started, Stopping),
        ];
        for from in Status::ALL {
            for wanted in Status::ALL {
                let ok = check_transition(from, wanted).is_ok();
                assert_eq!(ok, allowed.contains(&(from, wanted)), "{from} -> {wanted}");
            }
        }
    }

    #[test]
    fn refusals_say_why() {
        let e = check_transition(Uninitialized, Starting).unwrap_err();
        assert_eq!(e.reason, "the engine has not been initialized");
        let e = check_transition(Started, Initializing).unwrap_err();
        assert_eq!(e.reason, "the engine has been started");
        let e = check_transition(Initialized, Stopping).unwrap_err();
        assert_eq!(e.reason, "the engine has not been started");
        let e = check_transition(Stopping, Stopping).unwrap_err();
        assert_eq!(e.reason, "the engine is being stopped");
    }

    #[test]
    fn cell_rolls_back_on_request() {
        let c = StatusCell::default();
        assert_eq!(c.begin(Initializing), Ok(Uninitialized));
        assert!(c.begin(Starting).is_err(), "nothing changes while initializing");
        c.set(Uninitialized); // the init failed: roll back
        assert_eq!(c.get(), Uninitialized);
        assert!(c.begin(Stopping).is_err());
    }
}
