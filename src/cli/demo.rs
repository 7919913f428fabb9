//! `kumo demo`: the quick start in one command, needing nothing but a clone of the repository.
//! It serves the quotes-site snapshot (`testdata/quotes-site`) on 127.0.0.1 and crawls it with
//! the example spider (`examples/quotes.toml`) on the durable default store, in a folder of its
//! own: `DIR/quotes.jsonl` for the items, `DIR/state` for the crawl's state.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use kumo_testsite::ServerBuilder;

use super::args::{Command, DemoArgs};

/// Where the demo's files are: under the current folder (a clone's root), else under the
/// clone this kumo was built from.
fn find(relative: &str) -> Result<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    [Path::new("."), built_from]
        .iter()
        .map(|root| root.join(relative))
        .find(|path| path.exists())
        .and_then(|path| path.canonicalize().ok())
        .with_context(|| format!("{relative} not found: run kumo demo from a clone of the kumo repository"))
}

pub async fn run(a: DemoArgs) -> Result<ExitCode> {
    let site = find("testdata/quotes-site")?;
    let spider = find("examples/quotes.toml")?;
    std::fs::create_dir_all(&a.dir).with_context(|| format!("cannot create {}", a.dir.display()))?;
    let dir = a.dir.canonicalize()?;
    // The folder is the demo's own: each run starts over, so the last run's items go first.
    let items = dir.join("quotes.jsonl");
    if items.exists() {
        std::fs::remove_file(&items).with_context(|| format!("cannot remove {}", items.display()))?;
    }
    let server = ServerBuilder::new().directory(site).start().await.context("cannot start the test site")?;
    say!("serving testdata/quotes-site at {}; crawling it with examples/quotes.toml", server.base_url());
    // The spider file writes `quotes.jsonl` relative to the folder kumo runs in.
    std::env::set_current_dir(&dir).with_context(|| format!("cannot enter {}", dir.display()))?;
    let base = server.base_url();
    let argv = [
        "kumo".as_ref(),
        "crawl".as_ref(),
        spider.as_os_str(),
        "--seed-base".as_ref(),
        base.as_ref(),
        "--state".as_ref(),
        "state".as_ref(),
        "--fresh".as_ref(),
        "--no-progress".as_ref(),
    ];
    let cli = super::parse(argv)?;
    let Command::Crawl(crawl) = cli.command else { unreachable!("the arguments name crawl") };
    let code = super::crawl::run(*crawl).await;
    server.shutdown().await;
    say!("items: {}", items.display());
    code
}
