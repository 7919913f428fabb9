//! `kumo bench --script`: what a spider's JavaScript hooks cost. The same crawl of the synthetic
//! site, in memory, by a configured spider with a product model, without and with a
//! `priority` hook (asked for every link followed that the crawl has not queued before) and
//! an `item` hook (for every item), alternately; the medians side by side.

use anyhow::{Context, Result};
use kumo_engine::CrawlConfig;
use kumo_spider::{LoadOptions, SiteSpec, SpiderFile};

use super::bench_pairs::{ROUNDS, Sample, alternately};

/// The hooks measured: a URL test per link, a parsed field per item.
const HOOKS: &str = r#"
function priority(url, depth, referrer) { return url.endsWith("/index.html") ? 5 : depth; }
function item(item, page) { return { ...item, cents: Math.round(parseFloat(item.price.slice(1)) * 100) }; }
"#;

/// Crawls with `cfg` by the product spider, without and with the hooks, alternately.
pub async fn compare(cfg: &CrawlConfig) -> Result<String> {
    let seed = cfg.seeds.first().context("the bench has a seed")?.to_string();
    let plain = spider(&seed, false)?;
    let scripted = spider(&seed, true)?;
    let pair = alternately(|with| crawl(cfg, if with { &scripted } else { &plain })).await?;
    Ok(format!(
        "script:       a priority hook on each new link and an item hook on each item against none, \
         medians of {ROUNDS} crawls each, in memory:\n{}",
        pair.lines()
    ))
}

/// The bench site's spider: a product model, and the hooks if `scripted`.
fn spider(seed: &str, scripted: bool) -> Result<SiteSpec> {
    let script = match scripted {
        true => format!("script = {{ source = '''{HOOKS}''' }}"),
        false => String::new(),
    };
    let text = format!(
        r#"
[[site]]
name = "bench"
seeds = ["{seed}"]
{script}

[[site.model]]
name = "product"
root = {{ css = "div.product" }}
fields = [{{ name = "sku", css = "span.sku" }}, {{ name = "price", css = "span.price" }}]
"#
    );
    let mut file = SpiderFile::parse(&text, "bench.toml", &LoadOptions::default())?;
    Ok(file.sites.remove(0))
}

/// One crawl in memory with `site`'s analyzer; its pages per second and CPU per page.
async fn crawl(cfg: &CrawlConfig, site: &SiteSpec) -> Result<Sample> {
    let crawl = super::bench::in_memory(cfg).shared_spider(site.spider.clone()).build().await?;
    let cpu0 = super::bench::cpu_secs().unwrap_or(0.0);
    let summary = crawl.run(None).await?;
    let cpu = super::bench::cpu_secs().unwrap_or(0.0) - cpu0;
    anyhow::ensure!(summary.errors.is_empty(), "the hooks failed: {:?}", summary.errors);
    Ok(Sample { pages_per_sec: summary.pages_per_sec, cpu_us: cpu / summary.pages.max(1) as f64 * 1e6 })
}
