//! `kumo testsite`: serves the synthetic site, the hostile site, a synthetic web of many
//! names or a directory on loopback until Ctrl-C.
//! The first line on standard output is the base URL (the hostile site's start page), so
//! scripts (and `kumo bench`) can read it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_testsite::{HostileConfig, HostileSite, ServerBuilder, SiteConfig, SyntheticWeb, WebConfig};

use super::args::TestsiteArgs;

pub async fn run(a: TestsiteArgs) -> Result<ExitCode> {
    if a.hostile {
        return hostile(a.pages).await;
    }
    if let Some(hosts) = a.web {
        return web(hosts, &a).await;
    }
    let mut b = ServerBuilder::new().port(a.port).record(!a.no_record);
    let what = match &a.dir {
        Some(dir) => {
            anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
            b = b.directory(dir.clone());
            format!("directory {}", dir.display())
        }
        None => {
            let cfg = SiteConfig {
                pages: a.pages,
                page_bytes: a.page_bytes,
                links_per_page: a.links,
                validators: a.validators,
                ..SiteConfig::default()
            };
            b = b.synthetic(cfg);
            if let Some(products) = a.scripted {
                b = b.scripted(kumo_testsite::ScriptedSite { products, ..Default::default() });
            }
            format!("synthetic site of {} pages", a.pages)
        }
    };
    let server = b.start().await.context("cannot start the test site")?;
    let mut out = std::io::stdout();
    writeln!(out, "{}", server.base_url())?;
    out.flush()?;
    tracing::info!("serving {what} at {}", server.base_url());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// A synthetic web: prints its start URLs on one line, then its DNS server's address.
async fn web(hosts: usize, a: &TestsiteArgs) -> Result<ExitCode> {
    let cfg = WebConfig { seed: a.web_seed, hosts, addresses: a.web_addresses, ..WebConfig::default() };
    let web = SyntheticWeb::start(cfg).await.context("cannot start the synthetic web")?;
    let mut out = std::io::stdout();
    writeln!(out, "{}", web.seeds().join(" "))?;
    writeln!(out, "{}", web.dns_addr())?;
    out.flush()?;
    let t = web.truth();
    say!(
        "serving a synthetic web of {} names on {} addresses, port {}, {} pages; its DNS server is {}",
        t.hosts().len(),
        t.addresses().len(),
        web.port(),
        t.page_count(),
        web.dns_addr()
    );
    tokio::signal::ctrl_c().await?;
    web.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The hostile site: prints its start page, then what a correct crawl of it does.
async fn hostile(pages: usize) -> Result<ExitCode> {
    let site = HostileSite::start(HostileConfig { pages, ..HostileConfig::default() })
        .await
        .context("cannot start the hostile site")?;
    let t = site.truth();
    let mut out = std::io::stdout();
    writeln!(out, "{}", t.start)?;
    out.flush()?;
    // Said (not only logged), so whoever starts it sees what the site holds.
    say!(
        "serving a hostile site at {}: {} normal pages, {} flaky, {} that fail three times, {} \
         that always fail, {} URL prefixes no crawler may request, spider traps under {}",
        site.base_url(),
        t.normal.len(),
        t.flaky.len(),
        t.transient.len(),
        t.failing.len(),
        t.forbidden.len(),
        t.traps
    );
    tokio::signal::ctrl_c().await?;
    site.shutdown().await;
    Ok(ExitCode::SUCCESS)
}
