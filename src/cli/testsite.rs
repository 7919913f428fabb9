//! `kumo testsite`: serves the synthetic site or a directory on 127.0.0.1 until Ctrl-C.
//! The first line on standard output is the base URL, so scripts (and `kumo bench`) can read it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_testsite::{ServerBuilder, SiteConfig};

use super::args::TestsiteArgs;

pub async fn run(a: TestsiteArgs) -> Result<ExitCode> {
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
                ..SiteConfig::default()
            };
            b = b.synthetic(cfg);
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
