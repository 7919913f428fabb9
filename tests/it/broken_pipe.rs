//! A reader that stops early (`kumo frontier export --state S | head -1`) ends the command
//! quietly with success: no panic, no error message. A closed standard error loses the logs
//! and status lines, nothing else.

use crate::common;
use common::{kumo_in, spawn_in};

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_early_is_no_failure() {
    let cwd = tempfile::tempdir().unwrap();
    // Far more than a pipe holds, so the writer meets the closed pipe.
    let urls: String = (0..20_000).map(|i| format!("http://127.0.0.1:9/page/{i}\n")).collect();
    std::fs::write(cwd.path().join("urls.txt"), urls).unwrap();
    let o = kumo_in(cwd.path(), &["frontier", "import", "--state", "s", "--create", "urls.txt"]).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for args in
        [&["frontier", "export", "--state", "s"][..], &["frontier", "stats", "--state", "s", "--json"]]
    {
        let mut child = spawn_in(cwd.path(), args);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(lines.next_line().await.unwrap().is_some(), "{args:?} wrote a first line");
        drop(lines); // `head -1` exits here
        let out =
            tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(!err.contains("panicked") && !err.contains("error"), "{args:?}: {err}");
    }
}

/// Standard error closed (`kumo crawl spider.toml 2>&1 | head -1` once panicked with "failed
/// printing to stderr", exit 101): the crawl goes on without its logs and status lines, and
/// ends as it would have, its output whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_standard_error_is_no_failure() {
    let (server, truth) = common::small_site(150).await;
    let cwd = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    std::fs::write(cwd.path().join("shop.toml"), spider).unwrap();
    let start = server.url("/index.html");
    let url_crawl = ["crawl", &start, "--state", "st", "-o", "pages.jsonl", "--summary-json", "s.json"];
    let spider_crawl = ["crawl", "shop.toml", "--state", "st2", "--summary-json", "s.json"];
    // Debug logs: far more than a pipe holds, so kumo writes on after the reader is gone.
    for (args, out) in [(&url_crawl[..], "pages.jsonl"), (&spider_crawl[..], "products.jsonl")] {
        // Through a real shell pipe, which ends after the first line; kumo's own status is
        // the one kept.
        let sh = r#""$0" -vv "$@" 2>&1 | head -1 >/dev/null; exit "${PIPESTATUS[0]}""#;
        let mut child = tokio::process::Command::new("bash");
        child.arg("-c").arg(sh).arg(common::KUMO).args(args).current_dir(cwd.path()).kill_on_drop(true);
        let o = tokio::time::timeout(Duration::from_secs(60), child.output()).await.unwrap().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        check_finished(cwd.path(), out, args[1] == "shop.toml", truth.unique_urls);
        std::fs::remove_file(cwd.path().join(out)).unwrap();
        // Standard error closed before kumo writes anything at all.
        let fresh = if args[1] == "shop.toml" { "st3" } else { "st4" };
        let mut args = args.to_vec();
        args[3] = fresh;
        let mut child = tokio::process::Command::new(common::KUMO);
        child.arg("-vv").args(&args).current_dir(cwd.path()).kill_on_drop(true);
        let mut child = child.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stderr.take());
        let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await.unwrap().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}");
        check_finished(cwd.path(), out, args[1] == "shop.toml", truth.unique_urls);
        std::fs::remove_file(cwd.path().join(out)).unwrap();
    }
}

/// The crawl drained and wrote every item it counted: every page for a URL crawl.
fn check_finished(cwd: &std::path::Path, out: &str, spider: bool, pages: usize) {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.join("s.json")).unwrap()).unwrap();
    let s = if spider { &s["shop"] } else { &s };
    assert_eq!(s["stopped_by"], "drained", "{s}");
    let lines = std::fs::read_to_string(cwd.join(out)).unwrap().lines().count();
    assert_eq!(lines as u64, s["items"].as_u64().unwrap(), "{out}");
    assert!(spider || lines == pages, "{out}: {lines} of {pages}");
}
