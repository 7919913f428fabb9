//! Command-line parsing and dispatch. Only this layer uses `anyhow`; the crates it calls
//! return typed errors.

/// A status line on standard error (a summary, "resuming from …"), unless `-q` asked for
/// errors only.
macro_rules! say {
    ($($t:tt)*) => {
        if !$crate::cli::logging::quiet() {
            tell!($($t)*)
        }
    };
}

/// A line on standard error, even with `-q` (errors). Never panics as `eprintln!` does: with
/// standard error closed (`kumo crawl … 2>&1 | head -1`) the line is lost and the command goes
/// on, its work and state unharmed.
macro_rules! tell {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

/// A line on standard output, as `writeln!` (`out!(…)?`): a reader gone away is an error
/// the command returns, which `main` takes for a quiet end, never a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
    }};
}

mod args;
mod bench;
mod bench_listen;
mod bench_pairs;
#[cfg(feature = "browser")]
mod bench_render;
mod bench_script;
mod bench_warc;
mod bounds;
mod crawl;
mod demo;
mod failures_cmd;
mod frontier_cmd;
mod hosts_cmd;
mod inspect_io;
mod interrupt;
mod listen;
mod logging;
mod new_files;
mod outcome;
mod output_file;
mod parse_cmd;
mod progress;
mod redis_args;
#[cfg(test)]
mod reference;
mod render;
mod revisit_args;
mod run_cmd;
mod schedule_cmd;
mod script_args;
#[cfg(test)]
mod settings_surfaces;
mod shell;
mod spider;
mod starts;
mod state;
mod state_cmd;
mod testsite;
mod warc;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};

/// Parses a command line (the program's name first), noting which `crawl` options it gave.
fn parse<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cmd = Cli::command();
    let matches = cmd.clone().try_get_matches_from(argv)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let (Command::Crawl(a), Some(("crawl", m)), Some(sub)) =
        (&mut cli.command, matches.subcommand(), cmd.find_subcommand("crawl"))
    {
        a.given = args::given_options(sub, m);
    }
    Ok(cli)
}

pub fn main() -> ExitCode {
    let cli = parse(std::env::args_os()).unwrap_or_else(|e| e.exit());
    logging::init(cli.verbose, cli.quiet, cli.log_format);
    // Sockets, the store's files and the control port's connections all take descriptors; the
    // usual soft limit of 1024 is a fraction of what the system allows the process.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => tracing::debug!("open files: up to {n}"),
        Err(e) => tracing::debug!("open files: the limit stays ({e})"),
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = cli.threads {
        builder.worker_threads(usize::from(n));
    }
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            tell!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(runtime_threads = rt.metrics().num_workers(), "runtime started");
    let result = rt.block_on(async {
        match cli.command {
            Command::Crawl(a) => crawl::run(*a).await,
            Command::Demo(a) => demo::run(a).await,
            Command::Bench(a) => bench::run(a).await,
            Command::Testsite(a) => testsite::run(a).await,
            Command::Parse(a) => parse_cmd::run(a).await,
            Command::Shell(a) => shell::run(a).await,
            Command::Frontier(c) => frontier_cmd::run(c).await,
            Command::Failures(c) => failures_cmd::run(c).await,
            Command::State(c) => state_cmd::run(c),
            Command::Run(a) => run_cmd::run(a).await,
            Command::Schedule(c) => schedule_cmd::run(c),
        }
    });
    match result {
        Ok(code) => code,
        // A reader that stopped early (`kumo failures list | head`) is no failure.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            tell!("error: {e:#}");
            outcome::of_error(&e).into()
        }
    }
}

/// Whether `e` is standard output's reader having gone away.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
