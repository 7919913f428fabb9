//! What a script can do wrong.

use std::time::Duration;

/// Why a script failed to load, or a call of one of its hooks failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The script does not compile, or throws while it is loaded.
    #[error("{file}:{line}:{column}: {message}")]
    Load {
        /// The name the script was loaded under.
        file: String,
        /// Line of the mistake, 0 when unknown.
        line: u32,
        /// Column of the mistake, 0 when unknown.
        column: u32,
        /// What went wrong, as the interpreter says it.
        message: String,
    },
    /// A call ran past its time budget.
    #[error("script: {hook} ran past its {budget:?} budget")]
    Timeout {
        /// The hook called (one of [`crate::HOOKS`]).
        hook: &'static str,
        /// The call's time budget ([`crate::Limits::call`]).
        budget: Duration,
    },
    /// A call needed more memory than the script's runtime may have.
    #[error("script: {hook} ran out of memory ({limit} bytes)")]
    OutOfMemory {
        /// The hook called (one of [`crate::HOOKS`]).
        hook: &'static str,
        /// The runtime's heap cap in bytes ([`crate::Limits::memory`]).
        limit: usize,
    },
    /// A call threw (a stack overflow included).
    #[error("script: {hook} threw: {message}")]
    Thrown {
        /// The hook called (one of [`crate::HOOKS`]).
        hook: &'static str,
        /// What was thrown: an error's kind and message (`TypeError: …`), or the value.
        message: String,
    },
    /// So many calls failed in a row that the script is off for the rest of the crawl (each
    /// page it would have run on fails with this).
    #[error("script: {failures} calls failed in a row; the script is turned off for the rest of the crawl")]
    Disabled {
        /// Failed calls in a row that turned it off ([`crate::FAILURES_TO_DISABLE`]).
        failures: u32,
    },
    /// kumo is stopping now ([`crate::interrupt_all`]): the call was cut short, or not made.
    #[error("script: {hook} stopped: kumo is stopping")]
    Stopped {
        /// The hook called (one of [`crate::HOOKS`]).
        hook: &'static str,
    },
    /// A call answered with something its hook cannot take.
    #[error("script: {hook} returned {got}, not {wanted}")]
    BadAnswer {
        /// The hook called (one of [`crate::HOOKS`]).
        hook: &'static str,
        /// What it answered: as JSON text (a wrong type's cut to 80 bytes), or a description.
        got: String,
        /// What the hook must answer.
        wanted: &'static str,
    },
}

impl ScriptError {
    /// The hook whose call failed (none for a load error).
    pub fn hook(&self) -> Option<&'static str> {
        match self {
            ScriptError::Load { .. } | ScriptError::Disabled { .. } => None,
            ScriptError::Timeout { hook, .. }
            | ScriptError::OutOfMemory { hook, .. }
            | ScriptError::Thrown { hook, .. }
            | ScriptError::Stopped { hook }
            | ScriptError::BadAnswer { hook, .. } => Some(hook),
        }
    }
}
