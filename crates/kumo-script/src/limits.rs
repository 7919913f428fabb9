//! What one call of a script may use.

use std::time::Duration;

/// Each call's budget; a call over it fails, and the page goes on without the hook's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for one call (its loops are interrupted past it).
    pub call: Duration,
    /// Heap of the script's runtime (one per thread), in bytes.
    pub memory: usize,
    /// The interpreter's stack, in bytes: deep recursion fails before the thread's own.
    pub stack: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { call: Duration::from_millis(20), memory: 16 << 20, stack: 256 << 10 }
    }
}
