//! `kumo testsite`: serves the synthetic site, the hostile site, a synthetic web of many
//! names or a directory on loopback until Ctrl-C.
//! The first line on standard output is the base URL (the hostile site's start page), so
//! scripts (and `kumo bench`) can read it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_testsite::{
    Fixture, HostileConfig, HostileSite, Rules, ServerBuilder, SiteConfig, SyntheticWeb, Tally, Violations,
    WebConfig,
};

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
    if let Some(secs) = a.busy {
        let busy = Fixture::status(429, "busy").with_header("retry-after", &secs.to_string());
        b = b.fixture("/busy.html", busy);
    }
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
    let cfg = WebConfig {
        seed: a.web_seed,
        hosts,
        addresses: a.web_addresses,
        seeds: a.web_seeds.max(1),
        even_addresses: a.web_even_addresses,
        ..WebConfig::default()
    };
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
    if let Some(file) = &a.web_judge {
        let rules = Rules {
            host_delay: a.judge_delay,
            ip_delay: a.judge_ip_delay,
            per_host: a.judge_per_host.max(1),
            per_ip: if a.judge_per_ip == 0 { usize::MAX } else { a.judge_per_ip },
            ..Rules::default()
        };
        let judged = web.violations(&rules);
        let json = serde_json::to_vec_pretty(&judged_json(&judged))?;
        std::fs::write(file, json).with_context(|| format!("cannot write {}", file.display()))?;
        say!("{judged}");
    }
    web.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// What `--web-judge` writes: the requests, then each kind of violation with its count and a
/// few examples.
fn judged_json(v: &Violations) -> serde_json::Value {
    let tally = |t: &Tally| serde_json::json!({ "count": t.count, "examples": t.examples });
    serde_json::json!({
        "requests": v.requests,
        "trap": v.trap,
        "violations": {
            "host_gap": tally(&v.host_gap),
            "host_overlap": tally(&v.host_overlap),
            "ip_gap": tally(&v.ip_gap),
            "ip_overlap": tally(&v.ip_overlap),
            "disallowed": tally(&v.disallowed),
            "misrouted": tally(&v.misrouted),
            "dead_names": tally(&v.dead_names),
            "outside": tally(&v.outside),
        },
    })
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
