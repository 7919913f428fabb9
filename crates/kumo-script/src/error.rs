//! What a script can do wrong.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The script does not compile, or throws while it is loaded.
    #[error("{file}:{line}:{column}: {message}")]
    Load { file: String, line: u32, column: u32, message: String },
    /// A call ran past its time budget.
    #[error("script: {hook} ran past its {budget:?} budget")]
    Timeout { hook: &'static str, budget: Duration },
    /// A call needed more memory than the script's runtime may have.
    #[error("script: {hook} ran out of memory ({limit} bytes)")]
    OutOfMemory { hook: &'static str, limit: usize },
    /// A call threw (a stack overflow included).
    #[error("script: {hook} threw: {message}")]
    Thrown { hook: &'static str, message: String },
    /// So many calls failed in a row that the script is off for the rest of the crawl (each
    /// page it would have run on fails with this).
    #[error("script: {failures} calls failed in a row; the script is turned off for the rest of the crawl")]
    Disabled { failures: u32 },
    /// kumo is stopping now ([`crate::interrupt_all`]): the call was cut short, or not made.
    #[error("script: {hook} stopped: kumo is stopping")]
    Stopped { hook: &'static str },
    /// A call answered with something its hook cannot take.
    #[error("script: {hook} returned {got}, not {wanted}")]
    BadAnswer { hook: &'static str, got: String, wanted: &'static str },
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
