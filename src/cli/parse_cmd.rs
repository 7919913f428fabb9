//! `kumo parse URL --spider FILE`: fetches one page and shows what a configured site does
//! with it: the rules that match, what each model extracts, the links it would follow (with
//! their priorities) and the dig requests (Scrapy's `parse`), and with a script, the items and
//! requests its hooks leave.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use kumo_spider::{LinkReport, LoadOptions, PageReport, SiteSpec, SpiderFile};

use super::args::ParseArgs;

pub async fn run(a: ParseArgs) -> Result<ExitCode> {
    let opts = LoadOptions { base: a.seed_base.clone(), ..Default::default() };
    let file = SpiderFile::load(&a.spider, &opts)?;
    let site = pick_site(&file.sites, a.site.as_deref(), &a.url)?;
    let resp = super::shell::fetch_page(&a.url, site.crawl.downloader.clone())
        .await
        .with_context(|| format!("cannot fetch {}", a.url))?;
    let report = site.spider.explain(&resp);
    if a.json {
        out!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        std::io::Write::write_all(&mut std::io::stdout().lock(), human(&report)?.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The named site; without a name, the first whose seeds share the URL's host, else the first.
fn pick_site<'a>(sites: &'a [SiteSpec], name: Option<&str>, url: &str) -> Result<&'a SiteSpec> {
    if let Some(name) = name {
        return match sites.iter().find(|s| s.name == name) {
            Some(s) => Ok(s),
            None => bail!(
                "no site named {name:?} (the file has {})",
                sites.iter().map(|s| format!("{:?}", s.name)).collect::<Vec<_>>().join(", ")
            ),
        };
    }
    let host = url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string));
    Ok(sites
        .iter()
        .find(|s| s.crawl.seeds.iter().any(|seed| seed.host_str() == host.as_deref()))
        .unwrap_or(&sites[0]))
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn human(r: &PageReport) -> Result<String> {
    let mut o = String::new();
    writeln!(
        o,
        "site \"{}\": {} ({} {})",
        r.site,
        r.url,
        r.status,
        r.content_type.as_deref().unwrap_or("-")
    )?;
    let m = r.rules;
    writeln!(
        o,
        "rules: target {}, source {}, follow {}, deny {}",
        yes(m.target),
        yes(m.source),
        yes(m.follow),
        yes(m.deny)
    )?;
    if !r.analyzed {
        writeln!(o, "not analyzed (only successful HTML or JSON pages are)")?;
        return Ok(o);
    }
    for model in &r.models {
        if !model.applies {
            writeln!(o, "\nmodel \"{}\": does not apply to this page", model.name)?;
            continue;
        }
        writeln!(
            o,
            "\nmodel \"{}\": {} items, {} invalid",
            model.name,
            model.items.len(),
            model.invalid.len()
        )?;
        for item in &model.items {
            writeln!(o, "  {}", serde_json::to_string(item)?)?;
        }
        for bad in &model.invalid {
            writeln!(
                o,
                "  invalid (lacks {}): {}",
                bad.missing.join(", "),
                serde_json::to_string(&bad.item)?
            )?;
        }
        for issue in &model.issues {
            writeln!(o, "  issue: {issue}")?;
        }
    }
    links(&mut o, "next page", &r.next_page)?;
    let followed = r.links.iter().filter(|l| l.priority.is_some()).count();
    links(&mut o, &format!("links ({followed} of {} followed)", r.links.len()), &r.links)?;
    links(&mut o, "dig requests", &r.dig)?;
    if let Some(sr) = &r.script {
        writeln!(o, "\nscript {} (hooks: {}): {} items", sr.file, sr.hooks.join(", "), sr.items.len())?;
        for item in &sr.items {
            writeln!(o, "  {}", serde_json::to_string(item)?)?;
        }
        for e in &sr.errors {
            writeln!(o, "  failed: {e}")?;
        }
        links(&mut o, &format!("requests after the script ({})", sr.requests.len()), &sr.requests)?;
    }
    Ok(o)
}

fn links(o: &mut String, title: &str, list: &[LinkReport]) -> std::fmt::Result {
    writeln!(o, "\n{title}:")?;
    if list.is_empty() {
        writeln!(o, "  (none)")?;
    }
    for l in list {
        let p = l.priority.map_or("  -".to_string(), |p| format!("{p:>3}"));
        writeln!(o, "  [{p}] {:<9} {}", l.rule, l.url)?;
    }
    Ok(())
}
