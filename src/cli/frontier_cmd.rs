//! `kumo frontier stats|export|import|hosts`: the queue of a stopped crawl.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use std::io::Write as _;

use anyhow::{Context, Result};
use kumo_frontier::Frontier as _;
use kumo_store_embedded::{QueueStats, read_requests};

use super::args::{ExportArgs, FrontierCommand, FrontierStatsArgs, ImportArgs, PagesArgs};
use super::inspect_io::{describe, input, open, open_or_create, output};

pub async fn run(c: FrontierCommand) -> Result<ExitCode> {
    match c {
        FrontierCommand::Stats(a) => stats(a).await,
        FrontierCommand::Export(a) => export(a).await,
        FrontierCommand::Import(a) => import(a).await,
        FrontierCommand::Hosts(a) => super::hosts_cmd::run(a).await,
        FrontierCommand::Pages(a) => pages(&a).await,
    }
    .map(|()| ExitCode::SUCCESS)
}

async fn stats(a: FrontierStatsArgs) -> Result<()> {
    if let Some(redis) = a.state.redis().await? {
        return redis_stats(&redis, a.json).await;
    }
    let mut out = std::io::stdout().lock();
    let store = open(&a.state)?;
    let s = store.queue_stats(a.top)?;
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&s)?)?;
    } else {
        write!(out, "{}", render(store.dir(), &s, a.top))?;
    }
    Ok(())
}

/// `frontier stats` on a crawl in Redis: its counts, which every worker shares.
async fn redis_stats(redis: &kumo_store_redis::RedisFrontier, json: bool) -> Result<()> {
    let s = redis.stats().await?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&s)?)?;
    } else {
        let cfg = redis.config();
        writeln!(out, "crawl:    {} on {}", cfg.crawl, cfg.url)?;
        writeln!(out, "queued:   {}", s.queued)?;
        writeln!(out, "leased:   {} (in flight on the workers)", s.leased)?;
        writeln!(out, "hosts:    {}", s.hosts)?;
        writeln!(out, "failures: {}", s.failed)?;
    }
    Ok(())
}

async fn export(a: ExportArgs) -> Result<()> {
    if let Some(redis) = a.state.redis().await? {
        let mut out = output(&a.output)?;
        let n = redis.export_queue(&mut out).await?;
        say!("exported {n} queued requests to {}", describe(&a.output));
        return Ok(());
    }
    let store = open(&a.state)?;
    let mut out = output(&a.output)?;
    let n = store.export_queue(&mut out)?;
    say!("exported {n} queued requests to {}", describe(&a.output));
    Ok(())
}

async fn import(a: ImportArgs) -> Result<()> {
    // Every line is read and checked before anything is queued.
    let source = if a.input == "-" { "standard input" } else { a.input.as_str() };
    let requests = read_requests(input(&a.input)?).with_context(|| source.to_string())?;
    if let Some(redis) = a.state.redis().await? {
        let r = redis.import(requests).await?;
        let crawl = &redis.config().crawl;
        out!("queued {} requests ({} already seen) in crawl {crawl}", r.added, r.seen)?;
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    let store = if a.create { open_or_create(&a.state)? } else { open(&a.state)? };
    let r = store.import(requests)?;
    writeln!(out, "queued {} requests ({} already seen) in {}", r.added, r.seen, store.dir().display())?;
    Ok(())
}

/// `frontier pages`: the kept pages, by URL (of a state directory, or of a crawl in Redis).
async fn pages(a: &PagesArgs) -> Result<()> {
    let redis = a.state.redis().await?;
    let mut out = std::io::stdout().lock();
    let now = kumo_spider::schedule::millis(std::time::SystemTime::now());
    let at = |ms: u64| super::run_cmd::when(kumo_spider::schedule::from_millis(ms));
    let mut failed = None;
    if !a.json {
        writeln!(out, "{:20}  {:>10}  {:20}  URL", "CHECKED", "INTERVAL", "DUE")?;
    }
    let mut write = |p: kumo_frontier::PageRecord| {
        let due = p.checked_ms.saturating_add(p.interval_ms);
        let written = if a.json {
            let line = serde_json::json!({
                "url": p.request.url, "checked_ms": p.checked_ms, "interval_ms": p.interval_ms,
                "due_ms": due, "etag": p.etag, "last_modified": p.last_modified, "bytes": p.bytes,
            });
            writeln!(out, "{line}")
        } else {
            let checked = if p.checked_ms == 0 { "-".to_string() } else { at(p.checked_ms) };
            let interval = if p.interval_ms == 0 {
                "every run".to_string()
            } else {
                super::state::span(std::time::Duration::from_millis(p.interval_ms))
            };
            let due = if due <= now { "now".to_string() } else { at(due) };
            writeln!(out, "{checked:20}  {interval:>10}  {due:20}  {}", p.request.url)
        };
        written.map_err(|e| failed = Some(e)).is_ok()
    };
    let (n, place) = match redis {
        Some(r) => {
            let pages = r.page_records().await?;
            let n = pages.len();
            for p in pages {
                if !write(p) {
                    break;
                }
            }
            (n, format!("crawl {}", r.config().crawl))
        }
        None => {
            let store = open(&a.state)?;
            (store.for_each_page(write)?, store.dir().display().to_string())
        }
    };
    if let Some(e) = failed {
        return Err(e.into());
    }
    say!("{n} pages kept in {place}");
    Ok(())
}

/// The text form of `frontier stats`.
fn render(dir: &Path, s: &QueueStats, top: usize) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "state:    {}", dir.display());
    let _ =
        writeln!(t, "queued:   {} requests on {} hosts ({} hosts known)", s.queued, s.hosts_queued, s.hosts);
    if !s.top_hosts.is_empty() {
        let _ = writeln!(t, "  by host (top {top}):");
        for h in &s.top_hosts {
            let _ = writeln!(t, "    {:>10}  {}", h.queued, h.host);
        }
        let _ = writeln!(t, "  by priority:");
        for p in &s.by_priority {
            let _ = writeln!(t, "    {:>10}  priority {}", p.queued, p.priority);
        }
        let _ = writeln!(t, "  by depth:");
        for d in &s.by_depth {
            let _ = writeln!(t, "    {:>10}  depth {}", d.queued, d.depth);
        }
    }
    let kinds: Vec<String> = s.failures_by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    let kinds = if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
    if let Some(longest) = s.paused.first() {
        let _ = writeln!(
            t,
            "paused:   {} hosts by their server, {} the longest ({} more; kumo frontier hosts lists them)",
            s.paused.len(),
            longest.host,
            super::state::span(std::time::Duration::from_secs(longest.secs))
        );
    }
    let _ = writeln!(t, "failures: {}{kinds}", s.failures);
    let _ = writeln!(t, "seen:     {} URLs", s.seen);
    let _ = writeln!(t, "journal:  {} items not yet confirmed written", s.journal_pending);
    match s.counters.as_ref().and_then(|c| c.as_object()) {
        Some(c) => {
            // The engine's counters: show the plain numbers (pages, items, failed, …).
            let nums: Vec<String> =
                c.iter().filter_map(|(k, v)| v.as_u64().map(|n| format!("{k} {n}"))).collect();
            let _ = writeln!(t, "counters: {}", nums.join(", "));
        }
        None => {
            let _ = writeln!(t, "counters: none saved");
        }
    }
    t
}
