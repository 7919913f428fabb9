//! From the raw file to runnable sites: every pattern and selector compiled, every value
//! checked, each error placed at its line.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kumo_engine::{AutoThrottle, CrawlConfig};
use kumo_frontier::{HostPolicy, HostRule, Politeness, RateLimit, ScopeConfig};
use kumo_parse::extract::{Field, Selector};
use kumo_parse::{CompiledModel, Model};
use kumo_pipeline::processors::{DedupByKey, DropIf, Match, OnlyModel, Remove, Rename, Require, Set};
use kumo_pipeline::{FileFormat, Processor, ProcessorChain};
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};
#[cfg(feature = "postgres")]
use super::postgres::{self, PostgresOutput};
use super::raw::{RawDrop, RawLimit, RawModel, RawProcessor, RawSite};
use crate::configured::{ConfigSpider, Priorities, SiteModel};
use crate::rules::UrlRules;
use crate::schedule::Schedule;

/// One checked site: the engine settings, the analyzer, the processors and the output.
#[derive(Debug, Clone)]
pub struct SiteSpec {
    pub name: String,
    pub crawl: CrawlConfig,
    pub spider: Arc<ConfigSpider>,
    processors: Vec<(Option<String>, RawProcessor)>,
    pub fail_fast: bool,
    pub output: OutputSpec,
    /// When `kumo run` runs it again; none: once.
    pub schedule: Option<Schedule>,
    /// The pages fetched through a headless browser, and how (`render`); none: no page.
    pub render: Option<super::render::RenderSpec>,
}

/// Where a site's items go. Nothing given means standard output.
#[derive(Debug, Clone, Default)]
pub struct OutputSpec {
    pub jsonl: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    /// One JSON array, whole after every checkpoint.
    pub json: Option<PathBuf>,
    /// Needs the `postgres` feature.
    #[cfg(feature = "postgres")]
    pub postgres: Option<PostgresOutput>,
    pub stdout: bool,
    /// A new crawl may replace existing `jsonl`, `csv` and `json` files (otherwise one holding data
    /// is refused: kumo replaces only files it wrote).
    pub overwrite: bool,
    /// Archive every exchange as WARC files in this directory (`kumo crawl --warc`).
    pub warc: Option<PathBuf>,
}

impl OutputSpec {
    /// The files it writes items to.
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.jsonl.iter().chain(&self.csv).chain(&self.json)
    }
}

impl SiteSpec {
    /// Its start URLs and sitemaps: what names its crawl (its derived state directory).
    pub fn starts(&self) -> Vec<url::Url> {
        self.crawl.seeds.iter().chain(&self.crawl.sitemaps).cloned().collect()
    }

    /// A fresh processor chain (its de-duplication sets start empty): the models' processors
    /// (each for its own model's items), then the site's.
    pub fn processor_chain(&self) -> ProcessorChain {
        let mut chain = ProcessorChain::new(self.fail_fast);
        for (model, p) in &self.processors {
            let p = processor(p).expect("checked when the file was read");
            chain.push(match model {
                Some(m) => Box::new(OnlyModel::new(m.clone(), p)),
                None => p,
            });
        }
        chain
    }
}

/// Builds one processor; the error is the bad pattern's message.
fn processor(raw: &RawProcessor) -> Result<Box<dyn Processor>, String> {
    Ok(match raw {
        RawProcessor::Dedup(f) => Box::new(DedupByKey::new(f.clone())),
        RawProcessor::Require(f) => Box::new(Require::new(f.clone())),
        RawProcessor::Rename { from, to } => Box::new(Rename::new(from, to)),
        RawProcessor::Set { field, value } => Box::new(Set::new(field, json(value))),
        RawProcessor::Remove(f) => Box::new(Remove::new(f.clone())),
        RawProcessor::Drop(RawDrop { field, equals, regex, missing }) => {
            let test = match (equals, regex, missing) {
                (Some(v), None, false) => Match::Equals(json(v)),
                (None, Some(r), false) => {
                    Match::Regex(regex::Regex::new(r).map_err(|e| format!("bad regex: {e}"))?)
                }
                (None, None, true) => Match::Missing,
                _ => {
                    return Err("a drop rule needs exactly one of `equals`, `regex`, `missing = true`".into());
                }
            };
            Box::new(DropIf::new(field, test))
        }
    })
}

fn json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Reads `rate_limit` values, with an error at the bad one.
fn rate_limits(
    lines: &Lines,
    at: &str,
    raw: &[Spanned<String>],
) -> Result<Vec<RateLimit>, SpiderConfigError> {
    raw.iter()
        .map(|r| r.get_ref().parse::<RateLimit>().map_err(|e| lines.error(r.span().start, at, e)))
        .collect()
}

/// Builds one limit rule over the site's default `policy` and rate limits.
fn limit_rule(
    lines: &Lines,
    at: &str,
    rule_at: usize,
    raw: &RawLimit,
    policy: HostPolicy,
    site_rates: &[RateLimit],
) -> Result<HostRule, SpiderConfigError> {
    let policy = HostPolicy {
        parallelism: raw.per_host.unwrap_or(policy.parallelism),
        delay: raw.delay_ms.map_or(policy.delay, Duration::from_millis),
        random_delay: raw.random_delay_ms.map_or(policy.random_delay, Duration::from_millis),
    };
    if policy.parallelism == 0 {
        return Err(lines.error(rule_at, format!("{at}.per_host"), "must be at least 1"));
    }
    let mut rule = match (&raw.host, &raw.regex) {
        (Some(glob), None) => HostRule::new(glob.get_ref(), policy)
            .map_err(|e| lines.error(glob.span().start, format!("{at}.host"), format!("bad glob: {e}")))?,
        (None, Some(re)) => HostRule::regex(re.get_ref(), policy)
            .map_err(|e| lines.error(re.span().start, format!("{at}.regex"), format!("bad regex: {e}")))?,
        _ => {
            return Err(lines.error(
                rule_at,
                at,
                "a limit rule needs exactly one of `host` (a glob) and `regex`",
            ));
        }
    };
    rule = match &raw.rate_limit {
        Some(own) => rule.with_rate_limits(rate_limits(lines, &format!("{at}.rate_limit"), own)?),
        None => rule.with_rate_limits(site_rates.iter().copied()),
    };
    for (name, value) in &raw.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err()
            || http::HeaderValue::from_str(value).is_err()
        {
            return Err(lines.error(
                rule_at,
                format!("{at}.headers"),
                format!("bad header {name:?}: {value:?}"),
            ));
        }
        rule = rule.with_header(name, value);
    }
    for (i, p) in raw.proxies.iter().enumerate() {
        if let Err(e) = kumo_downloader::check_proxy(p.get_ref()) {
            return Err(lines.error(p.span().start, format!("{at}.proxies[{i}]"), e.to_string()));
        }
        rule = rule.with_proxy(p.get_ref());
    }
    Ok(rule)
}

/// Compiles a list of patterns, naming the first bad one.
fn rules(lines: &Lines, at: &str, list: &[Spanned<String>]) -> Result<UrlRules, SpiderConfigError> {
    for (i, p) in list.iter().enumerate() {
        UrlRules::check(p.get_ref())
            .map_err(|e| lines.error(p.span().start, format!("{at}[{i}]"), format!("bad regex: {e}")))?;
    }
    UrlRules::new(list.iter().map(|p| p.get_ref())).map_err(|e| lines.error(0, at, e))
}

/// A one-field model that takes the `href` of every match of `css`, as URLs to follow.
fn href_model(
    lines: &Lines,
    at: &str,
    css: &Spanned<String>,
    root: bool,
) -> Result<CompiledModel, SpiderConfigError> {
    let model = if root {
        Model::new(at, vec![Field::css("links", "a[href], area[href]").attr("href").list().dig()])
            .with_root(Selector::css(css.get_ref()))
    } else {
        Model::new(at, vec![Field::css("next", css.get_ref()).attr("href").dig()])
    };
    model.compile().map_err(|e| lines.error(css.span().start, at, e.problem))
}

pub(super) fn site(
    lines: &Lines,
    raw: Spanned<RawSite>,
    base: Option<&str>,
    #[cfg_attr(not(feature = "script"), expect(unused_variables))] opts: &super::LoadOptions,
) -> Result<SiteSpec, SpiderConfigError> {
    let site_at = raw.span().start;
    let raw = raw.into_inner();
    let name = raw.name.clone();
    let here = |field: &str| format!("site \"{name}\" → {field}");

    if raw.seeds.get_ref().is_empty() {
        return Err(lines.error(raw.seeds.span().start, here("seeds"), "no start URL given"));
    }
    let mut seeds = Vec::new();
    for (i, s) in raw.seeds.get_ref().iter().enumerate() {
        let text = s.get_ref();
        let text = match (text.contains("{base}"), base) {
            (false, _) => text.clone(),
            (true, Some(b)) => text.replace("{base}", b.trim_end_matches('/')),
            (true, None) => {
                return Err(lines.error(
                    s.span().start,
                    here(&format!("seeds[{i}]")),
                    "uses {base} but no base is set (add `base = \"…\"` or pass --seed-base)",
                ));
            }
        };
        let url = url::Url::parse(&text).map_err(|e| {
            lines.error(s.span().start, here(&format!("seeds[{i}]")), format!("{text:?}: {e}"))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(lines.error(
                s.span().start,
                here(&format!("seeds[{i}]")),
                format!("{text:?} is not http or https"),
            ));
        }
        seeds.push(url);
    }
    if raw.concurrency == 0 {
        return Err(lines.error(site_at, here("concurrency"), "must be at least 1"));
    }
    if raw.per_host == 0 {
        return Err(lines.error(site_at, here("per_host"), "must be at least 1"));
    }

    let mut models = Vec::new();
    let mut processors = Vec::new();
    for (i, m) in raw.model.iter().enumerate() {
        let at = m.span().start;
        let RawModel { on, processors: own, model } = m.get_ref();
        let compiled = model.compile().map_err(|e| lines.error(at, here(&format!("model[{i}]")), e))?;
        let on = rules(lines, &here(&format!("model[{i}].on")), on)?;
        for (j, p) in own.iter().enumerate() {
            processor(p).map_err(|e| lines.error(at, here(&format!("model[{i}].processors[{j}]")), e))?;
            processors.push((Some(model.name.clone()), p.clone()));
        }
        let fields = model.fields.iter().map(|f| f.name.clone()).collect();
        models.push(SiteModel { model: compiled, on, fields });
    }
    for (j, p) in raw.processors.iter().enumerate() {
        processor(p.get_ref())
            .map_err(|e| lines.error(p.span().start, here(&format!("processors[{j}]")), e))?;
        processors.push((None, p.get_ref().clone()));
    }

    #[cfg(feature = "script")]
    let script = raw
        .script
        .map(|s| super::script::script(lines, &here("script"), s, &opts.script_ceiling))
        .transpose()?;
    #[cfg(not(feature = "script"))]
    if let Some(s) = &raw.script {
        return Err(built_without(lines, s.span().start, here("script"), "scripts", "script"));
    }
    let spider = ConfigSpider {
        name: name.clone(),
        targets: rules(lines, &here("targets"), &raw.targets)?,
        sources: rules(lines, &here("sources"), &raw.sources)?,
        allow: rules(lines, &here("follow.allow"), &raw.follow.allow)?,
        deny: rules(lines, &here("follow.deny"), &raw.follow.deny)?,
        restrict: raw
            .follow
            .restrict_css
            .as_ref()
            .map(|c| href_model(lines, &here("follow.restrict_css"), c, true))
            .transpose()?,
        next_page: raw
            .next_page
            .as_ref()
            .map(|c| href_model(lines, &here("next_page"), c, false))
            .transpose()?,
        models,
        priority: Priorities {
            target: raw.priority.target,
            source: raw.priority.source,
            next_page: raw.priority.next_page,
            follow: raw.priority.follow,
        },
        #[cfg(feature = "script")]
        script,
    };

    let auto_throttle = raw.auto_throttle.as_ref().map(|t| {
        let d = AutoThrottle::default();
        AutoThrottle {
            target_concurrency: t.target_concurrency.unwrap_or(d.target_concurrency),
            start_delay: t.start_delay_ms.map_or(d.start_delay, Duration::from_millis),
            max_delay: t.max_delay_ms.map_or(d.max_delay, Duration::from_millis),
        }
    });
    if let Some(t) = &auto_throttle {
        t.check().map_err(|e| lines.error(site_at, here("auto_throttle"), e))?;
    }
    let default_policy = HostPolicy {
        parallelism: raw.per_host,
        delay: Duration::from_millis(raw.delay_ms),
        random_delay: Duration::from_millis(raw.random_delay_ms),
    };
    let site_rates = rate_limits(lines, &here("rate_limit"), &raw.rate_limit)?;
    let mut rules = raw
        .limit
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let at = here(&format!("limit[{i}]"));
            limit_rule(lines, &at, l.span().start, l.get_ref(), default_policy, &site_rates)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !site_rates.is_empty() {
        // Hosts no limit rule matches: the site's policy with its rate limits (first match
        // wins, so this goes last).
        let every =
            HostRule::new("*", default_policy).map_err(|e| lines.error(site_at, here("rate_limit"), e))?;
        rules.push(every.with_rate_limits(site_rates));
    }
    let mut crawl = CrawlConfig {
        seeds,
        scope: ScopeConfig {
            allowed_domains: raw.allowed_domains.clone(),
            max_depth: raw.max_depth,
            max_path_segments: raw.max_path_segments,
            max_segment_repeats: raw.max_segment_repeats,
            max_redirects: 10,
            ..Default::default()
        },
        concurrency: raw.concurrency,
        politeness: Politeness { default: default_policy, rules },
        auto_throttle,
        max_pages: raw.max_pages,
        max_items: raw.max_items,
        max_errors: raw.max_errors,
        robots: kumo_engine::RobotsConfig { obey: raw.obey_robots, ..Default::default() },
        max_host_pause: raw
            .max_host_pause_secs
            .map_or(CrawlConfig::default().max_host_pause, Duration::from_secs),
        max_retry_after: raw
            .max_retry_after_secs
            .map_or(CrawlConfig::default().max_retry_after, Duration::from_secs),
        ..Default::default()
    };
    crawl.check().map_err(|e| lines.error(site_at, here("settings"), e))?;
    let schedule =
        raw.schedule.map(|s| super::schedule::schedule(lines, &here("schedule"), s)).transpose()?;
    if let Some(r) = raw.revisit {
        (crawl.revisit, crawl.emit_unchanged) = super::revisit::revisit(lines, &here("revisit"), r)?;
    }
    let render = raw.render.map(|r| super::render::render(lines, &here("render"), r)).transpose()?;
    let output = output(lines, site_at, &name, raw.output)?;
    Ok(SiteSpec {
        name,
        crawl,
        spider: Arc::new(spider),
        processors,
        fail_fast: raw.fail_fast,
        output,
        schedule,
        render,
    })
}

/// A site's `output`: files by format, each named for the format its key writes.
fn output(
    lines: &Lines,
    site_at: usize,
    name: &str,
    o: super::raw::RawOutput,
) -> Result<OutputSpec, SpiderConfigError> {
    let here = |key: &str| format!("site \"{name}\" → output.{key}");
    #[cfg(not(feature = "postgres"))]
    if let Some(p) = &o.postgres {
        return Err(built_without(lines, p.span().start, here("postgres"), "PostgreSQL output", "postgres"));
    }
    for (format, file) in
        [(FileFormat::JsonLines, &o.jsonl), (FileFormat::Csv, &o.csv), (FileFormat::JsonArray, &o.json)]
    {
        if let Some(file) = file {
            check_extension(lines, site_at, here(format.extension()), format, file)?;
        }
    }
    Ok(OutputSpec {
        jsonl: o.jsonl.map(PathBuf::from),
        csv: o.csv.map(PathBuf::from),
        json: o.json.map(PathBuf::from),
        #[cfg(feature = "postgres")]
        postgres: o.postgres.map(|p| postgres::output(lines, name, p)).transpose()?,
        stdout: o.stdout,
        overwrite: o.overwrite,
        warc: o.warc.map(PathBuf::from),
    })
}

/// A file named for another format than its key writes (`jsonl = "items.csv"`) is refused:
/// a JSON Lines file named `.csv` would surprise whoever opens it.
fn check_extension(
    lines: &Lines,
    at: usize,
    field: String,
    key: FileFormat,
    file: &str,
) -> Result<(), SpiderConfigError> {
    match FileFormat::named_by(std::path::Path::new(file)) {
        Some(named) if named != key => {
            let (named, key_ext) = (named.extension(), key.extension());
            let message = format!(
                "{file} is named as a {named} file, but {key_ext} writes {}: use {named} = \"{file}\", or name the file .{key_ext}",
                key.describe()
            );
            Err(lines.error(at, field, message))
        }
        _ => Ok(()),
    }
}

/// A setting this build of kumo cannot honour: refused, never ignored.
#[cfg(not(all(feature = "script", feature = "postgres")))]
fn built_without(lines: &Lines, offset: usize, at: String, what: &str, feature: &str) -> SpiderConfigError {
    lines.error(offset, at, format!("this kumo was built without {what} (the `{feature}` feature)"))
}
