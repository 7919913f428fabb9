//! `kumo state check`: whether a crawl's state directory is sound, without changing it.

use std::process::ExitCode;

use std::io::Write as _;

use anyhow::Result;
use kumo_store_embedded::check_state;

use super::args::{StateCheckArgs, StateCommand};

pub fn run(c: StateCommand) -> Result<ExitCode> {
    match c {
        StateCommand::Check(a) => check(a),
    }
    .map(|()| ExitCode::SUCCESS)
}

/// A damaged or busy state is an error (exit 1) whose message says what was found.
fn check(a: StateCheckArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let report = check_state(a.state.dir()?)?;
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        writeln!(
            out,
            "{}: sound: {} queued, {} failures, {} URLs seen, {} items waiting for the outputs",
            a.state.dir()?.display(),
            report.queued,
            report.failures,
            report.seen,
            report.items_pending
        )?;
    }
    Ok(())
}
