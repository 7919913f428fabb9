//! Comparisons `kumo bench` makes within one run: the same crawl plainly and with one thing
//! on (`--listen`, `--warc`), alternately, a few times each, so that the machine's drift hits
//! both alike; the medians side by side are a ratio, not absolute speeds.

use std::future::Future;

use anyhow::Result;

/// Crawls of each kind.
pub const ROUNDS: usize = 3;

/// What one crawl measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    pub pages_per_sec: f64,
    /// CPU per page, in µs.
    pub cpu_us: f64,
}

/// The medians of each kind: plain first.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub plain: Sample,
    pub with: Sample,
}

impl Pair {
    /// Two lines: pages/s and CPU per page, with and without, and their ratios.
    pub fn lines(&self) -> String {
        let (p, w) = (self.plain, self.with);
        format!(
            "  pages/s:    {:.0} against {:.0} ({:.3}×)\n  cpu/page:   {:.1} µs against {:.1} µs ({:.3}×)",
            w.pages_per_sec,
            p.pages_per_sec,
            w.pages_per_sec / p.pages_per_sec.max(1e-9),
            w.cpu_us,
            p.cpu_us,
            w.cpu_us / p.cpu_us.max(1e-9)
        )
    }
}

/// Runs `crawl(false)` and `crawl(true)` alternately, [`ROUNDS`] times each.
pub async fn alternately<F, Fut>(mut crawl: F) -> Result<Pair>
where
    F: FnMut(bool) -> Fut,
    Fut: Future<Output = Result<Sample>>,
{
    let (mut plain, mut with) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        plain.push(crawl(false).await?);
        with.push(crawl(true).await?);
    }
    Ok(Pair { plain: medians(&plain), with: medians(&with) })
}

fn medians(samples: &[Sample]) -> Sample {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Sample {
        pages_per_sec: median(samples.iter().map(|s| s.pages_per_sec).collect()),
        cpu_us: median(samples.iter().map(|s| s.cpu_us).collect()),
    }
}
