//! The docs' console examples run, and must print what the docs show: every ```console block of
//! the README and of every page of the guide, against the test sites. A doc that no longer
//! matches the program fails the test command.
//!
//! A block is `$ command` lines, each followed by what it printed; [`shell`] runs them as a
//! user's shell would, in a folder of the block's own, where `testdata/` is the repository's
//! and `examples/` a copy. `kumo testsite --dir testdata/quotes-site … &` is not run: the test
//! serves that site itself, on the docs' port 8000. Both sides are compared with what varies
//! from run to run masked (ports, times, dates, rates, state folders' ids, buffer peaks, how
//! the pages split between the analyzer tasks, benchmark figures); a `...` line stands for any
//! number of lines and `[..]` in a line for any text, and the block's folder shows as
//! `/home/me/kumo`.

mod shell;

use std::collections::HashMap;

use kumo_testsite::ServerBuilder;
use regex::Regex;

use crate::common::{root, testdata};
use shell::{Shell, learn_ports, localized, map_unknown_ports, ports_for};

/// The README and every page of the guide that has a console block, relative to the root.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    for entry in walkdir::WalkDir::new(root().join("docs/guide")) {
        let entry = entry.expect("read the guide");
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "md") {
            pages.push(
                entry.path().strip_prefix(root()).expect("below the root").to_string_lossy().into_owned(),
            );
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
                None => {
                    let step = steps.last_mut().expect("a block opens with a command");
                    // A command ending in `\` goes on in the next line, as in a shell.
                    match step.command.strip_suffix('\\') {
                        Some(start) if step.expected.is_empty() => {
                            step.command = format!("{} {}", start.trim_end(), line.trim_start())
                        }
                        _ => step.expected.push(line.into()),
                    }
                }
            },
            (None, _) => {}
        }
    }
    blocks
}

/// How a run's varying parts are masked, the same way on both sides: each pattern, in order,
/// with what it becomes.
const MASKS: &[(&str, &str)] = &[
    (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[DATE]"),
    (r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", "[DATE]"),
    (r"\b20\d{12}\b", "[DATE]"),
    (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
    (r"\b127:\d+\)", "127:[PORT])"),
    (r"\bport \d+", "port [PORT]"),
    // A WARC record's id is random, and its block holds the answer's date.
    (r"urn:uuid:[0-9a-f-]{36}", "urn:uuid:[UUID]"),
    (r"WARC-Block-Digest: sha1:[A-Z2-7]+", "WARC-Block-Digest: [DIGEST]"),
    // A state folder's name ends in a hash of its seeds, whose ports change.
    (r"127\.0\.0\.1-[0-9a-f]{8}\b", "127.0.0.1-[ID]"),
    (r"\b\d+(\.\d+)?(ns|µs|ms|s|m|h|d)\b", "[TIME]"),
    // A duration is one word or two (`45m`, `2d 15h`).
    (r"\[TIME\] \[TIME\]", "[TIME]"),
    (r"\b\d+(\.\d+)?/s\b", "[RATE]/s"),
    (r"peak \d+", "peak [N]"),
    // How far a running crawl has come when it is asked.
    (r"^(kumo_\w+\{[^}]*\}) [0-9.e+-]+$", "$1 [N]"),
    (r#""(queued|in_flight)":\d+"#, r#""$1":[N]"#),
    // Items cross to the pipeline in batches of as many as are ready.
    (r"items (\d+)/(\d+) \(peak \[N\], \d+ in\)", "items $1/$2 (peak [N], [N] in)"),
];

/// Lines of `kumo bench` whose figures vary from run to run: every number in them is masked.
const BENCH_FIGURES: &str =
    r"^\s*(pages/s|cpu/page|elapsed|site's cpu|peak memory|warc bytes|body bytes|browser):";

/// Masks what varies between two runs of the same crawl, the same way on both sides.
fn masked(text: &str) -> Vec<String> {
    let rules: Vec<(Regex, &str)> =
        MASKS.iter().map(|(re, to)| (Regex::new(re).expect("a rule"), *to)).collect();
    let analyzer = Regex::new(r"^\s+A\d+\s+called").expect("a rule");
    let bench = Regex::new(BENCH_FIGURES).expect("a rule");
    let number = Regex::new(r"\d+(\.\d+)?").expect("a rule");
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut line = line.trim_end().to_string();
            for (re, to) in &rules {
                line = re.replace_all(&line, *to).into_owned();
            }
            // The pages split between the analyzer tasks as they come free.
            if analyzer.is_match(&line) || bench.is_match(&line) {
                line = number.replace_all(&line, "[N]").into_owned();
            }
            line
        })
        .collect();
    // How many analyzer tasks had a page to analyse varies too: their lines count as one.
    let is_analyzer = |line: &String| line.trim_start().starts_with("A[N] ");
    lines.dedup_by(|line, before| is_analyzer(line) && is_analyzer(before));
    // A page cannot show blank lines at the end of a block.
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
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
            actual.split_first().is_some_and(|(a, more)| line_matches(first, a) && matches(rest, more))
        }
    }
}

/// Whether `actual` is the line `expected`, where `[..]` stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    if !expected.contains("[..]") {
        return expected == actual;
    }
    let parts: Vec<String> = expected.split("[..]").map(regex::escape).collect();
    Regex::new(&format!("^{}$", parts.join(".*"))).expect("an escaped line").is_match(actual)
}

/// A folder to run a block in: the repository's test data, and a copy of the examples with
/// the docs' ports replaced by the block's.
fn workdir(ports: &mut HashMap<u16, u16>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::os::unix::fs::symlink(testdata(), dir.path().join("testdata")).expect("link testdata");
    std::fs::create_dir(dir.path().join("examples")).expect("make examples/");
    for entry in std::fs::read_dir(root().join("examples")).expect("read examples/") {
        let path = entry.expect("an example").path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).expect("read an example");
            let to = dir.path().join("examples").join(path.file_name().expect("a file name"));
            map_unknown_ports(&text, ports);
            std::fs::write(to, localized(&text, ports)).expect("copy an example");
        }
    }
    dir
}

/// The folder a block runs in, as the docs show it.
const DOCS_FOLDER: &str = "/home/me/kumo";

/// Runs a page's examples; the mismatches, each with its place.
async fn check_page(page: &str, site_port: u16) -> Vec<String> {
    let mut wrong = Vec::new();
    for block in blocks(&read(page)) {
        let commands: Vec<&str> = block.iter().map(|s| s.command.as_str()).collect();
        let mut ports = ports_for(&commands, site_port);
        let dir = workdir(&mut ports);
        let folders = [dir.path().to_path_buf(), dir.path().canonicalize().expect("the folder's path")];
        let mut shell = Shell::new(dir.path());
        for step in block {
            if step.command.starts_with("kumo testsite --dir testdata/quotes-site") {
                continue; // the test serves the site itself
            }
            let mut printed = shell.step(&localized(&step.command, &ports), step.expected.len()).await;
            if step.command.ends_with('&') {
                learn_ports(&step.expected, &printed, &mut ports);
            }
            for folder in &folders {
                printed = printed.replace(&*folder.to_string_lossy(), DOCS_FOLDER);
            }
            let (want, got) = (masked(&step.expected.join("\n")), masked(&printed));
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
    assert_eq!(server.addr().ip().to_string(), "127.0.0.1");
    let pages = pages();
    assert!(pages.len() >= 2 && pages[0] == "README.md", "the README's and the guide's examples are found");
    let mut wrong = Vec::new();
    for page in pages {
        wrong.extend(check_page(&page, server.addr().port()).await);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
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
    let any = masked("resuming from .kumo/state/127.0.0.1-17aca90d ([..] queued, 0 failed)");
    let resumed = masked("resuming from .kumo/state/127.0.0.1-0badcafe (14048 queued, 0 failed)");
    assert!(matches(&any, &resumed), "[..] stands for any text, and a state's id is masked");
    assert!(!matches(&any, &masked("resuming from .kumo/state/127.0.0.1-0badcafe (9 queued, 1 failed)")));
}
