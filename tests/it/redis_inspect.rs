//! Looking at a crawl kept in Redis, and steering it while it runs: `kumo frontier stats`,
//! `kumo frontier hosts` (and `--unpause`) and `kumo failures list` with `--redis URL --crawl
//! NAME`, against a running `kumo crawl --redis` worker.

use crate::common;

use std::time::Duration;

use common::{kumo_in, stderr};
use kumo_testsite::services::Redis;
use kumo_testsite::{Fixture, ServerBuilder};

fn links(paths: &[&str]) -> String {
    paths.iter().map(|p| format!("<a href=\"{p}\">{p}</a>\n")).collect()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_crawl_in_redis_is_listed_and_its_pause_lifted() {
    // `/held` answers 429 with a Retry-After of an hour, which pauses the host (one request at
    // a time) before `/ok` and `/broken`; `/broken` breaks off mid-body, twice.
    let site = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/held", "/ok", "/broken"])))
        .fixture("/ok", Fixture::html("ok"))
        .fixture_sequence(
            "/held",
            vec![Fixture::status(429, "later").with_header("retry-after", "3600"), Fixture::html("held")],
        )
        .fixture("/broken", Fixture::html(&"x".repeat(4096)).reset_after(100))
        .start()
        .await
        .expect("site starts");
    let redis = Redis::start().await.expect("redis-server starts");
    let url = redis.unix_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let seed = site.url("/");
    let args = [
        "crawl",
        &seed,
        "--redis",
        &url,
        "--crawl",
        "t",
        "-o",
        "out.jsonl",
        "--no-progress",
        "--per-host",
        "1",
        "--retries",
        "1",
        "--failure-threshold",
        "100",
        // An hour's Retry-After is believed only when the crawl would wait that long.
        "--max-retry-after",
        "3600",
    ];
    let crawl = common::Watched::spawn(dir.path(), &args);
    let hosts = ["frontier", "hosts", "--redis", &url, "--crawl", "t"];

    // The host is listed as paused once its server asked it to wait.
    let mut listed = String::new();
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(20) && !listed.contains("--unpause") {
        let o = kumo_in(dir.path(), &hosts).await;
        // Until the worker has joined, there is no crawl to list.
        assert!(o.status.success() || stderr(&o).contains("no crawl"), "frontier hosts: {}", stderr(&o));
        listed = stdout(&o);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(listed.contains("--unpause"), "the paused host is listed as paused:\n{listed}");
    assert!(!site.hits().iter().any(|h| h.target == "/ok"), "nothing reached the paused host");

    // Lifted from outside, for every worker: the host goes on. `/held` itself still backs off
    // its hour, so the crawl is stopped after.
    let host = site.addr().to_string();
    let o = kumo_in(dir.path(), &[&hosts[..], &["--unpause", &host]].concat()).await;
    assert!(o.status.success(), "unpause: {}", stderr(&o));
    assert!(stdout(&o).contains(&format!("lifted the pause of {host}")), "{}", stdout(&o));
    common::wait_until(Duration::from_secs(20), "the host's other pages after the lift", || {
        let hits = site.hits();
        hits.iter().any(|h| h.target == "/ok") && hits.iter().filter(|h| h.target == "/broken").count() == 2
    })
    .await;
    common::send_signal(&crawl.child, "TERM");
    let (status, log) = crawl.finish().await;
    assert_eq!(status.code(), Some(3), "a stopped crawl exits 3:\n{log}");

    let o = kumo_in(dir.path(), &["failures", "list", "--redis", &url, "--crawl", "t"]).await;
    assert!(o.status.success(), "failures list: {}", stderr(&o));
    let failures = stdout(&o);
    assert!(failures.starts_with("1 failures in crawl t"), "{failures}");
    assert!(failures.contains("/broken"), "the broken page is the failure: {failures}");

    let o = kumo_in(dir.path(), &["frontier", "stats", "--redis", &url, "--crawl", "t", "--json"]).await;
    assert!(o.status.success(), "frontier stats: {}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON stats");
    let counts = (stats["queued"].as_u64(), stats["leased"].as_u64(), stats["failed"].as_u64());
    assert_eq!(
        counts,
        (Some(1), Some(0), Some(1)),
        "/held backing off, nothing out, /broken failed: {stats}"
    );

    // Exported, re-queued, exported again; a request put in from outside.
    let r = ["--redis", url.as_str(), "--crawl", "t"];
    let run = |args: Vec<&str>| {
        let dir = dir.path().to_path_buf();
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = kumo_in(&dir, &args).await;
            assert!(o.status.success(), "kumo {args:?}: {}", stderr(&o));
            stdout(&o)
        }
    };
    let exported = run([&["failures", "export"][..], &r].concat()).await;
    let lines: Vec<serde_json::Value> =
        exported.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 1, "{exported}");
    assert!(lines[0]["request"]["url"].as_str().is_some_and(|u| u.ends_with("/broken")), "{exported}");
    let requeued = run([&["failures", "requeue"][..], &r].concat()).await;
    assert!(requeued.starts_with("requeued 1 failures; 0 left"), "{requeued}");
    let queue = run([&["frontier", "export"][..], &r].concat()).await;
    let mut paths: Vec<String> = queue
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("JSON line")["url"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [site.url("/broken"), site.url("/held")],
        "the re-queued failure and the page backing off"
    );
    let more = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(more.path(), format!("{}\n{}\n", site.url("/new"), site.url("/ok"))).expect("write");
    let path = more.path().to_str().expect("UTF-8 path");
    let imported = run([&["frontier", "import"][..], &r, &[path]].concat()).await;
    assert!(imported.starts_with("queued 1 requests (1 already seen) in crawl t"), "{imported}");

    // What does not read Redis says so; a crawl that is not there is named.
    let o = kumo_in(dir.path(), &["state", "check", "--redis", &url, "--crawl", "t"]).await;
    assert!(!o.status.success() && stderr(&o).contains("--state DIR"), "{}", stderr(&o));
    let o = kumo_in(dir.path(), &["frontier", "hosts", "--redis", &url, "--crawl", "nosuch"]).await;
    assert!(!o.status.success() && stderr(&o).contains("no crawl \"nosuch\""), "{}", stderr(&o));
}
