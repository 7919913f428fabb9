//! Logs on standard error, filtered by `-v`/`-q` or `RUST_LOG`, as text (coloured only on a
//! terminal) or as JSON lines (`--log-format json`); and the status lines kumo prints there
//! (summaries, "resuming from …"), which `-q` silences too. Neither ever panics on a closed
//! standard error: the crawl goes on without them.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Text,
    /// One JSON object per event (timestamp, level, target, fields).
    Json,
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// Whether `-q` asked for errors only on standard error.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

pub fn init(verbose: u8, quiet: bool, format: LogFormat) {
    QUIET.store(quiet, Ordering::Relaxed);
    // The DevTools client warns of every browser message its protocol version does not know
    // (a newer Chromium sends many): said only with -vv.
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn,chromiumoxide=error",
        // The storage engine's own info lines (tables flushed, writers finished) are noise
        // to a crawl's user.
        (false, 1) => "info,fjall=warn,lsm_tree=warn,chromiumoxide=error",
        (false, 2) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A log line that cannot be written is dropped: by default the subscriber reports that
    // with `eprintln!`, which panics when standard error is closed (`2>&1 | head -1`).
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .log_internal_errors(false);
    let _ = match format {
        // Colour codes only where a terminal shows them: not in a file or a pipe.
        LogFormat::Text => fmt.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => fmt.json().try_init(),
    };
}
