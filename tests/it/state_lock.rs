//! One kumo process at a time in a state directory: while a crawl runs, every other command
//! that would open or delete its state (`--fresh` included) is refused as "in use", before it
//! reads or deletes anything, and the running crawl goes on untouched.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common;
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
    // (Another output: the running crawl's own is locked, and refused before the state.)
    let second = ["crawl", &start, "--state", "st", "-o", "other.jsonl", "--no-progress"];
    for i in 0..15 {
        let o = kumo_in(cwd, &second).await;
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

/// Two crawls naming one output file: whichever opens it second is refused, and told which
/// crawl (and state) has it; the first one's records are all there. Started at the same moment
/// (four times: the check used to race) and one after the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_output_file_has_one_writer() {
    let (server_a, truth_a) = small_site(300).await;
    let (server_b, truth_b) = small_site(20).await;
    let (a, b) = (server_a.url("/index.html"), server_b.url("/index.html"));
    let slow = ["--per-host", "1", "--delay-ms", "20", "--no-progress"];
    for attempt in 0..4 {
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path();
        let first =
            spawn_in(cwd, &[&["crawl", &a, "--state", "sA", "-o", "shared.jsonl"][..], &slow].concat());
        let second = spawn_in(cwd, &["crawl", &b, "--state", "sB", "-o", "shared.jsonl", "--no-progress"]);
        let (first, second) = (finish(first).await, finish(second).await);
        let ok = [&first, &second].iter().filter(|o| o.status.success()).count();
        assert_eq!(ok, 1, "attempt {attempt}: one writer: {}\n{}", stderr(&first), stderr(&second));
        let refused = if first.status.success() { &second } else { &first };
        let err = stderr(refused);
        assert!(
            err.contains("is being written by another crawl") || err.contains("already holds"),
            "attempt {attempt}: {err}"
        );
        let lines = std::fs::read_to_string(cwd.join("shared.jsonl")).unwrap().lines().count();
        let winner = if first.status.success() { truth_a.unique_urls } else { truth_b.unique_urls };
        assert_eq!(lines, winner, "attempt {attempt}: the writer's records, all of them");
    }

    // While one crawl runs, a second on its file is refused with the first one's state named.
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let hits = server_a.hit_count();
    let running = spawn_in(cwd, &[&["crawl", &a, "--state", "sA", "-o", "shared.jsonl"][..], &slow].concat());
    wait_until(Duration::from_secs(30), "the first crawl to fetch", || server_a.hit_count() >= hits + 5)
        .await;
    let o = kumo_in(cwd, &["crawl", &b, "--state", "sB", "-o", "shared.jsonl", "--no-progress"]).await;
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("shared.jsonl is being written by another crawl"), "{err}");
    assert!(
        err.contains(&format!("crawl state {}", cwd.join("sA").canonicalize().unwrap().display())),
        "{err}"
    );
    let o = finish(running).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = std::fs::read_to_string(cwd.join("shared.jsonl")).unwrap().lines().count();
    assert_eq!(lines, truth_a.unique_urls);
}

/// A state directory resumes only its own crawl: another start URL, or another spider file
/// whose site has the same name, is refused with what differs named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_resumes_only_the_crawl_it_belongs_to() {
    let (server, _) = small_site(50).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let (one, two) = (server.url("/index.html"), server.url("/page/1.html"));
    let o =
        kumo_in(cwd, &["crawl", &one, "--state", "st", "-o", "p.jsonl", "--max-pages", "5", "--no-progress"])
            .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kumo_in(cwd, &["crawl", &two, "--state", "st", "-o", "p.jsonl", "--no-progress"]).await;
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains(&format!("this state is the crawl of start URLs {one}, not of start URLs {two}")),
        "{err}"
    );
    // The same start goes on.
    let o = kumo_in(cwd, &["crawl", &one, "--state", "st", "-o", "p.jsonl", "--no-progress"]).await;
    assert!(o.status.success(), "{}", stderr(&o));

    let spider = common::shop_spider(&one, ("price", "span.price"));
    std::fs::write(cwd.join("a.toml"), &spider).unwrap();
    std::fs::write(cwd.join("b.toml"), &spider).unwrap();
    let o = kumo_in(cwd, &["crawl", "a.toml", "--state", "sp", "--no-progress"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(cwd.join("products.jsonl")).unwrap();
    let o = kumo_in(cwd, &["crawl", "b.toml", "--state", "sp", "--no-progress"]).await;
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    let a = cwd.join("a.toml").canonicalize().unwrap();
    assert!(err.contains(&format!("the crawl of spider file {}, site \"shop\"", a.display())), "{err}");
}
