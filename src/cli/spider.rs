//! `kumo crawl FILE.toml`: runs the sites of a spider file, all at once, each on its own
//! engine, and reports each site's summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_spider::{LoadOptions, SpiderFile, open_sinks, run_sites};

use super::args::CrawlArgs;

/// The spider file when the only argument is an existing `.toml` file.
pub fn spider_file(args: &[String]) -> Option<PathBuf> {
    match args {
        [one] if one.ends_with(".toml") && Path::new(one).is_file() => Some(PathBuf::from(one)),
        _ => None,
    }
}

pub async fn run(file: PathBuf, a: &CrawlArgs) -> Result<ExitCode> {
    let opts = LoadOptions { base: a.seed_base.clone() };
    let spiders = SpiderFile::load(&file, &opts)?;
    let mut sites = Vec::new();
    for site in spiders.sites {
        let sinks = open_sinks(&site).await.with_context(|| format!("site \"{}\"", site.name))?;
        sites.push((site, sinks));
    }
    let mut code = ExitCode::SUCCESS;
    let mut summaries = serde_json::Map::new();
    for run in run_sites(sites).await {
        match run.result {
            Ok(summary) => {
                eprintln!("site \"{}\":", run.name);
                eprint!("{summary}");
                for p in summary.modules.pipelines.iter().filter_map(|m| m.extra.get("processors")) {
                    for p in p.as_array().into_iter().flatten() {
                        eprintln!(
                            "  {:<24} seen {} kept {} dropped {} invalid {}",
                            p["name"].as_str().unwrap_or_default(),
                            p["seen"],
                            p["kept"],
                            p["dropped"],
                            p["invalid"]
                        );
                    }
                }
                summaries.insert(run.name, serde_json::to_value(&summary)?);
            }
            Err(e) => {
                eprintln!("error: site \"{}\": {e}", run.name);
                code = ExitCode::FAILURE;
            }
        }
    }
    if let Some(p) = &a.summary_json {
        let text = serde_json::to_string_pretty(&summaries)?;
        std::fs::write(p, text + "\n")
            .with_context(|| format!("cannot write the summary to {}", p.display()))?;
    }
    Ok(code)
}
