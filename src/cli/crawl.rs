//! `kumo crawl`: raw arguments → checked settings → engine → summary.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use kumo::{Crawl, Crawler, CrawlerError, Plan};
use kumo_core::Url;
use kumo_downloader::{CacheRules, ExtraRoots, HttpCache};
use kumo_engine::{EngineError, Summary};
use kumo_pipeline::Existing;
use kumo_settings::Change;

use super::args::{CrawlArgs, HttpCachePolicy};
use super::new_files::NewFiles;
use super::outcome::{self, usage};
use super::progress::ProgressBar;

/// Parses and checks start URLs, with an error that names the bad one.
pub fn parse_seeds(raw: &[String]) -> Result<Vec<Url>> {
    raw.iter()
        .map(|s| {
            if s.ends_with(".toml") && Url::parse(s.trim()).is_err() {
                bail!("no spider file {s:?} (kumo crawl takes a spider file that exists, or start URLs)");
            }
            if let Some(full) = super::starts::with_scheme(s) {
                bail!("start URL {s:?} has no scheme; did you mean {full:?}?");
            }
            let url = Url::parse(s.trim()).with_context(|| format!("invalid start URL {s:?}"))?;
            if !matches!(url.scheme(), "http" | "https") {
                bail!("start URL {s:?} is not http or https");
            }
            if url.host_str().is_none_or(str::is_empty) {
                bail!("start URL {s:?} has no host");
            }
            Ok(url)
        })
        .collect()
}

/// The start URLs given as arguments, then those of `--seeds-file` (one a line; blank lines
/// and `#` comments skipped).
fn with_seeds_file(urls: &[String], file: Option<&std::path::Path>) -> Result<Vec<String>> {
    let mut all = urls.to_vec();
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the seeds file {}", file.display()))
            .map_err(usage)?;
        let lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        all.extend(lines.map(str::to_string));
    }
    Ok(all)
}

/// The certificates of every `--ca-file`, checked: a missing file or one with no certificate
/// is refused by name.
pub fn trusted_roots(files: &[std::path::PathBuf]) -> Result<ExtraRoots> {
    let mut pem = Vec::new();
    for f in files {
        let text = std::fs::read(f).with_context(|| format!("cannot read --ca-file {}", f.display()))?;
        ExtraRoots::from_pem(text.clone()).with_context(|| format!("--ca-file {}", f.display()))?;
        pem.extend_from_slice(&text);
        pem.push(b'\n');
    }
    if pem.is_empty() {
        return Ok(ExtraRoots::default());
    }
    Ok(ExtraRoots::from_pem(pem)?)
}

/// Puts the crawl together from the command line: the table's settings it gave, over the
/// defaults, checked, and the options of this command (trust, the development cache,
/// re-crawls) that only a program sets.
pub fn plan_from_args(a: &CrawlArgs, seeds: &[Url]) -> Result<Plan> {
    outcome::check_threshold(a.failure_threshold)?;
    let layer = &a.settings.layer;
    for warning in layer.warnings() {
        tracing::warn!("{warning}");
    }
    let mut plan = Crawler::new(seeds.iter().map(Url::to_string)).layer(layer.clone()).prepare().map_err(
        |e| match e {
            CrawlerError::Setting(e) => anyhow::anyhow!(e.flag_message()),
            other => other.into(),
        },
    )?;
    let cfg = &mut plan.config;
    cfg.downloader.extra_roots = trusted_roots(&a.ca_files)?;
    cfg.downloader.accept_invalid_certs = a.insecure;
    cfg.downloader.http_cache = http_cache(a)?;
    // Page records cost a write per page (about a sixth more CPU per page in the embedded
    // store), so only a crawl meant to be crawled again keeps them.
    cfg.keep_pages = a.recrawl;
    (cfg.revisit, cfg.emit_unchanged) = super::revisit_args::from_args(&a.revisit)?;
    Ok(plan)
}

/// The value of `-o`/`-O`, and what a new crawl does with a file holding data.
fn output_arg(a: &CrawlArgs) -> (&str, Existing) {
    match &a.overwrite_output {
        Some(t) => (t.as_str(), Existing::Replace),
        None => (a.output.as_str(), Existing::Refuse),
    }
}

pub async fn run(a: CrawlArgs) -> Result<ExitCode> {
    if let Some(file) = super::spider::spider_file(&a.urls) {
        return super::spider::run(file, &a).await;
    }
    let seeds = parse_seeds(&with_seeds_file(&a.urls, a.seeds_file.as_deref())?).map_err(usage)?;
    // Every setting is checked before anything is created: a refused run leaves no output
    // file and no state behind.
    let mut plan = plan_from_args(&a, &seeds).map_err(usage)?;
    plan.config.render = a.render.rendering()?;
    let starts: Vec<Url> = plan.config.starts().cloned().collect();
    plan.config.check().map_err(|e| usage(e.into()))?;
    kumo_frontier::Scope::new(&plan.config.scope, &starts).map_err(|e| usage(e.into()))?;
    super::starts::check_in_scope(&plan.config.scope, &starts, super::starts::Rules::Flags).map_err(usage)?;
    let (output, existing) = output_arg(&a);
    let target = super::output_file::target(output).map_err(usage)?;
    let new_files = NewFiles::note(target.file());
    plan.sink(super::output_file::open(target, existing, &a.pg_table).await?);
    plan.outputs.extend(a.warc.as_deref().map(super::warc::output_name));
    let crawl_name = super::state::derived_crawl(&starts);
    let storage = super::state::Storage {
        dir: a.state.dir.clone().unwrap_or_else(|| super::state::derived_dir(&starts)),
        crawl: crawl_name.clone(),
        id: plan.identity(),
        files: target.file().map(Path::to_path_buf).into_iter().collect(),
        max_host_pause: plan.config.max_host_pause,
        who: "",
        recrawl: a.recrawl,
        conditional: !plan.config.emit_unchanged,
        scheduled: false,
    };
    let opened = match super::state::open_storage(&a.state, storage).await {
        Ok(opened) => opened,
        Err(e) => {
            // Closed first: its lock would keep the file from looking unused.
            drop(plan);
            new_files.remove();
            return Err(e);
        }
    };
    plan.config.warc = a.warc.as_deref().map(|dir| {
        let crawl = a.state.redis.crawl.as_deref().unwrap_or(&crawl_name);
        let archive = super::warc::Archive {
            dir,
            max_size: a.warc_max_size,
            cdxj: a.warc_cdxj,
            gzip_level: a.warc_gzip_level,
        };
        super::warc::config(&archive, crawl, opened.worker.as_deref(), plan.config.robots.obey)
    });
    let cache = plan.config.downloader.http_cache.clone();
    let crawl = plan.on(opened).map_err(|e| match e {
        // Settings the engine checks itself (a bad URL pattern): still a mistake in the options.
        CrawlerError::Config(_) | CrawlerError::Engine(EngineError::Config(_) | EngineError::Scope(_)) => {
            usage(e.into())
        }
        other => other.into(),
    })?;
    watch_and_run(a, crawl, cache).await
}

/// Runs the crawl with what watches it: the control API, the progress bar, the error log;
/// then reports.
async fn watch_and_run(a: CrawlArgs, mut crawl: Crawl, cache: Option<Arc<HttpCache>>) -> Result<ExitCode> {
    let durable = !a.state.memory;
    let changed = crawl.changed().to_vec();
    let engine = crawl.engine();
    // Listening before the start, so a watcher sees the crawl from its first page; without
    // --listen nobody watches, and the engine publishes nothing.
    let sites = kumo_control::Sites::default();
    let control = super::listen::start(&a.listen, &sites).await?;
    if control.is_some() {
        sites.put("crawl", kumo_control::Control::of(engine));
    }
    let mut errors = engine.errors().context("error stream already taken")?;
    // Log every error at debug level (the summary counts them all anyway) and keep the first
    // few, to say why when nothing at all could be fetched.
    let first_errors = tokio::spawn(async move {
        let mut first = Vec::new();
        while let Some(e) = errors.recv().await {
            tracing::debug!(stage = %e.stage, kind = %e.kind, url = e.url.as_deref().unwrap_or(""), "{}", e.message);
            if first.len() < 3 {
                first.push(e.to_string());
            }
        }
        first
    });
    // Before the start, which may take a while (resuming replays the items not yet written):
    // a signal then is kept and stops the crawl as soon as it runs.
    let stop = super::interrupt::stop_requests()?;
    let bar = (!a.no_progress && !super::logging::quiet()).then(|| ProgressBar::start(engine.progress()));
    // The engine goes with the crawl: the error stream closes, so the reader task ends.
    let summary = crawl.run(Some(stop)).await?;
    if let Some(b) = bar {
        b.finish().await;
    }
    report(&summary, a.summary_json.as_deref(), &changed)?;
    report_cache(cache.as_deref());
    let first = first_errors.await.unwrap_or_default();
    drop(control);
    Ok(outcome::of_crawl(&summary, "", durable, a.failure_threshold, &first).into())
}

/// The development cache `--http-cache` names, opened (and made) once for every downloader.
pub fn http_cache(a: &CrawlArgs) -> Result<Option<Arc<HttpCache>>> {
    a.http_cache
        .as_ref()
        .map(|dir| {
            let rules = match a.http_cache_policy {
                HttpCachePolicy::Always => CacheRules::Always,
                HttpCachePolicy::Rfc9111 => CacheRules::Http,
            };
            HttpCache::open(dir, rules)
                .map(Arc::new)
                .with_context(|| format!("cannot use {} as the HTTP cache", dir.display()))
        })
        .transpose()
}

/// What the development cache did this run, after the summary.
pub fn report_cache(cache: Option<&HttpCache>) {
    if let Some(c) = cache {
        say!(
            "  http cache {}: {} answers replayed, {} after a 304, {} kept",
            c.dir().display(),
            c.hits(),
            c.revalidated(),
            c.stored()
        );
    }
}

/// Prints the human summary on standard error and writes the JSON one if asked, with the
/// settings this run changed from the last run's (`settings_changed`).
pub fn report(summary: &Summary, json_path: Option<&Path>, changed: &[Change]) -> Result<()> {
    say!("{}", summary.to_string().trim_end());
    if !changed.is_empty() {
        let each: Vec<String> = changed.iter().map(ToString::to_string).collect();
        say!("  settings:  changed since the last run: {}", each.join(", "));
    }
    if let Some(p) = json_path {
        let mut json = serde_json::to_value(summary)?;
        let changed: Vec<_> = changed
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "stored": c.stored, "now": c.now}))
            .collect();
        json["settings_changed"] = serde_json::Value::Array(changed);
        let text = serde_json::to_string_pretty(&json)?;
        std::fs::write(p, text + "\n")
            .with_context(|| format!("cannot write the summary to {}", p.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::args::{Cli, Command};
    use super::*;

    fn config(flags: &[&str]) -> kumo_engine::CrawlConfig {
        let argv = ["kumo", "crawl", "http://h/"].into_iter().chain(flags.iter().copied());
        let Command::Crawl(a) = Cli::try_parse_from(argv).expect("valid flags").command else {
            unreachable!("a crawl")
        };
        plan_from_args(&a, &parse_seeds(&a.urls).unwrap()).unwrap().config
    }

    #[test]
    fn spider_trap_flags_reach_the_settings() {
        let d = config(&[]);
        assert!(!d.canonical.keep_session_ids, "session ids are dropped by default");
        assert_eq!((d.scope.max_path_segments, d.scope.max_segment_repeats), (0, 0), "the defaults");
        let c = config(&["--keep-session-ids", "--max-path-segments", "12", "--max-segment-repeats", "4"]);
        assert!(c.canonical.keep_session_ids);
        assert_eq!((c.scope.max_path_segments, c.scope.max_segment_repeats), (12, 4));
    }
}
