//! Stopping every script at once: kumo's second Ctrl-C (or SIGTERM) must end the process
//! soon, whatever a script is doing.

use std::sync::atomic::{AtomicBool, Ordering};

static STOPPING: AtomicBool = AtomicBool::new(false);

/// Cuts every running script call short and fails every later one (and every load) with
/// [`crate::ScriptError::Stopped`]; for a process that is about to end. There is no undoing it.
pub fn interrupt_all() {
    STOPPING.store(true, Ordering::Relaxed);
}

/// Whether [`interrupt_all`] was called.
pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::Relaxed)
}
