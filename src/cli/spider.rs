//! `kumo crawl FILE.toml`: runs the sites of a spider file, all at once, each on its own
//! engine, and reports each site's summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::sync::Arc;

use anyhow::{Context, Result};
use kumo::{Crawl, Crawler, CrawlerError};
use kumo_downloader::{ExtraRoots, HttpCache};
use kumo_engine::{EngineError, Summary};
use kumo_spider::{LoadOptions, SiteSpec, SpiderFile, open_sinks};

use super::args::{CrawlArgs, StateArgs};
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
const SPIDER_FILE_OPTIONS: [&str; 22] = [
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
    // Watch and steer every site.
    "listen",
    "listen-token",
    // The operator's ceilings on every site's script.
    "script-max-call",
    "script-max-memory",
];

/// The settings of a spider file run that every site takes.
pub struct SiteOptions<'a> {
    pub state: &'a StateArgs,
    pub roots: ExtraRoots,
    pub insecure: bool,
    pub cache: Option<Arc<HttpCache>>,
    /// Keep each fetched page's record, for a later run to ask for it again.
    pub keep_pages: bool,
    /// A crawl that is done asks for every page it knows again (`--recrawl`).
    pub recrawl: bool,
    /// The spider file's hash: workers sharing a crawl must run the same file.
    pub file_hash: u64,
    /// The spider file: a state directory resumes only the crawl of its own file and site.
    pub file: &'a Path,
    /// A run of `kumo run`.
    pub scheduled: bool,
}

/// A site ready to run: its crawl on its opened storage, and the output files created for it
/// (removed if its outputs are refused when it starts).
pub struct PreparedSite {
    pub name: String,
    pub crawl: Crawl,
    pub new_files: NewFiles,
}

/// The hash that identifies a spider file's text.
pub fn file_hash(file: &Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&std::fs::read(file).unwrap_or_default())
}

/// Opens a site's outputs and storage.
pub async fn prepare_site(mut site: SiteSpec, o: &SiteOptions<'_>) -> Result<PreparedSite> {
    // The browser first: a missing one stops the site before its outputs are made.
    if let Some(r) = site.render.clone() {
        let rendering = super::render::rendering(r.config, &r.pages);
        site.crawl.render = Some(rendering.map_err(|e| e.context(format!("site \"{}\"", site.name)))?);
    }
    site.crawl.downloader.extra_roots = o.roots.clone();
    site.crawl.downloader.accept_invalid_certs = o.insecure;
    site.crawl.downloader.http_cache = o.cache.clone();
    site.crawl.keep_pages = o.keep_pages;
    // The site's output files created here go again if its outputs or its state are
    // refused: nothing was crawled into them (earlier sites' states already name theirs).
    let new_files = NewFiles::note(site.output.files().map(PathBuf::as_path));
    let sinks = match open_sinks(&site).await {
        Ok(sinks) => sinks,
        Err(e) => {
            new_files.remove();
            return Err(anyhow::Error::from(e).context(format!("site \"{}\"", site.name)));
        }
    };
    let dir = state::site_dir(o.state, &site.name, &site.starts());
    let who = format!("site \"{}\": ", site.name);
    let mut plan = Crawler::site(&site, sinks)
        .origin(state::spider_origin(o.file, &site.name))
        .config_id(format!("spider:{:016x}:{}", o.file_hash, site.name))
        .prepare()
        .with_context(|| who.clone())?;
    plan.outputs.extend(site.output.warc.as_deref().map(super::warc::output_name));
    let storage_crawl = dir.file_name().and_then(|f| f.to_str()).unwrap_or("site").to_string();
    let storage = state::Storage {
        crawl: storage_crawl.clone(),
        dir,
        id: plan.identity(),
        files: site.output.files().cloned().collect(),
        max_host_pause: site.crawl.max_host_pause,
        who: &who,
        recrawl: o.recrawl,
        conditional: !site.crawl.emit_unchanged,
        scheduled: o.scheduled,
    };
    let opened = match state::open_storage(o.state, storage).await {
        Ok(opened) => opened,
        Err(e) => {
            // Closed first: their locks would keep the files from looking unused.
            drop(plan);
            new_files.remove();
            return Err(e.context(who.clone()));
        }
    };
    plan.config.warc = site.output.warc.as_deref().map(|warc| {
        let crawl = o.state.redis.crawl.as_deref().unwrap_or(&storage_crawl);
        let archive = super::warc::Archive::at(warc);
        super::warc::config(&archive, crawl, opened.worker.as_deref(), site.crawl.robots.obey)
    });
    let crawl = plan.on(opened).with_context(|| who.clone())?;
    Ok(PreparedSite { name: site.name, crawl, new_files })
}

/// Prints a site's summary, with its processors' counts.
pub fn print_summary(summary: &Summary) {
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
}

pub async fn run(file: PathBuf, a: &CrawlArgs) -> Result<ExitCode> {
    // Ignoring an option the user typed would crawl other than asked (no page limit, another
    // output): refuse it, and say where the setting goes.
    let misplaced: Vec<String> = a
        .given
        .iter()
        .filter(|o| !SPIDER_FILE_OPTIONS.contains(&o.as_str()) && kumo_settings::by_flag(o).is_none())
        .map(|o| format!("--{o}"))
        .collect();
    if !misplaced.is_empty() {
        return Err(usage(anyhow::anyhow!(
            "{} {} not apply to a spider file: set {} in {}'s [[site]] tables \
             (a spider file run takes the crawl settings, over every site's, and --{})",
            misplaced.join(", "),
            if misplaced.len() == 1 { "does" } else { "do" },
            if misplaced.len() == 1 { "it" } else { "them" },
            file.display(),
            SPIDER_FILE_OPTIONS.join(", --"),
        )));
    }
    outcome::check_threshold(a.failure_threshold).map_err(usage)?;
    let opts = LoadOptions {
        base: a.seed_base.clone(),
        script_ceiling: a.script.ceiling(),
        flags: Some(a.settings.layer.clone()),
    };
    let spiders = SpiderFile::load(&file, &opts).map_err(|e| usage(e.into()))?;
    for warning in &spiders.warnings {
        tracing::warn!("{}: {warning}", file.display());
    }
    for warning in a.settings.layer.warnings() {
        tracing::warn!("{warning}");
    }
    for site in &spiders.sites {
        super::starts::check_site(site)?;
    }
    let cache = super::crawl::http_cache(a).map_err(usage)?;
    let site_opts = SiteOptions {
        state: &a.state,
        roots: super::crawl::trusted_roots(&a.ca_files).map_err(usage)?,
        insecure: a.insecure,
        cache: cache.clone(),
        keep_pages: a.recrawl,
        recrawl: a.recrawl,
        file_hash: file_hash(&file),
        file: &file,
        scheduled: false,
    };
    let sites = kumo_control::Sites::default();
    let control = super::listen::start(&a.listen, &sites).await?;
    let mut crawls = Vec::new();
    let mut created = std::collections::HashMap::new();
    for site in spiders.sites {
        let mut p = prepare_site(site, &site_opts).await?;
        if control.is_some() {
            sites.put(&p.name, kumo_control::Control::of(p.crawl.engine()));
        }
        created.insert(p.name.clone(), p.new_files);
        crawls.push((p.name, p.crawl));
    }
    let stop = super::interrupt::stop_requests()?;
    let mut exit = Exit::Finished;
    let mut summaries = serde_json::Map::new();
    let runs = run_all(crawls, stop).await;
    for (name, result) in runs {
        match result {
            Ok(summary) => {
                say!("site \"{}\":", name);
                print_summary(&summary);
                let who = format!("site \"{}\": ", name);
                exit =
                    exit.worse(outcome::of_crawl(&summary, &who, !a.state.memory, a.failure_threshold, &[]));
                summaries.insert(name, serde_json::to_value(&summary)?);
            }
            Err(e) => {
                // Its outputs were refused when it started (one would replace a file it did not
                // write): the files it created for them hold nothing.
                if matches!(e, CrawlerError::Engine(EngineError::Pipeline(_)))
                    && let Some(files) = created.remove(&name)
                {
                    files.remove();
                }
                // With its causes, as every other error is printed.
                tell!("error: site \"{}\": {:#}", name, anyhow::Error::from(e));
                exit = exit.worse(Exit::Error);
            }
        }
    }
    super::crawl::report_cache(cache.as_deref());
    drop(control);
    if let Some(p) = &a.summary_json {
        let text = serde_json::to_string_pretty(&summaries)?;
        std::fs::write(p, text + "\n")
            .with_context(|| format!("cannot write the summary to {}", p.display()))?;
    }
    Ok(exit.into())
}

/// Runs every site at once, each on its own engine and state; results in the order given.
pub async fn run_all(
    crawls: Vec<(String, Crawl)>,
    stop: kumo_spider::StopSignal,
) -> Vec<(String, Result<Summary, CrawlerError>)> {
    let handles: Vec<_> = crawls
        .into_iter()
        .map(|(name, crawl)| {
            let stop = stop.clone();
            tokio::spawn(async move { (name, crawl.run(Some(stop)).await) })
        })
        .collect();
    let mut runs = Vec::with_capacity(handles.len());
    for h in handles {
        match h.await {
            Ok(run) => runs.push(run),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    runs
}
