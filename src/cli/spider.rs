//! `kumo crawl FILE.toml`: runs the sites of a spider file, all at once, each on its own
//! engine, and reports each site's summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_engine::EngineError;
use kumo_spider::{LoadOptions, SiteJob, SpiderFile, open_sinks, run_sites};
use url::Url;

use super::args::CrawlArgs;
use super::new_files::NewFiles;
use super::outcome::{self, Exit, usage};
use super::state;

/// The spider file when the only argument is an existing `.toml` file.
pub fn spider_file(args: &[String]) -> Option<PathBuf> {
    match args {
        [one] if one.ends_with(".toml") && Path::new(one).is_file() => Some(PathBuf::from(one)),
        _ => None,
    }
}

/// The `kumo crawl` options a spider file run uses; the others are settings the file makes
/// per site.
const SPIDER_FILE_OPTIONS: [&str; 18] = [
    "state",
    "memory",
    "fresh",
    "fsync",
    "redis",
    "crawl",
    "worker",
    "dead-after",
    "redis-wait",
    "summary-json",
    "no-progress",
    "seed-base",
    "failure-threshold",
    // Where this machine finds trust, for every site.
    "ca-file",
    "insecure",
    // A development cache, for every site.
    "http-cache",
    "http-cache-policy",
    // Ask every site's known pages again.
    "recrawl",
];

pub async fn run(file: PathBuf, a: &CrawlArgs) -> Result<ExitCode> {
    // Ignoring an option the user typed would crawl other than asked (no page limit, another
    // output): refuse it, and say where the setting goes.
    let misplaced: Vec<String> = a
        .given
        .iter()
        .filter(|o| !SPIDER_FILE_OPTIONS.contains(&o.as_str()))
        .map(|o| format!("--{o}"))
        .collect();
    if !misplaced.is_empty() {
        return Err(usage(anyhow::anyhow!(
            "{} {} not apply to a spider file: set {} in {}'s [[site]] tables \
             (a spider file run takes only --{})",
            misplaced.join(", "),
            if misplaced.len() == 1 { "does" } else { "do" },
            if misplaced.len() == 1 { "it" } else { "them" },
            file.display(),
            SPIDER_FILE_OPTIONS.join(", --"),
        )));
    }
    outcome::check_threshold(a.failure_threshold).map_err(usage)?;
    let opts = LoadOptions { base: a.seed_base.clone() };
    let spiders = SpiderFile::load(&file, &opts).map_err(|e| usage(e.into()))?;
    let roots = super::crawl::trusted_roots(&a.ca_files).map_err(usage)?;
    let cache = super::crawl::http_cache(a).map_err(usage)?;
    // Workers sharing a crawl must run the same file.
    let file_hash = xxhash_rust::xxh3::xxh3_64(&std::fs::read(&file).unwrap_or_default());
    let mut jobs = Vec::new();
    let mut closers = Vec::new();
    let mut created = std::collections::HashMap::new();
    for mut site in spiders.sites {
        site.crawl.downloader.extra_roots = roots.clone();
        site.crawl.downloader.accept_invalid_certs = a.insecure;
        site.crawl.downloader.http_cache = cache.clone();
        site.crawl.keep_pages = a.recrawl;
        // The site's output files created here go again if its outputs or its state are
        // refused: nothing was crawled into them (earlier sites' states already name theirs).
        let new_files =
            NewFiles::note(site.output.jsonl.iter().chain(&site.output.csv).map(PathBuf::as_path));
        let sinks = match open_sinks(&site).await {
            Ok(sinks) => sinks,
            Err(e) => {
                new_files.remove();
                return Err(anyhow::Error::from(e).context(format!("site \"{}\"", site.name)));
            }
        };
        let starts: Vec<Url> = site.crawl.seeds.iter().chain(&site.crawl.sitemaps).cloned().collect();
        let dir = state::site_dir(&a.state, &site.name, &starts);
        let who = format!("site \"{}\": ", site.name);
        let names: Vec<String> = sinks.iter().map(|s| s.name()).collect();
        let storage = state::Storage {
            crawl: dir.file_name().and_then(|f| f.to_str()).unwrap_or("site").to_string(),
            dir,
            outputs: &names,
            config_id: format!("spider:{:016x}:{}", file_hash, site.name),
            politeness: site.crawl.politeness.clone(),
            max_host_pause: site.crawl.max_host_pause,
            who: &who,
            recrawl: a.recrawl,
        };
        let opened = match state::open_storage(&a.state, storage).await {
            Ok(opened) => opened,
            Err(e) => {
                new_files.remove();
                return Err(e.context(who.clone()));
            }
        };
        let state = opened.state.clone();
        closers.push(opened);
        created.insert(site.name.clone(), new_files);
        jobs.push(SiteJob { site, sinks, state });
    }
    let stop = super::interrupt::stop_requests()?;
    let mut exit = Exit::Finished;
    let mut summaries = serde_json::Map::new();
    let runs = run_sites(jobs, Some(stop)).await;
    for opened in &closers {
        opened.close().await;
    }
    for run in runs {
        match run.result {
            Ok(summary) => {
                say!("site \"{}\":", run.name);
                say!("{}", summary.to_string().trim_end());
                for p in summary.modules.pipelines.iter().filter_map(|m| m.extra.get("processors")) {
                    for p in p.as_array().into_iter().flatten() {
                        say!(
                            "  {:<24} seen {} kept {} dropped {} invalid {}",
                            p["name"].as_str().unwrap_or_default(),
                            p["seen"],
                            p["kept"],
                            p["dropped"],
                            p["invalid"]
                        );
                    }
                }
                let who = format!("site \"{}\": ", run.name);
                exit =
                    exit.worse(outcome::of_crawl(&summary, &who, !a.state.memory, a.failure_threshold, &[]));
                summaries.insert(run.name, serde_json::to_value(&summary)?);
            }
            Err(e) => {
                // Its outputs were refused when it started (one would replace a file it did not
                // write): the files it created for them hold nothing.
                if matches!(e, EngineError::Pipeline(_))
                    && let Some(files) = created.remove(&run.name)
                {
                    files.remove();
                }
                // With its causes, as every other error is printed.
                eprintln!("error: site \"{}\": {:#}", run.name, anyhow::Error::from(e));
                exit = exit.worse(Exit::Error);
            }
        }
    }
    super::crawl::report_cache(cache.as_deref());
    if let Some(p) = &a.summary_json {
        let text = serde_json::to_string_pretty(&summaries)?;
        std::fs::write(p, text + "\n")
            .with_context(|| format!("cannot write the summary to {}", p.display()))?;
    }
    Ok(exit.into())
}
