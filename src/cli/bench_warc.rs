//! `kumo bench --warc`: what archiving costs. The same crawl of the synthetic site, in memory,
//! plainly and with every exchange written to WARC files (in a temporary directory, removed
//! after each crawl), alternately, at the default gzip level and stored; the medians side by
//! side, and the archive's bytes per page.

use anyhow::Result;
use kumo_engine::CrawlConfig;

use super::bench_pairs::{ROUNDS, Sample, alternately};
use super::warc::Archive;

/// Crawls with `cfg` plainly and archived, alternately, at gzip level 1 (the default) and 0
/// (stored); the lines that say the medians.
pub async fn compare(cfg: &CrawlConfig) -> Result<String> {
    let mut out = Vec::new();
    for (level, what) in [(1, "gzip level 1, the default"), (0, "--warc-gzip-level 0, stored")] {
        out.push(compare_at(cfg, level, what).await?);
    }
    Ok(out.join("\n"))
}

async fn compare_at(cfg: &CrawlConfig, level: u32, what: &str) -> Result<String> {
    let per_page = std::sync::Mutex::new(Vec::new());
    let pair = alternately(|archived| {
        let per_page = &per_page;
        async move {
            let (sample, bytes) = crawl(cfg, archived.then_some(level)).await?;
            per_page.lock().unwrap_or_else(|e| e.into_inner()).extend(bytes);
            Ok(sample)
        }
    })
    .await?;
    let mut per_page = per_page.into_inner().unwrap_or_else(|e| e.into_inner());
    per_page.sort_by(f64::total_cmp);
    let bytes = per_page.get(per_page.len() / 2).copied().unwrap_or(0.0);
    Ok(format!(
        "warc:         archived (--warc, {what}) against plain, medians of {ROUNDS} crawls each, in \
         memory:\n{}\n  warc bytes: {bytes:.0} per page (request, response and outlinks records)",
        pair.lines()
    ))
}

/// One crawl in memory, archived at a gzip level or not; what it measured and, archived, the
/// archive's bytes per page.
async fn crawl(cfg: &CrawlConfig, archived: Option<u32>) -> Result<(Sample, Option<f64>)> {
    let dir = std::env::temp_dir().join(format!("kumo-bench-warc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = cfg.clone();
    if let Some(gzip_level) = archived {
        let archive = Archive { gzip_level, ..Archive::at(&dir) };
        cfg.warc = Some(super::warc::config(&archive, "bench", None, true));
    }
    let crawl = super::bench::in_memory(&cfg).build().await?;
    let cpu0 = super::bench::cpu_secs().unwrap_or(0.0);
    let summary = crawl.run(None).await?;
    let cpu = super::bench::cpu_secs().unwrap_or(0.0) - cpu0;
    let pages = summary.pages.max(1) as f64;
    let sample = Sample { pages_per_sec: summary.pages_per_sec, cpu_us: cpu / pages * 1e6 };
    let _ = std::fs::remove_dir_all(&dir);
    Ok((sample, archived.map(|_| summary.warc_bytes as f64 / pages)))
}
