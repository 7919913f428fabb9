//! What one call of a script may use, and the most a spider file may ask for.

use std::time::Duration;

/// Each call's budget; a call over it fails, and the page goes on without the hook's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for one call (its loops are interrupted past it).
    pub call: Duration,
    /// Heap of the script's runtime (one per script and thread), in bytes.
    pub memory: usize,
    /// The interpreter's stack, in bytes: deep recursion fails before the thread's own.
    pub stack: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { call: Duration::from_millis(20), memory: 16 << 20, stack: 256 << 10 }
    }
}

/// The operator's ceilings (`--script-max-call`, `--script-max-memory`): a spider file may
/// ask for less, never for more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ceiling {
    /// The longest one call may run.
    pub call: Duration,
    /// The largest heap of one script's runtime, in bytes.
    pub memory: usize,
}

impl Default for Ceiling {
    fn default() -> Self {
        Ceiling { call: Duration::from_secs(1), memory: 256 << 20 }
    }
}

impl Limits {
    /// These limits, each cut to `ceiling`.
    pub fn capped(self, ceiling: &Ceiling) -> Limits {
        Limits { call: self.call.min(ceiling.call), memory: self.memory.min(ceiling.memory), ..self }
    }
}
