//! The real `kumo` binary's politeness flags: the adaptive throttle spaces a slow host's
//! requests toward its latency, and its settings are checked.

use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

mod common;
use common::{kumo, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_throttle_spaces_a_slow_host() {
    let latency = Duration::from_millis(200);
    // Sixteen pages: the first few go before any answer is in, the rest are spaced.
    let links: String = (1..=16).map(|i| format!("<a href=\"/p?{i}\">{i}</a>")).collect();
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links))
        .fixture("/p", Fixture::html("slow").latency(latency))
        .start()
        .await
        .unwrap();
    let o = kumo(&[
        "crawl",
        &server.url("/"),
        "--memory",
        "--ignore-robots",
        "--auto-throttle",
        "--auto-throttle-start-delay",
        "0.05",
        "--auto-throttle-max-delay",
        "2",
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let hits = server.hits();
    assert_eq!(hits.len(), 17);
    let gaps: Vec<Duration> = hits.windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    let last = *gaps.last().unwrap();
    assert!(last >= latency * 7 / 10, "the slow host's requests were spaced toward 200 ms: {gaps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_throttle_settings_are_checked() {
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--auto-throttle-target", "2"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--auto-throttle"), "the setting needs the switch: {}", stderr(&o));
    let o =
        kumo(&["crawl", "http://127.0.0.1:1/", "--memory", "--auto-throttle", "--auto-throttle-target", "0"])
            .await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("target concurrency"), "{}", stderr(&o));
    let o = kumo(&[
        "crawl",
        "http://127.0.0.1:1/",
        "--memory",
        "--auto-throttle",
        "--auto-throttle-max-delay=-1",
    ])
    .await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--auto-throttle-max-delay"), "{}", stderr(&o));
}

/// A crawl stopped at a page limit and resumed with another delay runs at the new pace, and
/// says what changed: the state keeps what the crawl learned of a host (its Crawl-delay), not
/// the old rule. A setting a resumed crawl cannot change is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_runs_at_its_own_delay() {
    let links: String = (1..=12).map(|i| format!("<a href=\"/p{i}\">{i}</a>")).collect();
    let mut b = ServerBuilder::new().fixture("/", Fixture::html(&links));
    for i in 1..=12 {
        b = b.fixture(&format!("/p{i}"), Fixture::html("page"));
    }
    let server = b.start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let url = server.url("/");
    let run = |more: &[&str]| {
        let mut args = vec!["crawl", url.as_str(), "--state", "st", "-o", "p.jsonl", "--ignore-robots"];
        args.extend(more);
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let cwd = cwd.path().to_path_buf();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            common::kumo_in(&cwd, &args).await
        }
    };
    // The old flag, in milliseconds, still works.
    let o = run(&["--delay-ms", "400", "--max-pages", "3"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let before = server.hits().len();
    assert_eq!(before, 3);

    let o = run(&["--delay", "0s", "--strip-param", "ref"]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("strip_param was [], now [\"ref\"]") && err.contains("--fresh"), "{err}");
    assert_eq!(server.hits().len(), before, "a refused resume fetches nothing");

    let o = run(&["--delay", "0s", "--summary-json", "summary.json"]).await;
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("settings changed since the last run: delay: 400ms → 0s, max_pages: 3 → 0"),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.path().join("summary.json")).unwrap()).unwrap();
    let changed = &summary["settings_changed"];
    assert_eq!(changed[0], serde_json::json!({"name": "delay", "stored": "400ms", "now": "0s"}), "{summary}");
    let hits = server.hits();
    assert_eq!(hits.len(), 13, "the rest of the site");
    let gaps: Vec<Duration> = hits[before..].windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    let shortest = gaps.iter().min().unwrap();
    assert!(*shortest < Duration::from_millis(200), "no 400 ms delay after the resume: {gaps:?}");
}
