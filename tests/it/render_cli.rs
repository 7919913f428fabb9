//! `kumo crawl --render`: a shop whose links and fields are written by scripts, crawled by
//! the real binary through Debian's headless Chromium; killed with -9 mid-crawl, it leaves no
//! browser process, and the resumed crawl completes.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use kumo_testsite::scripted::{FROM_FETCH, NOSCRIPT_ONLY, SCRIPTED_INDEX};
use kumo_testsite::{ScriptedSite, ServerBuilder, TestServer};

const KUMO: &str = env!("CARGO_BIN_EXE_kumo");

async fn site(products: usize) -> TestServer {
    let shop = ScriptedSite { products, ..ScriptedSite::default() };
    ServerBuilder::new().scripted(shop).start().await.expect("test site starts")
}

/// `kumo ARGS` in `cwd`, its temporary files (the browser's profile) under `tmp`.
fn spawn(cwd: &Path, tmp: &Path, args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(KUMO)
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts")
}

/// The paths of the page records in `file`, with whether each says it was rendered.
fn records(file: &Path, server: &TestServer) -> Vec<(String, bool, serde_json::Value)> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let url = v["url"].as_str().unwrap();
            let path = url.strip_prefix(&server.base_url()).unwrap_or(url).to_string();
            (path, v["rendered"] == true, v)
        })
        .collect()
}

/// The process groups of the browsers kumo runs with its temporary files under `tmp`: each
/// browser's main process is given its profile directory there, and heads a group of its own
/// (its helpers are in it, without the directory on their command line).
fn browser_groups(tmp: &Path) -> Vec<String> {
    let out = std::process::Command::new("pgrep").args(["-f", &tmp.display().to_string()]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect()
}

/// Whether any process of these groups is left.
fn any_left(groups: &[String]) -> bool {
    groups.iter().any(|g| {
        std::process::Command::new("pgrep").args(["-g", g]).output().is_ok_and(|o| o.status.success())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendering_finds_what_scripts_write_and_a_plain_crawl_does_not() {
    let server = site(24).await;
    let truth = ScriptedSite::default().truth();
    let cwd = tempfile::tempdir().unwrap();
    let seed = server.url(SCRIPTED_INDEX);

    let plain =
        common::kumo_in(cwd.path(), &["crawl", &seed, "-o", "plain.jsonl", "--no-progress", "--memory"])
            .await;
    assert!(plain.status.success(), "{}", common::stderr(&plain));
    let found: BTreeSet<String> =
        records(&cwd.path().join("plain.jsonl"), &server).into_iter().map(|(p, _, _)| p).collect();
    assert_eq!(found, truth.static_pages, "without rendering only the <noscript> link is found");

    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "crawl",
        &seed,
        "-o",
        "rendered.jsonl",
        "--no-progress",
        "--memory",
        "--render",
        "--render-wait",
        "network-idle",
    ];
    let out = common::finish(spawn(cwd.path(), tmp.path(), &args)).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let recs = records(&cwd.path().join("rendered.jsonl"), &server);
    let found: BTreeSet<String> = recs.iter().map(|(p, _, _)| p.clone()).collect();
    assert_eq!(found, truth.rendered_pages, "every page, the one fetched after load included");
    assert!(!found.contains(NOSCRIPT_ONLY), "with scripts on, <noscript> is text");
    assert!(recs.iter().all(|(_, rendered, _)| *rendered), "each record says it was rendered");
    for (path, _, record) in &recs {
        if let Some((name, _)) = truth.products.get(path) {
            assert_eq!(record["title"], name.as_str(), "{path}");
        }
    }
    assert_eq!(recs.len(), found.len(), "each page once");
    assert_eq!(
        server.hits().iter().filter(|h| h.target == "/js/data.json").count(),
        1,
        "the late page's data fetched once"
    );
    assert!(browser_groups(tmp.path()).is_empty(), "no browser outlives the crawl");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_crawl_leaves_no_browser_and_its_resume_completes() {
    let server = site(120).await;
    let truth = ScriptedSite { products: 120, ..ScriptedSite::default() }.truth();
    let cwd = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let seed = server.url(SCRIPTED_INDEX);
    let args = [
        "crawl",
        &seed,
        "-o",
        "out.jsonl",
        "--no-progress",
        "--render",
        "--render-only",
        "*/js/*",
        "--state",
        "state",
        "--delay-ms",
        "20",
        "--per-host",
        "2",
    ];
    let mut first = spawn(cwd.path(), tmp.path(), &args);
    let before = server.hit_count();
    common::wait_until(Duration::from_secs(30), "the crawl renders pages", || {
        server.hit_count() > before + 20 && !browser_groups(tmp.path()).is_empty()
    })
    .await;
    let groups = browser_groups(tmp.path());
    first.start_kill().unwrap();
    first.wait().await.unwrap();
    // Killed with -9, kumo cleans nothing up: the parent-death signal takes the browser, and
    // its helpers follow their browser within a few seconds.
    common::wait_until(Duration::from_secs(10), "the browser goes with kumo", || !any_left(&groups)).await;

    let out = common::finish(spawn(cwd.path(), tmp.path(), &args)).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let found: BTreeSet<String> =
        records(&cwd.path().join("out.jsonl"), &server).into_iter().map(|(p, _, _)| p).collect();
    // Read at `load`, the late page has most likely not fetched its link yet (it asks 200 ms
    // after): that page may or may not be found.
    let mut expected = truth.rendered_pages.clone();
    expected.remove(FROM_FETCH);
    let mut found = found;
    found.remove(FROM_FETCH);
    assert_eq!(found, expected, "the resumed crawl completes");
    assert!(browser_groups(tmp.path()).is_empty(), "no browser outlives the crawl");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_browser_is_a_clear_error_before_anything_is_made() {
    let cwd = tempfile::tempdir().unwrap();
    let out = common::kumo_in(
        cwd.path(),
        &[
            "crawl",
            "http://127.0.0.1:9/",
            "-o",
            "out.jsonl",
            "--render",
            "--browser",
            "/nonexistent/chromium",
        ],
    )
    .await;
    assert_eq!(common::code(&out), Some(1), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("the browser /nonexistent/chromium does not exist"),
        "{}",
        common::stderr(&out)
    );
    assert!(!cwd.path().join("out.jsonl").exists(), "nothing made");
}

/// A spider file's site renders the pages its `render` names, and its model reads the fields
/// scripts write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_file_site_renders_its_pages_and_reads_their_fields() {
    let server = site(24).await;
    let truth = ScriptedSite::default().truth();
    let cwd = tempfile::tempdir().unwrap();
    let spider = format!(
        r##"
[[site]]
name = "scripted"
seeds = ["{seed}"]
output = {{ jsonl = "products.jsonl" }}
render = {{ pages = ["*/js/index.html", "*/js/c/*", "*/js/p/*"], wait = {{ selector = "#app > *" }}, tabs = 2 }}

[[site.model]]
name = "product"
on = ['/js/p/']
fields = [
  {{ name = "name", css = "h1.name", required = true }},
  {{ name = "price", css = "span.price", required = true }},
]
"##,
        seed = server.url(SCRIPTED_INDEX)
    );
    std::fs::write(cwd.path().join("scripted.toml"), spider).unwrap();
    let out = common::kumo_in(cwd.path(), &["crawl", "scripted.toml", "--no-progress"]).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = std::fs::read_to_string(cwd.path().join("products.jsonl")).unwrap();
    let mut got = BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        got.insert((v["name"].as_str().unwrap().to_string(), v["price"].as_str().unwrap().to_string()));
    }
    assert_eq!(text.lines().count(), truth.products.len(), "one item per product");
    let expected: BTreeSet<_> = truth.products.values().cloned().collect();
    assert_eq!(got, expected, "every product, with the fields its script writes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_files_bad_render_is_refused_at_its_line() {
    let cwd = tempfile::tempdir().unwrap();
    let spider = "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:9/\"]\nrender = \"chrome\"\n";
    std::fs::write(cwd.path().join("bad.toml"), spider).unwrap();
    let out = common::kumo_in(cwd.path(), &["crawl", "bad.toml", "--no-progress"]).await;
    assert_eq!(common::code(&out), Some(2), "{}", common::stderr(&out));
    let err = common::stderr(&out);
    assert!(err.contains("bad.toml:4:") && err.contains("render"), "{err}");
    assert!(err.contains("\"chrome\" is not a renderer"), "{err}");
}

/// `kumo shell URL --render`: selectors tried on the DOM the page's scripts wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_tries_selectors_on_the_rendered_dom() {
    let server = site(24).await;
    let url = server.url("/js/p/3.html");
    let (name, price) = ScriptedSite::default().truth().products["/js/p/3.html"].clone();
    let shell = |render: bool| {
        let mut args = vec!["shell".to_string(), url.clone()];
        if render {
            args.push("--render".into());
        }
        async move {
            let mut child = tokio::process::Command::new(KUMO)
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            use tokio::io::AsyncWriteExt;
            child.stdin.take().unwrap().write_all(b"css h1.name\ncss span.price\nquit\n").await.unwrap();
            common::finish(child).await
        }
    };
    let plain = shell(false).await;
    assert!(plain.status.success(), "{}", common::stderr(&plain));
    let text = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert_eq!(text.matches("(no match)").count(), 2, "a plain fetch has no product: {text}");
    let rendered = shell(true).await;
    assert!(rendered.status.success(), "{}", common::stderr(&rendered));
    let text = String::from_utf8_lossy(&rendered.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(&lines[1..3], [name.as_str(), price.as_str()], "{text}");
}

/// A page whose script never ends times out, is retried as any failed fetch, and is recorded
/// as a failure; the crawl finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_loads_is_a_failure_and_the_crawl_finishes() {
    let server = site(24).await;
    let cwd = tempfile::tempdir().unwrap();
    let hang = server.url(kumo_testsite::scripted::HANG);
    let seeds = [hang.as_str(), &server.url(FROM_FETCH)];
    let args = [
        "crawl",
        seeds[0],
        seeds[1],
        "-o",
        "out.jsonl",
        "--no-progress",
        "--state",
        "state",
        "--render",
        "--render-timeout",
        "2",
        "--retries",
        "1",
    ];
    let out = common::kumo_in(cwd.path(), &args).await;
    let err = common::stderr(&out);
    // One of the two pages failed for good: over the default threshold of failures.
    assert_eq!(common::code(&out), Some(4), "the crawl finishes, saying a page failed: {err}");
    assert!(err.contains("downloader:timeout: 2"), "{err}");
    let recs = records(&cwd.path().join("out.jsonl"), &server);
    assert_eq!(recs.iter().map(|(p, _, _)| p.as_str()).collect::<Vec<_>>(), [FROM_FETCH], "{err}");
    let failures = common::kumo_in(cwd.path(), &["failures", "list", "--state", "state"]).await;
    let listed = String::from_utf8_lossy(&failures.stdout).into_owned();
    assert!(listed.contains(&hang) && listed.contains("timeout"), "{listed}");
    assert_eq!(
        server.hits().iter().filter(|h| h.target == kumo_testsite::scripted::HANG).count(),
        2,
        "tried twice"
    );
}
