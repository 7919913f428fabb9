//! `kumo bench`: crawls the synthetic site (served by a child `kumo testsite` process, so the
//! server's CPU and memory are not counted as the crawler's) and reports pages, pages/s, CPU
//! per page (in kumo's code and in the kernel) and peak memory of the crawler process, and the
//! CPU the site's process used per page on the same cores. Linux only: CPU and memory come from
//! /proc.

use std::process::{ExitCode, Stdio};

use anyhow::{Context, Result};
use kumo::{Crawler, Store};
use kumo_core::Url;
use kumo_engine::CrawlConfig;
use kumo_frontier::{HostPolicy, Politeness};
use kumo_pipeline::JsonLinesSink;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::args::BenchArgs;

/// CPU time a process used so far, as the kernel counts it: in its own code (user) and in
/// the kernel on its behalf (system calls, the loopback TCP stack, page faults).
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    user: f64,
    kernel: f64,
}

impl Cpu {
    /// `pid` is a process ID, or `self`.
    fn of(pid: &str) -> Option<Cpu> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name (which may contain spaces) start after the last ')'.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // The kernel reports in USER_HZ, which is 100 on every Linux build that matters here.
        let secs = |i: usize| Some(f.get(i)?.parse::<f64>().ok()? / 100.0);
        Some(Cpu { user: secs(11)?, kernel: secs(12)? })
    }

    fn total(&self) -> f64 {
        self.user + self.kernel
    }

    fn since(self, earlier: Cpu) -> Cpu {
        Cpu { user: self.user - earlier.user, kernel: self.kernel - earlier.kernel }
    }

    /// `user U, kernel K`: microseconds per one of `n`.
    fn split_per(&self, n: f64) -> String {
        format!("user {:.1}, kernel {:.1}", self.user / n * 1e6, self.kernel / n * 1e6)
    }
}

/// CPU seconds (user + system) used by this process so far.
pub(super) fn cpu_secs() -> Option<f64> {
    Cpu::of("self").map(|c| c.total())
}

/// A crawl of `cfg` in memory whose page records are serialized as a real crawl's are, then
/// thrown away.
pub(super) fn in_memory(cfg: &CrawlConfig) -> Crawler {
    Crawler::configured(cfg.clone()).sink(null_sink())
}

fn null_sink() -> JsonLinesSink {
    JsonLinesSink::from_writer("null".into(), Box::new(std::io::sink()))
}

/// Starts `kumo testsite` for the bench's site as a child process, and reads where it listens.
async fn start_site(a: &BenchArgs) -> Result<(tokio::process::Child, String)> {
    let exe = std::env::current_exe().context("cannot find the kumo executable")?;
    let mut child = Command::new(exe)
        .args(["--quiet", "testsite", "--no-record"])
        .args(a.recrawl.then_some("--validators"))
        .args(a.render.then(|| ["--scripted".to_string(), a.pages.to_string()]).into_iter().flatten())
        .args([
            "--pages",
            &a.pages.to_string(),
            "--page-bytes",
            &a.page_bytes.to_string(),
            "--links",
            &a.links.to_string(),
        ])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start the test site process")?;
    let stdout = child.stdout.take().context("no stdout from the test site")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).await?;
    let base = line.trim().to_string();
    anyhow::ensure!(base.starts_with("http://"), "the test site did not say where it listens");
    Ok((child, base))
}

/// What the recrawl of `--recrawl` came to: pages asked again, its summary, its CPU and the
/// site's.
type Again = (usize, kumo_engine::Summary, Cpu, Cpu);

pub async fn run(a: BenchArgs) -> Result<ExitCode> {
    let durable = a.durable || a.recrawl;
    let (mut child, base) = start_site(&a).await?;
    let base = base.as_str();
    let seed = Url::parse(&format!("{base}/index.html"))?;
    // The site's own CPU, on the same cores: it bounds how fast any crawl of it can go here.
    let site_pid = child.id().map(|p| p.to_string());
    let now = || {
        let site = site_pid.as_deref().and_then(Cpu::of).unwrap_or_default();
        (Cpu::of("self").unwrap_or_default(), site)
    };

    let cfg = CrawlConfig {
        seeds: vec![seed],
        concurrency: a.concurrency,
        politeness: Politeness {
            default: HostPolicy { parallelism: a.per_host, ..Default::default() },
            ..Default::default()
        },
        keep_pages: a.recrawl,
        ..Default::default()
    };
    // The comparisons crawl in memory, keeping no page records.
    let cfg_compared = CrawlConfig { keep_pages: false, ..cfg.clone() };
    let state_dir = std::env::temp_dir().join(format!("kumo-bench-{}", std::process::id()));
    // As `kumo crawl` runs by default: every commit to the embedded store, items journaled
    // and checkpointed into a real file beside it.
    let durably = |store: Store| -> Result<Crawler> {
        std::fs::create_dir_all(&state_dir)?;
        let sink = JsonLinesSink::create(&state_dir.join("pages.jsonl"))?;
        Ok(Crawler::configured(cfg.clone()).store(store).sink(sink))
    };
    let crawler = match durable {
        true => durably(Store::dir(state_dir.join("state")).fresh())?,
        false => in_memory(&cfg),
    };
    let crawl = crawler.build().await?;
    let (cpu0, site0) = now();
    let summary = crawl.run(None).await?;
    let (cpu1, site1) = now();
    let (cpu_split, site_cpu) = (cpu1.since(cpu0), site1.since(site0));
    // --recrawl: the same crawl again, every page asked for with its validators; the same
    // output, resumed at its checkpoint, the new items after the first run's.
    let again = match a.recrawl {
        true => {
            let plan = durably(Store::dir(state_dir.join("state")))?.prepare()?;
            let opened = plan.store().open(&plan.identity()).await?;
            let store = opened.embedded.clone().context("a durable bench keeps a state directory")?;
            let asked = store
                .revisit_pages(kumo_spider::schedule::millis(std::time::SystemTime::now()), true)?
                .queued;
            let crawl = plan.on(opened)?;
            let (cpu0, site0) = now();
            let again = crawl.run(None).await?;
            let (cpu1, site1) = now();
            Some((asked, again, cpu1.since(cpu0), site1.since(site0)))
        }
        false => None,
    };
    // --listen and --warc: while the site still serves.
    let watching = match a.listen {
        true => Some(super::bench_listen::compare(&cfg_compared).await?),
        false => None,
    };
    let archiving = match a.warc {
        true => Some(super::bench_warc::compare(&cfg_compared).await?),
        false => None,
    };
    let scripting = match a.script {
        true => Some(super::bench_script::compare(&cfg_compared).await?),
        false => None,
    };
    let rendering = match a.render {
        true => Some(render_lines(&cfg_compared, base, &summary).await?),
        false => None,
    };
    let _ = child.kill().await;
    // The store's background work ended with its crawl: its files may go.
    if durable {
        let _ = std::fs::remove_dir_all(&state_dir);
    }

    let extra: Vec<String> =
        watching.into_iter().chain(archiving).chain(scripting).chain(rendering).collect();
    report(&a, durable, &summary, (cpu_split, site_cpu), again, &extra)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints what the bench measured: the crawl, the recrawl if one ran, the comparisons, and
/// the figures as JSON with `--json`.
fn report(
    a: &BenchArgs,
    durable: bool,
    summary: &kumo_engine::Summary,
    (cpu_split, site_cpu): (Cpu, Cpu),
    again: Option<Again>,
    extra: &[String],
) -> Result<()> {
    let cpu = cpu_split.total();
    let pages = summary.pages.max(1) as f64;
    let peak = kumo_engine::peak_memory().unwrap_or(0);
    out!("state:        {}", if durable { "embedded store (durable)" } else { "in memory" })?;
    out!("pages:        {}", summary.pages)?;
    out!("elapsed:      {:.2} s", summary.elapsed_secs)?;
    out!("pages/s:      {:.0}", summary.pages_per_sec)?;
    out!("cpu/page:     {:.1} µs ({:.2} s of CPU; {})", cpu / pages * 1e6, cpu, cpu_split.split_per(pages))?;
    out!("site's cpu:   {:.1} µs per page", site_cpu.total() / pages * 1e6)?;
    out!("peak memory:  {:.1} MiB", peak as f64 / (1024.0 * 1024.0))?;
    if let Some((asked, again, cpu2, site2)) = &again {
        let c = &again.changes;
        // A revisit round's summary counts its own work only.
        let bytes = again.bytes;
        out!("recrawl:      {asked} pages asked again: {} unchanged, {} changed", c.unchanged, c.changed)?;
        out!(
            "  elapsed:    {:.2} s ({:.2}× the first crawl's)",
            again.elapsed_secs,
            again.elapsed_secs / summary.elapsed_secs.max(1e-9)
        )?;
        let asked = (*asked).max(1) as f64;
        out!("  cpu/page:   {:.1} µs ({})", cpu2.total() / asked * 1e6, cpu2.split_per(asked))?;
        out!("  site's cpu: {:.1} µs per page", site2.total() / asked * 1e6)?;
        out!(
            "  body bytes: {bytes} ({:.1} % of the first crawl's)",
            100.0 * bytes as f64 / summary.bytes.max(1) as f64
        )?;
    }
    for lines in extra {
        out!("{lines}")?;
    }
    if a.json {
        let j = serde_json::json!({
            "pages": summary.pages, "elapsed_secs": summary.elapsed_secs, "pages_per_sec": summary.pages_per_sec,
            "cpu_secs": cpu, "cpu_us_per_page": cpu / pages * 1e6, "cpu_user_secs": cpu_split.user,
            "cpu_kernel_secs": cpu_split.kernel, "site_cpu_secs": site_cpu.total(), "peak_rss_bytes": peak,
            "summary": summary,
        });
        out!("{}", serde_json::to_string_pretty(&j)?)?;
    }
    Ok(())
}

#[cfg(feature = "browser")]
async fn render_lines(cfg: &CrawlConfig, base: &str, plain: &kumo_engine::Summary) -> Result<String> {
    super::bench_render::compare(cfg, base, plain).await
}

#[cfg(not(feature = "browser"))]
async fn render_lines(_: &CrawlConfig, _: &str, _: &kumo_engine::Summary) -> Result<String> {
    anyhow::bail!("--render needs kumo built with its `browser` feature (on by default)")
}
