//! `kumo frontier hosts`: the hosts of a stopped crawl, the pauses their servers asked for,
//! and lifting them (`--unpause HOST`, `--all`), so one URL's day-long Retry-After never
//! holds a site longer than its user wants.

use std::fmt::Write as _;

use std::io::Write as _;

use anyhow::{Result, bail};
use kumo_frontier::{Frontier as _, HostView};
use serde::Serialize;

use super::args::HostsArgs;
use super::inspect_io::open;
use super::state::span;

/// A host as `--json` writes it.
#[derive(Serialize)]
struct HostLine<'a> {
    host: &'a str,
    queued: usize,
    backing_off: usize,
    delay_ms: u128,
    /// Seconds of pause left, rounded up; absent when not paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_secs: Option<u64>,
}

pub async fn run(a: HostsArgs) -> Result<()> {
    // A crawl in Redis may be running: its pauses are lifted for every worker at once.
    let redis = a.state.redis().await?;
    let store = match &redis {
        Some(_) => None,
        None => Some(open(&a.state)?),
    };
    let (views, place) = match (&redis, &store) {
        (Some(r), _) => (r.hosts().await?, format!("crawl {}", r.config().crawl)),
        (None, Some(s)) => (s.host_views(), s.dir().display().to_string()),
        (None, None) => unreachable!("one of them is open"),
    };
    let mut out = std::io::stdout().lock();
    if a.all || !a.unpause.is_empty() {
        if let Some(unknown) = a.unpause.iter().find(|h| !views.iter().any(|v| &*v.key == h.as_str())) {
            bail!("no host {unknown} in {place} (kumo frontier hosts lists them)");
        }
        let names: Vec<&str> = a.unpause.iter().map(String::as_str).collect();
        let which = (!a.all).then_some(names.as_slice());
        let lifted = match (&redis, &store) {
            (Some(r), _) => r.cap_pauses(which, std::time::Duration::ZERO).await?,
            (None, Some(s)) => s.cap_host_pauses(which, std::time::Duration::ZERO)?,
            (None, None) => unreachable!("one of them is open"),
        };
        for l in &lifted {
            writeln!(out, "lifted the pause of {} ({} were left)", l.host, span(l.was))?;
        }
        for name in &names {
            if !lifted.iter().any(|l| &*l.host == *name) {
                writeln!(out, "{name} was not paused")?;
            }
        }
        if a.all && lifted.is_empty() {
            writeln!(out, "no host was paused")?;
        }
        return Ok(());
    }
    let shown = pick(views, a.top);
    if a.json {
        let lines: Vec<HostLine> = shown
            .iter()
            .map(|h| HostLine {
                host: &h.key,
                queued: h.queued,
                backing_off: h.backing_off,
                delay_ms: h.delay.as_millis(),
                paused_secs: h.paused_for.map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0)),
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&lines)?)?;
    } else {
        write!(out, "{}", render(&shown))?;
    }
    Ok(())
}

/// Every paused host (longest pause first), then the `top` busiest of the others.
fn pick(mut hosts: Vec<HostView>, top: usize) -> Vec<HostView> {
    hosts.sort_by(|a, b| {
        b.paused_for.cmp(&a.paused_for).then(b.queued.cmp(&a.queued)).then(a.key.cmp(&b.key))
    });
    let paused = hosts.iter().take_while(|h| h.paused_for.is_some()).count();
    hosts.truncate(paused + top);
    hosts
}

fn render(hosts: &[HostView]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{:>10}  {:>11}  {:>9}  {:>10}  host", "queued", "backing off", "delay", "paused");
    for h in hosts {
        let delay =
            if h.delay.is_zero() { "-".to_string() } else { format!("{:.2}s", h.delay.as_secs_f64()) };
        let paused = h.paused_for.map_or_else(|| "-".to_string(), span);
        let _ =
            writeln!(t, "{:>10}  {:>11}  {:>9}  {:>10}  {}", h.queued, h.backing_off, delay, paused, h.key);
    }
    if hosts.iter().any(|h| h.paused_for.is_some()) {
        let _ = writeln!(t, "(--unpause HOST or --all lifts a pause)");
    }
    t
}
