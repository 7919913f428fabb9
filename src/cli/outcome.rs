//! What `kumo crawl` exits with, and the last line it prints to say why.
//!
//! A script must be able to tell a finished crawl from one that was stopped, failed, or lost
//! most of its requests; the summary is for people.

use std::process::ExitCode;

use kumo_engine::{StopCause, Summary};
use kumo_store_redis::StateGone;

/// The exit statuses, as `kumo crawl --help` lists them.
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  finished: nothing left to fetch, or a --max-pages, --max-items or --max-duration limit
     reached
  1  error: an output or the crawl state could not be written (the crawl then stops, what
     is in flight committed), no page could be fetched, or the crawl could not start (a
     refused state or output)
  2  bad usage: an option, a start URL or the spider file is wrong; nothing was crawled
  3  stopped before finishing (Ctrl-C, SIGTERM): run the same command again to resume
  4  finished, but more than --failure-threshold percent of the requests failed for good
     (kumo failures list --state DIR lists them), or stopped at --max-errors";

/// How a crawl ended, for its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Finished,
    Error,
    Usage,
    Stopped,
    Failures,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Finished => 0,
            Exit::Error => 1,
            Exit::Usage => 2,
            Exit::Stopped => 3,
            Exit::Failures => 4,
        }
    }

    /// The one to report of two sites' ends: an error before a stop before failures.
    pub fn worse(self, other: Exit) -> Exit {
        let rank = |e: Exit| match e {
            Exit::Finished => 0,
            Exit::Failures => 1,
            Exit::Stopped => 2,
            Exit::Error => 3,
            Exit::Usage => 4,
        };
        if rank(other) > rank(self) { other } else { self }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// A mistake in what was asked (an option, a start URL, the spider file): exit status 2.
#[derive(Debug)]
pub struct Usage(anyhow::Error);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Usage {}

/// Marks `e` as bad usage.
pub fn usage(e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(Usage(e))
}

/// The exit status of an error that ended the command.
pub fn of_error(e: &anyhow::Error) -> Exit {
    if e.chain().any(|c| c.is::<Usage>()) { Exit::Usage } else { Exit::Error }
}

/// Checks a `--failure-threshold`: a percentage.
pub fn check_threshold(percent: f64) -> anyhow::Result<()> {
    if !(0.0..=100.0).contains(&percent) {
        anyhow::bail!("--failure-threshold must be a percentage, from 0 to 100");
    }
    Ok(())
}

/// How the crawl of `summary` ended, said on standard error when it is not plainly finished.
/// `who` prefixes the lines (a spider file's site); `durable`: the crawl kept a state to resume
/// from; `threshold`: the percentage of failed requests above which a finished crawl is not
/// a success; `first_errors`: a few of the crawl's errors, to say why nothing was fetched.
pub fn of_crawl(
    summary: &Summary,
    who: &str,
    durable: bool,
    threshold: f64,
    first_errors: &[String],
) -> Exit {
    let resume = if durable {
        "run the same command again to resume"
    } else {
        "nothing to resume: the crawl kept no state (--memory)"
    };
    match summary.stopped_by {
        StopCause::StorageError
            if let Some(gone) = summary.stop_error.as_deref().and_then(StateGone::in_message) =>
        {
            state_gone(summary, who, gone);
            return Exit::Error;
        }
        StopCause::OutputError | StopCause::StorageError => {
            let what =
                if summary.stopped_by == StopCause::OutputError { "an output" } else { "the crawl state" };
            let why = summary.stop_error.as_deref().unwrap_or("unknown error");
            tell!("error: {who}the crawl stopped because {what} could not be written: {why}");
            if summary.items_unwritten > 0 {
                let fate = if durable {
                    "they stay in the crawl's state and are written when it resumes"
                } else {
                    "the crawl kept no state (--memory) to write them from later"
                };
                let n = summary.items_unwritten;
                let items = if n == 1 { "item was" } else { "items were" };
                tell!("  {n} {items} not confirmed written; {fate}");
            }
            return Exit::Error;
        }
        StopCause::Stopped | StopCause::StoppedNow => {
            say!("{who}stopped before finishing; {resume}");
            return Exit::Stopped;
        }
        StopCause::MaxErrors => {
            tell!("{who}stopped: --max-errors reached; {resume}");
            return Exit::Failures;
        }
        StopCause::Drained | StopCause::MaxPages | StopCause::MaxItems | StopCause::MaxDuration => {}
    }
    if summary.items_held > 0 {
        let n = summary.items_held;
        if durable {
            say!(
                "{who}{n} items past the item limit stay in the crawl's state: a resume with a higher limit writes them"
            );
        } else {
            say!("{who}{n} items past the item limit were not written (the crawl kept no state: --memory)");
        }
    }
    if summary.pages == 0 && (summary.failed > 0 || !summary.errors.is_empty()) {
        tell!("error: {who}no page could be fetched");
        for e in first_errors {
            tell!("  {e}");
        }
        return Exit::Error;
    }
    let ended = summary.done + summary.failed;
    let share = if ended == 0 { 0.0 } else { 100.0 * summary.failed as f64 / ended as f64 };
    if share > threshold {
        tell!(
            "{who}{} of {ended} requests ({share:.0} %) failed for good, more than the {threshold} % \
             --failure-threshold allows",
            summary.failed
        );
        return Exit::Failures;
    }
    Exit::Finished
}

/// A crawl in Redis whose state is gone from under this worker: said as that, with what went
/// with it (nothing is kept for a resume) and what to do.
fn state_gone(summary: &Summary, who: &str, gone: StateGone) {
    let why = summary.stop_error.as_deref().unwrap_or_default();
    tell!("error: {who}the crawl stopped: {why}");
    let items = match summary.items_unwritten {
        0 => String::new(),
        1 => "; 1 item was not confirmed written, and nothing is left to write it from later".into(),
        n => format!("; {n} items were not confirmed written, and nothing is left to write them from later"),
    };
    match gone {
        StateGone::Lost => {
            tell!("  what the crawl held in Redis is gone: its queue and its seen set{items}");
            tell!(
                "  to crawl again, start over with --fresh (the outputs are replaced only with -O, or \
                 overwrite = true in a spider file); to keep a crawl through a Redis restart, run Redis \
                 with persistence (appendonly yes)"
            );
        }
        StateGone::Cleared => {
            tell!("  what this worker held in the cleared crawl is gone with it{items}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worse_end_wins() {
        assert_eq!(Exit::Finished.worse(Exit::Failures), Exit::Failures);
        assert_eq!(Exit::Stopped.worse(Exit::Failures), Exit::Stopped);
        assert_eq!(Exit::Stopped.worse(Exit::Error), Exit::Error);
        assert_eq!(Exit::Error.worse(Exit::Finished), Exit::Error);
    }

    #[test]
    fn usage_is_found_under_context() {
        let e = usage(anyhow::anyhow!("bad")).context("while reading");
        assert_eq!(of_error(&e), Exit::Usage);
        assert_eq!(of_error(&anyhow::anyhow!("io")), Exit::Error);
    }
}
