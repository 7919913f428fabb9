//! `kumo shell URL`: fetches one page, then answers selector commands read line by line
//! from standard input (Scrapy's shell, plain text so it can be scripted and tested).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use kumo_core::{Request, Response, Url};
use kumo_downloader::{Downloader, DownloaderConfig};
use kumo_parse::extract::{Document, Field, Query};
use serde_json::Value;

use super::args::ShellArgs;

const HELP: &str = "\
commands:
  css SELECTOR [@ATTR]   text (or attribute) of every match of a CSS selector
  xpath EXPR             every match of an XPath expression
  re REGEX               every match of a regex (group 1 if it has one) in the body
  json PATH              every match of a JSONPath in a JSON body
  links                  every link on the page, absolute
  title                  the page title
  help                   this list
  quit                   leave";

/// Fetches `url` with one downloader, following up to 10 redirects.
pub async fn fetch_page(url: &str, cfg: DownloaderConfig) -> Result<Response> {
    let mut url = Url::parse(url).with_context(|| format!("bad URL {url:?}"))?;
    let downloader = Downloader::new(0, cfg)?;
    for _ in 0..=10 {
        let resp = downloader.fetch(Request::get(url.clone())).await?;
        match resp.redirect_location() {
            Some(Ok(next)) => url = next,
            _ => return Ok(resp),
        }
    }
    bail!("more than 10 redirects from {url}")
}

/// Renders `url` in headless Chromium (which follows its redirects itself).
async fn render_page(url: &str, render: &super::render::RenderArgs) -> Result<Response> {
    let url = Url::parse(url).with_context(|| format!("bad URL {url:?}"))?;
    let rendering = render.rendering()?.expect("asked for");
    let downloader = Downloader::new(0, DownloaderConfig::default())?;
    let page = rendering.renderer.render(Request::get(url), &downloader).await;
    rendering.renderer.close().await;
    Ok(page?)
}

pub async fn run(a: ShellArgs) -> Result<ExitCode> {
    let resp = match a.render.wanted() {
        true => render_page(&a.url, &a.render).await?,
        false => fetch_page(&a.url, DownloaderConfig::default()).await?,
    };
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "fetched {} ({} {}, {} bytes); type help for commands",
        resp.url,
        resp.status.as_u16(),
        resp.content_type().unwrap_or("-"),
        resp.body.len()
    )?;
    let body = resp.text();
    let is_json = resp.content_type().is_some_and(|c| c.contains("json"));
    let doc = Document::new(&body, is_json, &resp.url);
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            write!(out, "kumo> ")?;
            out.flush()?;
        }
        let Some(line) = lines.next() else { break };
        let line = line?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let answer = match cmd {
            "quit" | "exit" => break,
            "help" => vec![HELP.to_string()],
            "title" => {
                let page = kumo_parse::extract_links(&resp.body, &resp.url, resp.encoding);
                vec![page.title.unwrap_or_else(|| "(no title)".into())]
            }
            "links" => kumo_parse::extract_links(&resp.body, &resp.url, resp.encoding)
                .links
                .iter()
                .map(Url::to_string)
                .collect(),
            "css" | "xpath" | "re" | "json" if rest.is_empty() => {
                vec![format!("error: {cmd} needs an argument")]
            }
            "css" | "xpath" | "re" | "json" => query(&doc, cmd, rest),
            other => vec![format!("error: unknown command {other:?}; try help")],
        };
        for a in answer {
            writeln!(out, "{a}")?;
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one selector as a one-field list model, so the shell extracts exactly as spiders do.
fn query(doc: &Document<'_>, cmd: &str, arg: &str) -> Vec<String> {
    let field = match cmd {
        "css" => match arg.rsplit_once(" @") {
            Some((sel, attr)) if !attr.contains(char::is_whitespace) => {
                Field::css("v", sel.trim()).attr(attr)
            }
            _ => Field::css("v", arg),
        },
        "xpath" => Field::xpath("v", arg),
        "re" => Field::regex("v", arg),
        _ => Field::json("v", arg),
    };
    let found = match Query::new(field) {
        Ok(q) => q.run(doc),
        Err(e) => return vec![format!("error: {}", e.problem)],
    };
    let mut lines: Vec<String> = found.issues.iter().map(|i| format!("error: {i}")).collect();
    if found.values.is_empty() {
        lines.push("(no match)".into());
    }
    lines.extend(found.values.iter().map(show));
    lines
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}
