//! `kumo crawl FILE.toml` end to end: the quotes example against the quotes site, a bad
//! spider file's error naming line and field, and command-line options a spider file does
//! not take refused by name.

use std::path::PathBuf;
use std::process::Command;

use kumo_testsite::ServerBuilder;
use serde_json::Value;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("testdata"))
}

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
        .args(["crawl", file.to_str().unwrap(), "--max-pages", "5", "-o", "x.jsonl", "--memory"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--output, --max-pages do not apply to a spider file"), "{stderr}");
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
