//! The docs' console examples run, and must print what the docs show: every ```console block of
//! the README and of the guide's pages (bar those on `NOT_YET`) against the quotes site served
//! by the test site. A doc that no longer matches the program fails the test command.
//!
//! A block is `$ command` lines, each followed by what it printed. Commands run with `sh` in a
//! folder of their own, where `testdata/` is the repository's and `examples/` a copy; the
//! docs' site address (`127.0.0.1:8000`) is the test site's. `kumo testsite … &` is not run:
//! the test serves that site itself. Both sides are compared with what varies from run to run
//! masked (durations, rates, buffer peaks, how the pages split between the analyzer tasks),
//! and a `...` line stands for any number of lines.

use std::path::Path;
use std::time::Duration;

use kumo_testsite::ServerBuilder;
use regex::Regex;

use crate::common::{KUMO, root, testdata};

/// Pages whose examples are not run yet, each for the reason given; a debt to pay back, so the
/// list only shrinks (a page listed that has no console block left fails the test).
const NOT_YET: &[(&str, &str)] = &[
    ("docs/guide/broad-crawls.md", "needs the synthetic web and its DNS server"),
    ("docs/guide/crawling.md", "prints fetch times in its records"),
    ("docs/guide/operating.md", "needs a crawl running while another command asks"),
    ("docs/guide/politeness.md", "was run with other sites' robots.txt and delays"),
    ("docs/guide/recurring.md", "prints dates and waits for schedules"),
    ("docs/guide/redis.md", "needs a redis-server"),
    ("docs/guide/rendering.md", "needs Chromium"),
    ("docs/guide/scripts.md", "was run on another site"),
    ("docs/guide/spiders.md", "was run on the synthetic site, on another port"),
    ("docs/guide/state.md", "kills a crawl part way, on the synthetic site"),
    ("docs/guide/troubleshooting.md", "needs the hostile site and a full disk"),
    ("docs/guide/warc.md", "prints record ids and dates"),
];

/// The docs' address for the local site, as the examples were run.
const DOCS_SITE: &str = "127.0.0.1:8000";

/// The longest one command of an example may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// The README and every page of the guide that has a console block, relative to the root.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut dirs = vec![root().join("docs/guide")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read the guide") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path.strip_prefix(root()).expect("below the root").to_string_lossy().into_owned());
            }
        }
    }
    pages.retain(|p| !blocks(&read(p)).is_empty());
    pages.sort();
    pages
}

fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).expect("read a page")
}

/// One `$ command` of a block: its line in the page, and the output the page shows.
struct Step {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The console blocks of a page, each as its steps.
fn blocks(text: &str) -> Vec<Vec<Step>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    for (n, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```console") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(steps), line) => match line.strip_prefix("$ ") {
                Some(command) => {
                    steps.push(Step { line: n + 1, command: command.into(), expected: Vec::new() })
                }
                None => steps.last_mut().expect("a block opens with a command").expected.push(line.into()),
            },
            (None, _) => {}
        }
    }
    blocks
}

/// Masks what varies between two runs of the same crawl, the same way on both sides.
fn masked(text: &str) -> Vec<String> {
    let rules: [(&str, &str); 4] = [
        (r"\b\d+(\.\d+)?(ns|µs|ms|s|m|h)\b", "[TIME]"),
        (r"\b\d+(\.\d+)?/s\b", "[RATE]/s"),
        (r"peak \d+", "peak [N]"),
        // Items cross to the pipeline in batches of as many as are ready.
        (r"items (\d+)/(\d+) \(peak \[N\], \d+ in\)", "items $1/$2 (peak [N], [N] in)"),
    ];
    let rules: Vec<(Regex, &str)> =
        rules.iter().map(|(re, to)| (Regex::new(re).expect("a rule"), *to)).collect();
    let analyzer = Regex::new(r"^\s+A\d+\s+called").expect("a rule");
    let number = Regex::new(r"\d+").expect("a rule");
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut line = line.trim_end().to_string();
            for (re, to) in &rules {
                line = re.replace_all(&line, *to).into_owned();
            }
            // The pages split between the analyzer tasks as they come free.
            if analyzer.is_match(&line) {
                line = number.replace_all(&line, "[N]").into_owned();
            }
            line
        })
        .collect();
    // How many analyzer tasks had a page to analyse varies too: their lines count as one.
    let is_analyzer = |line: &String| line.trim_start().starts_with("A[N] ");
    lines.dedup_by(|line, before| is_analyzer(line) && is_analyzer(before));
    lines
}

/// Whether `actual` is `expected`, where a `...` line of `expected` stands for any lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.split_first().is_some_and(|(a, more)| a == first && matches(rest, more))
        }
    }
}

/// A folder to run a page's examples in: the repository's test data, and a copy of the
/// examples whose site address is the test site's.
fn workdir(site: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::os::unix::fs::symlink(testdata(), dir.path().join("testdata")).expect("link testdata");
    std::fs::create_dir(dir.path().join("examples")).expect("make examples/");
    for entry in std::fs::read_dir(root().join("examples")).expect("read examples/") {
        let path = entry.expect("an example").path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).expect("read an example");
            let to = dir.path().join("examples").join(path.file_name().expect("a file name"));
            std::fs::write(to, text.replace(DOCS_SITE, site)).expect("copy an example");
        }
    }
    dir
}

/// Runs one command with `sh` in `dir`, `kumo` on the PATH: what it printed, both streams in
/// order.
async fn run(dir: &Path, command: &str) -> String {
    let bin = Path::new(KUMO).parent().expect("kumo's folder");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .kill_on_drop(true)
        .output();
    let out =
        tokio::time::timeout(COMMAND_LIMIT, child).await.expect("the command ends in time").expect("sh runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a page's examples; the mismatches, each with its place.
async fn check_page(page: &str, site: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    for block in blocks(&read(page)) {
        let dir = workdir(site);
        for step in block {
            if step.command.starts_with("kumo testsite") && step.command.ends_with('&') {
                continue; // the test serves the site itself
            }
            let printed = run(dir.path(), &step.command.replace(DOCS_SITE, site)).await;
            let (want, got) = (masked(&step.expected.join("\n")), masked(&printed.replace(site, DOCS_SITE)));
            if !matches(&want, &got) {
                wrong.push(format!(
                    "{page}:{}: `{}` printed:\n{}\n--- where the page shows:\n{}",
                    step.line,
                    step.command,
                    got.join("\n"),
                    want.join("\n")
                ));
            }
        }
    }
    wrong
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_console_examples_print_what_the_docs_show() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let site = server.addr().to_string();
    let mut wrong = Vec::new();
    let mut run_pages = 0;
    for page in pages() {
        if NOT_YET.iter().any(|(p, _)| *p == page) {
            continue;
        }
        run_pages += 1;
        wrong.extend(check_page(&page, &site).await);
    }
    assert!(run_pages >= 1, "the README's examples ran");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn pages_not_yet_run_are_a_list_that_only_shrinks() {
    let pages = pages();
    for (page, why) in NOT_YET {
        assert!(
            pages.iter().any(|p| p == page),
            "{page} ({why}) has no console example: take it off NOT_YET"
        );
    }
}

#[test]
fn a_mask_hides_what_varies_and_dots_stand_for_lines() {
    let doc = masked("crawl stopped after 0.03s: 265 pages (8649/s)\n...\n  A1   called 124 accepted 124");
    let run = masked(
        "crawl stopped after 1.2s: 265 pages (221/s)\nmore\n  A1   called 7 accepted 7\n  A2   called 9 accepted 9",
    );
    assert!(matches(&doc, &run));
    let fewer = masked("crawl stopped after 1.2s: 264 pages (221/s)\n  A1   called 7 accepted 7");
    assert!(!matches(&doc, &fewer), "a page count is not masked");
}
