//! `kumo bench --listen`: what watching a crawl costs. The same crawl of the synthetic site,
//! in memory, plainly and with the control server up and a scraper reading `/metrics` once a
//! second, alternately, three times each; the medians of pages/s side by side (one run, one
//! machine: a ratio, not absolute speeds).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Result;
use kumo_control::{Control, ControlServer, ListenConfig, Sites};
use kumo_engine::CrawlConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::bench_pairs::{ROUNDS, Sample, alternately};

/// Crawls with `cfg` plainly and watched, alternately; the lines that say the medians.
pub async fn compare(cfg: &CrawlConfig) -> Result<String> {
    let pair = alternately(|watched| crawl(cfg, watched)).await?;
    Ok(format!(
        "listen:       watched (--listen, /metrics read once a second) against plain, medians of {ROUNDS} \
         crawls each, in memory:\n{}",
        pair.lines()
    ))
}

/// One crawl in memory; its pages per second and CPU per page.
async fn crawl(cfg: &CrawlConfig, watched: bool) -> Result<Sample> {
    let mut crawl = super::bench::in_memory(cfg).build().await?;
    let server = match watched {
        true => {
            let listen = ListenConfig { addr: SocketAddr::from(([127, 0, 0, 1], 0)), token: None };
            Some(ControlServer::start(listen, Sites::one("bench", Control::of(crawl.engine()))).await?)
        }
        false => None,
    };
    let scraper = server.as_ref().map(|s| tokio::spawn(scrape_every_second(s.addr())));
    let cpu0 = super::bench::cpu_secs().unwrap_or(0.0);
    let summary = crawl.run(None).await?;
    let cpu = super::bench::cpu_secs().unwrap_or(0.0) - cpu0;
    if let Some(s) = scraper {
        s.abort();
    }
    Ok(Sample { pages_per_sec: summary.pages_per_sec, cpu_us: cpu / summary.pages.max(1) as f64 * 1e6 })
}

/// Reads `/metrics` once a second, as a Prometheus server would.
async fn scrape_every_second(addr: SocketAddr) {
    loop {
        if let Ok(mut s) = tokio::net::TcpStream::connect(addr).await {
            let req = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
            let mut body = Vec::new();
            if s.write_all(req.as_bytes()).await.is_ok() {
                let _ = s.read_to_end(&mut body).await;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
