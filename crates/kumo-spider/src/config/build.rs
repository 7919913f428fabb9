//! From the raw file to runnable sites: every pattern and selector compiled, every value
//! checked, each error placed at its line.

use std::path::PathBuf;
use std::sync::Arc;

use kumo_engine::CrawlConfig;
use kumo_parse::extract::{Field, Selector};
use kumo_parse::{CompiledModel, Model};
use kumo_pipeline::processors::{DedupByKey, DropIf, Match, OnlyModel, Remove, Rename, Require, Set};
use kumo_pipeline::{FileFormat, Processor, ProcessorChain};
use kumo_settings::{Layer, Record};
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};
#[cfg(feature = "postgres")]
use super::postgres::{self, PostgresOutput};
use super::raw::{RawDrop, RawModel, RawProcessor, RawSite};
use crate::configured::{ConfigSpider, Priorities, SiteModel};
use crate::rules::UrlRules;
use crate::schedule::Schedule;

/// One checked site: the engine settings, the analyzer, the processors and the output.
#[derive(Debug, Clone)]
pub struct SiteSpec {
    /// The site's name, unique in its file.
    pub name: String,
    /// The engine's settings: seeds, sitemaps, limits, politeness.
    pub crawl: CrawlConfig,
    /// The site's analyzer: its URL rules, models and script.
    pub spider: Arc<ConfigSpider>,
    processors: Vec<(Option<String>, RawProcessor)>,
    /// Whether an invalid item stops in the processors (the default); false: it is counted
    /// and still written.
    pub fail_fast: bool,
    /// Where its items go.
    pub output: OutputSpec,
    /// When `kumo run` runs it again; none: once.
    pub schedule: Option<Schedule>,
    /// The pages fetched through a headless browser, and how (`render`); none: no page.
    pub render: Option<super::render::RenderSpec>,
    /// Its resolved settings by name, which its state keeps for the next run to compare.
    pub record: Record,
}

/// Where a site's items go. Nothing given means standard output.
#[derive(Debug, Clone, Default)]
pub struct OutputSpec {
    /// A JSON Lines file.
    pub jsonl: Option<PathBuf>,
    /// A CSV file: a `_model` column, then every model's fields.
    pub csv: Option<PathBuf>,
    /// One JSON array, whole after every checkpoint.
    pub json: Option<PathBuf>,
    /// Needs the `postgres` feature.
    #[cfg(feature = "postgres")]
    pub postgres: Option<PostgresOutput>,
    /// Items to standard output as JSON lines, besides any other output.
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

/// What a site is built with besides its own table.
pub(super) struct Context<'a> {
    pub lines: &'a Lines<'a>,
    /// Replaces `{base}` in seeds.
    pub base: Option<&'a str>,
    pub opts: &'a super::LoadOptions,
    /// The file's crawl-wide settings.
    pub file: &'a Layer,
    /// The site's place among the file's `[[site]]` tables (for the line of a setting).
    pub index: usize,
}

pub(super) fn site(
    cx: &Context,
    raw: Spanned<RawSite>,
    warnings: &mut Vec<String>,
) -> Result<SiteSpec, SpiderConfigError> {
    let lines = cx.lines;
    let site_at = raw.span().start;
    let mut raw = raw.into_inner();
    let name = raw.name.clone();
    let here = |field: &str| format!("site \"{name}\" → {field}");

    let seeds = seeds(lines, &raw, cx.base, &here)?;
    let (models, processors) = models(lines, &raw, &here)?;
    let script = raw.script.take();
    let spider = spider(lines, &raw, script, cx.opts, models, &here)?;
    let (mut crawl, settings) = super::settings::crawl(cx, &raw, &here, warnings)?;
    crawl.seeds = seeds;
    let starts: Vec<&url::Url> = crawl.seeds.iter().chain(&crawl.sitemaps).collect();
    let record = Record::of(&settings, &starts);
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
        record,
    })
}

/// The site's start URLs, `{base}` replaced, each checked.
fn seeds(
    lines: &Lines,
    raw: &RawSite,
    base: Option<&str>,
    here: &dyn Fn(&str) -> String,
) -> Result<Vec<url::Url>, SpiderConfigError> {
    if raw.seeds.get_ref().is_empty() {
        return Err(lines.error(raw.seeds.span().start, here("seeds"), "no start URL given"));
    }
    let mut seeds = Vec::new();
    for (i, s) in raw.seeds.get_ref().iter().enumerate() {
        let at = |why: String| lines.error(s.span().start, here(&format!("seeds[{i}]")), why);
        let text = s.get_ref();
        let text = match (text.contains("{base}"), base) {
            (false, _) => text.clone(),
            (true, Some(b)) => text.replace("{base}", b.trim_end_matches('/')),
            (true, None) => {
                return Err(at(
                    "uses {base} but no base is set (add `base = \"…\"` or pass --seed-base)".into()
                ));
            }
        };
        let url = url::Url::parse(&text).map_err(|e| at(format!("{text:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(at(format!("{text:?} is not http or https")));
        }
        seeds.push(url);
    }
    Ok(seeds)
}

/// The site's models, compiled, and every processor (each model's, then the site's).
type Processors = Vec<(Option<String>, RawProcessor)>;

fn models(
    lines: &Lines,
    raw: &RawSite,
    here: &dyn Fn(&str) -> String,
) -> Result<(Vec<SiteModel>, Processors), SpiderConfigError> {
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
    Ok((models, processors))
}

/// The site's analyzer: its URL rules, link selectors, models, priorities and script.
fn spider(
    lines: &Lines,
    raw: &RawSite,
    script: Option<Spanned<super::raw::RawScriptField>>,
    #[cfg_attr(not(feature = "script"), expect(unused_variables))] opts: &super::LoadOptions,
    models: Vec<SiteModel>,
    here: &dyn Fn(&str) -> String,
) -> Result<ConfigSpider, SpiderConfigError> {
    #[cfg(feature = "script")]
    let script =
        script.map(|s| super::script::script(lines, &here("script"), s, &opts.script_ceiling)).transpose()?;
    #[cfg(not(feature = "script"))]
    if let Some(s) = &script {
        return Err(built_without(lines, s.span().start, here("script"), "scripts", "script"));
    }
    Ok(ConfigSpider {
        name: raw.name.clone(),
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
