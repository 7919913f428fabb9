//! One kumo process at a time in a state directory: while a crawl runs, every other command
//! that would open or delete its state (`--fresh` included) is refused as "in use", before it
//! reads or deletes anything, and the running crawl goes on untouched.

use std::collections::BTreeSet;
use std::time::Duration;

mod common;
use common::{finish, kumo_in, send_signal, small_site, spawn_in, stderr, wait_until};

const IN_USE: &str = "in use by another kumo process";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_crawls_state_is_refused_to_every_other_command() {
    let (server, truth) = small_site(300).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    // One request at a time, 50 ms apart: the crawl runs for many seconds.
    let slow = ["--per-host", "1", "--delay-ms", "50", "--no-progress"];
    let crawl = ["crawl", &start, "--state", "st", "-o", "pages.jsonl"];
    let running = spawn_in(cwd, &[&crawl[..], &slow].concat());
    wait_until(Duration::from_secs(30), "the first crawl to fetch", || server.hit_count() >= 5).await;

    // --fresh would delete the state under the running crawl.
    let o =
        kumo_in(cwd, &["crawl", &start, "--state", "st", "--fresh", "-o", "other.jsonl", "--no-progress"])
            .await;
    assert!(!o.status.success() && stderr(&o).contains(IN_USE), "--fresh: {}", stderr(&o));
    assert!(cwd.join("st/KUMO_STATE").is_file(), "the state is still there");

    // A plain second crawl: "in use", never a damaged journal read while it is written.
    for i in 0..15 {
        let o = kumo_in(cwd, &[&crawl[..], &["--no-progress"]].concat()).await;
        assert!(!o.status.success() && stderr(&o).contains(IN_USE), "try {i}: {}", stderr(&o));
        assert!(!stderr(&o).contains("damaged"), "try {i}: {}", stderr(&o));
    }

    std::fs::write(cwd.join("more.txt"), server.url("/page/1.html") + "\n").unwrap();
    let others: [&[&str]; 6] = [
        &["state", "check", "--state", "st"],
        &["frontier", "stats", "--state", "st"],
        &["frontier", "export", "--state", "st"],
        &["frontier", "import", "--state", "st", "more.txt"],
        &["failures", "list", "--state", "st"],
        &["failures", "requeue", "--state", "st"],
    ];
    for args in others {
        let o = kumo_in(cwd, args).await;
        assert!(!o.status.success() && stderr(&o).contains(IN_USE), "{args:?}: {}", stderr(&o));
    }
    assert!(!cwd.join("other.jsonl").exists() || std::fs::read(cwd.join("other.jsonl")).unwrap().is_empty());

    // The running crawl was never disturbed: stop it, resume it, and every page is there once.
    assert!(server.hit_count() < truth.unique_urls, "still running when the checks ended");
    send_signal(&running, "INT");
    let o = finish(running).await;
    assert!(o.status.code().is_some(), "ended by itself: {}", stderr(&o));
    assert!(stderr(&o).contains("crawl stopped"), "{}", stderr(&o));
    let o = kumo_in(cwd, &[&crawl[..], &["--no-progress"]].concat()).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(cwd.join("pages.jsonl")).unwrap();
    let urls: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].as_str().unwrap().to_string())
        .collect();
    let unique: BTreeSet<&String> = urls.iter().collect();
    assert_eq!(unique.len(), urls.len(), "no page written twice");
    assert_eq!(urls.len(), truth.unique_urls, "every page written");
}
