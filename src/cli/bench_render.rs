//! `kumo bench --render`: what rendering costs. The scripted shop (as many products as the
//! bench's pages) crawled in memory through headless Chromium with 4 tabs; its pages/s beside
//! the plain crawl's of the static site, and the peak memory of the browser's processes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Result;
use kumo_core::Url;
use kumo_downloader::RenderConfig;
use kumo_engine::{CrawlConfig, Rendering, Summary};
use kumo_render::BrowserRenderer;

/// Crawls `{base}/js/index.html` with `cfg`, every page rendered; the lines that say how it
/// went beside `plain`, the static crawl's summary.
pub async fn compare(cfg: &CrawlConfig, base: &str, plain: &Summary) -> Result<String> {
    let renderer = Arc::new(BrowserRenderer::new(RenderConfig::default())?);
    let mut cfg = cfg.clone();
    cfg.seeds = vec![Url::parse(&format!("{base}/js/index.html"))?];
    cfg.render = Some(Rendering::new(renderer.clone(), &[])?);
    let crawl = super::bench::in_memory(&cfg).build().await?;
    let peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let watch = tokio::spawn(watch_browser(renderer.clone(), peak.clone(), done.clone()));
    let summary = crawl.run(None).await?;
    done.store(true, Ordering::Relaxed);
    let _ = watch.await;
    let ratio = summary.pages_per_sec / plain.pages_per_sec.max(f64::MIN_POSITIVE);
    Ok(format!(
        "render:       the scripted shop through headless Chromium, 4 tabs, in memory:\n  \
         pages:      {} rendered in {:.1} s\n  pages/s:    {:.1} rendered against {:.0} plain \
         ({ratio:.3}×)\n  browser:    {:.0} MiB at its peak (its processes' proportional set sizes added up)",
        summary.pages,
        summary.elapsed_secs,
        summary.pages_per_sec,
        plain.pages_per_sec,
        peak.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0),
    ))
}

/// Samples the memory of the browser's processes every 100 ms until `done`, keeping
/// the largest sum in `peak`.
async fn watch_browser(renderer: Arc<BrowserRenderer>, peak: Arc<AtomicU64>, done: Arc<AtomicBool>) {
    while !done.load(Ordering::Relaxed) {
        if let Some(group) = renderer.process_group().await {
            peak.fetch_max(resident_of_group(group), Ordering::Relaxed);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The memory of the processes of process group `pgid` (the browser, its renderers and
/// helpers): their proportional set sizes added up.
fn resident_of_group(pgid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    let in_group = |stat: &str| {
        // After the command name (which may hold spaces): state, parent, process group.
        let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
        rest.split_whitespace().nth(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
    };
    dir.filter_map(Result::ok)
        .filter(|e| std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| in_group(&s)))
        // Proportional set size: a page shared by several processes counts once among them.
        .filter_map(|e| std::fs::read_to_string(e.path().join("smaps_rollup")).ok())
        .filter_map(|s| {
            let line = s.lines().find(|l| l.starts_with("Pss:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum::<u64>()
        * 1024
}
