//! `kumo crawl FILE.toml` end to end: the quotes example against the quotes site, a bad
//! spider file's error naming line and field, and command-line options a spider file does
//! not take refused by name.

use std::process::Command;

use kumo_testsite::ServerBuilder;
use serde_json::Value;

use crate::common;
use crate::common::{root, testdata};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_runs_the_quotes_spider_file() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = server.base_url();
    let out = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || {
            Command::new(env!("CARGO_BIN_EXE_kumo"))
                .current_dir(dir)
                .args(["crawl", root().join("examples/quotes.toml").to_str().unwrap(), "--seed-base", &base])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.path().join("quotes.jsonl")).unwrap();
    let items: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |m: &str| items.iter().filter(|i| i["_model"] == m).count();
    assert_eq!((count("quote"), count("author"), count("tag")), (100, 50, 137));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("quote:dedup(text)"), "{stderr}");
}

#[test]
fn a_bad_spider_file_names_the_line_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[site]]\nname = \"x\"\nseeds = [\"http://127.0.0.1:1/\"]\ncolour = 1\n").unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_kumo")).args(["crawl", file.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml:4:1") && stderr.contains("unknown field `colour`"), "{stderr}");
}

#[test]
fn options_a_spider_file_does_not_take_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site.toml");
    // The seed is never contacted: the options are checked first.
    std::fs::write(&file, "[[site]]\nname = \"x\"\nseeds = [\"http://127.0.0.1:1/\"]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kumo"))
        .current_dir(dir.path())
        .args([
            "crawl",
            file.to_str().unwrap(),
            "--max-pages",
            "5",
            "-o",
            "x.jsonl",
            "--pg-table",
            "t",
            "--memory",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // --max-pages is a crawl setting: it holds over every site's own.
    assert!(stderr.contains("--output, --pg-table do not apply to a spider file"), "{stderr}");
    assert!(stderr.contains("site.toml's [[site]] tables"), "{stderr}");
    assert!(!dir.path().join("x.jsonl").exists(), "nothing was written");
}

/// A spider-file run refused before it crawls (an output that would replace another
/// program's file, a state directory that is not kumo's) leaves none of its new output files.
#[test]
fn a_refused_spider_run_leaves_no_new_output_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken.csv"), "someone else's data\n").unwrap();
    // With --state DIR, each site's state is DIR/NAME: here a folder that is not kumo's.
    std::fs::create_dir_all(dir.path().join("notes/x")).unwrap();
    std::fs::write(dir.path().join("notes/x/mine.txt"), "mine").unwrap();
    let head = "[[site]]\nname = \"x\"\nseeds = [\"http://127.0.0.1:1/\"]\n";
    for (output, extra) in [
        ("output = { jsonl = \"new.jsonl\", csv = \"taken.csv\" }\n", &["--memory"][..]),
        ("output = { jsonl = \"new.jsonl\" }\n", &["--state", "notes"][..]),
    ] {
        let file = dir.path().join("site.toml");
        std::fs::write(&file, format!("{head}{output}")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kumo"))
            .current_dir(dir.path())
            .args(["crawl", file.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{output}: {stderr}");
        assert!(!dir.path().join("new.jsonl").exists(), "{output}: no new output left: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("taken.csv")).unwrap(), "someone else's data\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/x/mine.txt")).unwrap(), "mine");
}

/// A spider's `max_items` is exact too (it once wrote 67 items for 15): the items of the pages
/// in flight at the limit are held in the site's state, not written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_max_items_writes_exactly_that_many() {
    let site = kumo_testsite::SiteConfig { pages: 200, ..Default::default() };
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    let spider = spider.replacen("output = ", "max_items = 15\nconcurrency = 8\noutput = ", 1);
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let o = common::kumo_in(dir.path(), &["crawl", "shop.toml", "--state", "st", "--summary-json", "s.json"])
        .await;
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("products.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 15);
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(
        (s["shop"]["stopped_by"].as_str(), s["shop"]["items"].as_u64()),
        (Some("max-items"), Some(15))
    );
}

/// A spider file carries the settings it could not before: User-Agent, retries, timeout,
/// sitemap seeds, de-duplication and `max_duration`, each seen in the test site's request log
/// (or, for the duration, in the summary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_file_sets_what_the_command_line_can() {
    use kumo_testsite::{Fixture, SiteConfig};
    let page = Fixture::html;
    let unavailable = || Fixture::status(503, "busy");
    // A relative <loc> is read against the sitemap's own URL: the server's port need not be
    // known before it starts.
    let sitemap =
        "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>/mapped</loc></url></urlset>";
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 40, ..Default::default() })
        .fixture("/start", page("<a href='/a?ref=1'>1</a> <a href='/a?ref=2'>2</a> <a href='/flaky'>f</a> <a href='/slow'>s</a>"))
        .fixture("/a", page("a"))
        .fixture_sequence("/flaky", vec![unavailable(), unavailable(), unavailable(), page("at last")])
        .fixture("/slow", page("late").latency(std::time::Duration::from_secs(3)))
        .fixture("/sitemap.xml", Fixture::html(sitemap))
        .fixture("/mapped", page("from the sitemap"))
        .start()
        .await
        .unwrap();
    let base = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let spider = dir.path().join("settings.toml");
    let file = [
        "user_agent = \"kumo-settings-test/1\"".to_string(),
        "[[site]]".into(),
        "name = \"settings\"".into(),
        format!("seeds = [\"{base}/start\"]"),
        format!("sitemap = [\"{base}/sitemap.xml\"]"),
        "retries = 3".into(),
        "timeout = \"1s\"".into(),
        "strip_param = [\"ref\"]".into(),
        "[[site]]".into(),
        "name = \"timed\"".into(),
        format!("seeds = [\"{base}/index.html\"]"),
        "per_host = 1".into(),
        "delay = \"300ms\"".into(),
        "max_duration = \"1s\"".into(),
    ];
    std::fs::write(&spider, file.join("\n") + "\n").unwrap();
    let summary = dir.path().join("summary.json");
    let o = common::kumo_in(
        dir.path(),
        &["crawl", spider.to_str().unwrap(), "--memory", "--summary-json", summary.to_str().unwrap()],
    )
    .await;
    let err = common::stderr(&o);
    let hits = server.hits();
    let count = |path: &str| hits.iter().filter(|h| h.target.split('?').next() == Some(path)).count();
    assert!(hits.iter().all(|h| h.user_agent.as_deref() == Some("kumo-settings-test/1")), "{err}");
    assert_eq!(count("/a"), 1, "?ref= is stripped: one URL");
    assert_eq!(count("/flaky"), 4, "three retries, the fourth answer a page");
    assert_eq!(count("/slow"), 4, "each attempt cut at the 1 s timeout, and retried");
    assert_eq!((count("/sitemap.xml"), count("/mapped")), (1, 1), "the sitemap seeds the crawl");
    let summaries: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let settings = &summaries["settings"];
    assert_eq!(settings["failed"], 1, "only /slow failed for good: {settings}");
    assert!(settings["errors"].as_object().unwrap().keys().any(|k| k.ends_with(":timeout")), "{settings}");
    assert_eq!(summaries["timed"]["stopped_by"], "max-duration", "{summaries}");
    assert!(summaries["timed"]["pages"].as_u64().unwrap() < 10, "the timed site stopped early: {summaries}");
}

/// An old-style spider file (`delay_ms`, `max_host_pause_secs`) still runs, each old key
/// with a warning that names its new spelling; a crawl setting on the command line holds over
/// the file's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_style_spider_file_runs_with_warnings_and_flags_win() {
    let (server, truth) = common::small_site(5).await;
    let dir = tempfile::tempdir().unwrap();
    let spider = dir.path().join("old.toml");
    std::fs::write(
        &spider,
        format!(
            "[[site]]\nname = \"old\"\nseeds = [\"{}\"]\ndelay_ms = 20\nmax_host_pause_secs = 300\n\
             user_agent = \"from-the-file\"\n",
            server.url("/index.html")
        ),
    )
    .unwrap();
    let o = common::kumo_in(
        dir.path(),
        &["crawl", spider.to_str().unwrap(), "--memory", "--user-agent", "from-the-flag"],
    )
    .await;
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("delay_ms is the old spelling of delay: write delay = \"20ms\""), "{err}");
    assert!(
        err.contains(
            "max_host_pause_secs is the old spelling of max_host_pause: write max_host_pause = \"5m\""
        ),
        "{err}"
    );
    let hits = server.hits();
    assert_eq!(hits.iter().filter(|h| h.target != "/robots.txt").count(), truth.unique_urls, "every page");
    assert!(hits.iter().all(|h| h.user_agent.as_deref() == Some("from-the-flag")), "{hits:?}");
}
