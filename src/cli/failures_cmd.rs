//! `kumo failures list|export|requeue`: the requests of a stopped crawl that failed for good.

use std::process::ExitCode;

use std::io::Write as _;

use anyhow::{Result, anyhow};
use kumo_core::ErrorKind;
use kumo_frontier::{FailureRecord, Frontier as _};
use serde::Serialize;

use super::args::{ExportArgs, FailuresCommand, FailuresListArgs, RequeueArgs};
use super::inspect_io::{describe, open, output};
use super::outcome::usage;

pub async fn run(c: FailuresCommand) -> Result<ExitCode> {
    match c {
        FailuresCommand::List(a) => list(a).await,
        FailuresCommand::Export(a) => export(a).await,
        FailuresCommand::Requeue(a) => requeue(a).await,
    }
    .map(|()| ExitCode::SUCCESS)
}

/// A failure as `list --json` shows it.
#[derive(Serialize)]
struct Listed<'a> {
    seq: u64,
    #[serde(flatten)]
    record: &'a FailureRecord,
}

async fn list(a: FailuresListArgs) -> Result<()> {
    let (failures, place): (Vec<(u64, FailureRecord)>, String) = match a.state.redis().await? {
        Some(r) => {
            let records = r.failures().await?;
            let listed = (1..).zip(records).collect();
            (listed, format!("crawl {}", r.config().crawl))
        }
        None => {
            let store = open(&a.state)?;
            let stored = store.stored_failures()?;
            let listed = stored.into_iter().map(|(seq, f)| (seq, f.record)).collect();
            (listed, store.dir().display().to_string())
        }
    };
    let mut out = std::io::stdout().lock();
    if a.json {
        let listed: Vec<_> = failures.iter().map(|(seq, record)| Listed { seq: *seq, record }).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&listed)?)?;
        return Ok(());
    }
    writeln!(out, "{} failures in {place}", failures.len())?;
    for (seq, r) in &failures {
        let status = r.last_status.map(|s| format!(", HTTP {s}")).unwrap_or_default();
        writeln!(out, "  #{seq} {} ({} attempts{status}) {}", r.kind, r.attempts, r.url)?;
        writeln!(out, "      {}", r.message)?;
    }
    Ok(())
}

async fn export(a: ExportArgs) -> Result<()> {
    let mut out = output(&a.output)?;
    let n = match a.state.redis().await? {
        Some(redis) => redis.export_failures(&mut out).await?,
        None => open(&a.state)?.export_failures(&mut out)?,
    };
    say!("exported {n} failures to {}", describe(&a.output));
    Ok(())
}

async fn requeue(a: RequeueArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let kinds = a.kinds.iter().map(|k| parse_kind(k)).collect::<Result<Vec<_>>>()?;
    let r = match a.state.redis().await? {
        Some(redis) => redis.requeue_failures(&kinds).await?,
        None => open(&a.state)?.requeue_failures(&kinds)?,
    };
    writeln!(out, "requeued {} failures; {} left", r.requeued, r.remaining)?;
    if r.invalid > 0 {
        writeln!(out, "{} of them stay: their URL does not parse", r.invalid)?;
    }
    Ok(())
}

/// `status`, `connect`, `too-large`…: the names the summary uses.
fn parse_kind(s: &str) -> Result<ErrorKind> {
    s.parse().map_err(|e| usage(anyhow!("--kind {s:?}: {e}")))
}
