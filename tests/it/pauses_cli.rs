//! Host pauses with the real binary: a 429 with a day-long Retry-After pauses its host only
//! as long as --max-host-pause allows, the pause shows in `kumo frontier stats` and `kumo
//! frontier hosts`, `--unpause` lifts it, and a resumed crawl waits no longer than its own cap.

use std::path::Path;

use kumo_testsite::{Fixture, ServerBuilder, TestServer};
use serde_json::Value;

use crate::common;
use common::{kumo_in, stderr};

/// `/down` answers 429 with a day's Retry-After (a 429 speaks for its host; one URL's 503
/// would only delay itself); `/a`, on the same host, comes after it.
async fn site() -> TestServer {
    ServerBuilder::new()
        .fixture("/", Fixture::html("<a href=\"/down\">d</a><a href=\"/a\">a</a>"))
        .fixture("/down", Fixture::status(429, "slow down").with_header("retry-after", "86400"))
        .fixture("/a", Fixture::html("a"))
        .start()
        .await
        .unwrap()
}

/// Crawls into the state `st`, one request at a time, stopping after `secs`.
async fn crawl(cwd: &Path, server: &TestServer, max_pause: &str, secs: &str) -> String {
    let url = server.url("/");
    let args = [
        "crawl",
        &url,
        "--state",
        "st",
        "-o",
        "pages.jsonl",
        "--ignore-robots",
        "--no-progress",
        "--per-host",
        "1",
        "--max-host-pause",
        max_pause,
        // A day-long Retry-After is believed only when the crawl would wait that long.
        "--max-retry-after",
        "86400",
        "--max-duration",
        secs,
    ];
    let o = kumo_in(cwd, &args).await;
    assert!(o.status.success(), "{}", stderr(&o));
    stderr(&o)
}

async fn ok(cwd: &Path, args: &[&str]) -> String {
    let o = kumo_in(cwd, args).await;
    assert!(o.status.success(), "kumo {args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn fetched(server: &TestServer, path: &str) -> bool {
    server.hits().iter().any(|h| h.target == path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_host_is_listed_and_lifted() {
    let server = site().await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let host = server.addr().to_string();
    crawl(cwd, &server, "86400", "1.5").await;
    assert!(fetched(&server, "/down") && !fetched(&server, "/a"), "the host was paused after /down");

    let stats = ok(cwd, &["frontier", "stats", "--state", "st"]).await;
    assert!(
        stats.contains(&format!("paused:   1 hosts by their server, {host} the longest (23h")),
        "{stats}"
    );
    let text = ok(cwd, &["frontier", "hosts", "--state", "st"]).await;
    let line = text.lines().find(|l| l.ends_with(&host)).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("23h 59m"), "{text}");
    let json: Value =
        serde_json::from_str(&ok(cwd, &["frontier", "hosts", "--state", "st", "--json"]).await).unwrap();
    assert!(json[0]["paused_secs"].as_u64().unwrap() > 86_000, "{json}");
    assert_eq!(json[0]["queued"], 2, "/down backing off and /a: {json}");

    let o = kumo_in(cwd, &["frontier", "hosts", "--state", "st", "--unpause", "nowhere.test"]).await;
    assert!(!o.status.success() && stderr(&o).contains("no host nowhere.test"), "{}", stderr(&o));
    let lifted = ok(cwd, &["frontier", "hosts", "--state", "st", "--unpause", &host]).await;
    assert!(lifted.contains(&format!("lifted the pause of {host} (23h")), "{lifted}");
    let json: Value =
        serde_json::from_str(&ok(cwd, &["frontier", "hosts", "--state", "st", "--json"]).await).unwrap();
    assert!(json[0].get("paused_secs").is_none(), "{json}");
    assert_eq!(ok(cwd, &["frontier", "hosts", "--state", "st", "--all"]).await.trim(), "no host was paused");

    crawl(cwd, &server, "86400", "1.5").await;
    assert!(fetched(&server, "/a"), "the lifted host went on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_waits_no_longer_than_its_cap() {
    let server = site().await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    crawl(cwd, &server, "86400", "1.5").await;
    assert!(!fetched(&server, "/a"));
    let said = crawl(cwd, &server, "0.5", "3").await;
    assert!(said.contains("is paused by its server for 23h 59m more; this run waits 1s"), "{said}");
    assert!(fetched(&server, "/a"), "the pause was cut to the new cap: {said}");
}
