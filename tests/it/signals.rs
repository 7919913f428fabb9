//! SIGTERM (what `kill`, systemd and container runtimes send) stops a crawl as the first
//! Ctrl-C does: what is in flight finishes, is committed and written, the summary is printed,
//! and the crawl resumes later with every page exactly once. A second one stops at once.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

use crate::common;
use common::{Watched, kumo_in, send_signal, small_site, stderr, wait_until};

/// The URLs of a JSON Lines file, checking that none is there twice.
fn urls_once(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut urls = BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
        let url = v["url"].as_str().unwrap().to_string();
        assert!(urls.insert(url.clone()), "{url} written twice");
    }
    urls
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_gracefully_and_the_crawl_resumes_with_every_page_once() {
    let (server, truth) = small_site(200).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    let crawl = ["crawl", &start, "--state", "st", "-o", "pages.jsonl", "--summary-json", "summary.json"];
    // One request at a time, 30 ms apart: still running when the signal comes.
    let slow = ["--per-host", "1", "--delay-ms", "30", "--no-progress"];
    let run = Watched::spawn(cwd, &[&crawl[..], &slow].concat());
    wait_until(Duration::from_secs(30), "robots.txt and 20 pages fetched", || server.hit_count() >= 21).await;
    send_signal(&run.child, "TERM");
    let (status, err) = run.finish().await;

    assert_eq!(status.code(), Some(3), "the \"stopped before finishing\" exit status: {err}");
    assert!(err.contains("stopping") && err.contains("SIGTERM"), "says it is stopping: {err}");
    assert!(err.contains("stopped before finishing; run the same command again to resume"), "{err}");
    assert!(err.contains("crawl stopped (stopped)"), "the summary: {err}");
    let summary = json(&cwd.join("summary.json"));
    let pages = summary["pages"].as_u64().unwrap();
    assert!(pages >= 20 && (pages as usize) < truth.unique_urls, "stopped mid-crawl: {pages}");
    // Committed: the state counts what the summary counts, and the file holds every page.
    let o = kumo_in(cwd, &["frontier", "stats", "--state", "st", "--json"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stats["counters"]["pages"], pages, "{stats}");
    assert_eq!(stats["journal_pending"], 0, "every committed item written: {stats}");
    assert_eq!(urls_once(&cwd.join("pages.jsonl")).len() as u64, pages);

    let o = kumo_in(cwd, &[&crawl[..], &["--no-progress"]].concat()).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming from st"), "{}", stderr(&o));
    assert_eq!(urls_once(&cwd.join("pages.jsonl")).len(), truth.unique_urls);
    assert_eq!(json(&cwd.join("summary.json"))["pages"], truth.unique_urls as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_stops_now() {
    // A page whose body trickles for seconds: a graceful stop would wait for it.
    let slow = Fixture::html(&"<p>slow</p>".repeat(40)).trickle(20, Duration::from_millis(200));
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(r#"<a href="/slow">slow</a>"#))
        .fixture("/slow", slow)
        .start()
        .await
        .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/");
    let args = ["crawl", &start, "--state", "st", "-o", "pages.jsonl", "--ignore-robots", "--no-progress"];
    let run = Watched::spawn(cwd, &args);
    wait_until(Duration::from_secs(30), "the slow page requested", || {
        server.hits().iter().any(|h| h.target == "/slow")
    })
    .await;
    send_signal(&run.child, "TERM");
    wait_until(Duration::from_secs(30), "the graceful stop", || run.stderr().contains("stopping")).await;
    send_signal(&run.child, "TERM");
    let started = std::time::Instant::now();
    let (status, err) = run.finish().await;
    assert!(started.elapsed() < Duration::from_secs(3), "did not wait for the slow body: {err}");
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(err.contains("(stopped-now)"), "{err}");

    let o = kumo_in(cwd, &args).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(urls_once(&cwd.join("pages.jsonl")).len(), 2, "/ and /slow once each");
}

/// A script call that loops holds its page until its budget ends; a second SIGTERM cuts it at
/// once (the operator's ceiling raised to a minute, so only the signal can end it), and the
/// page is done again on resume, once the script is fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_cuts_a_looping_script_call() {
    let server =
        ServerBuilder::new().fixture("/", Fixture::html(r#"<p class="x">looped</p>"#)).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let spider = |body: &str| {
        let toml = format!(
            "[[site]]\nname = \"loop\"\nseeds = [\"{}\"]\ntargets = ['.']\noutput = {{ jsonl = \"items.jsonl\" }}\n\
             script = {{ source = '''function extract(page) {{ {body} return [{{ url: page.url }}]; }}''', call_ms = 60000 }}\n",
            server.url("/")
        );
        std::fs::write(cwd.join("loop.toml"), toml).unwrap();
    };
    spider("for (;;) {}");
    let args = ["crawl", "loop.toml", "--state", "st", "--no-progress", "--script-max-call", "60s"];
    let run = Watched::spawn(cwd, &args);
    wait_until(Duration::from_secs(30), "the page fetched", || server.hits().iter().any(|h| h.target == "/"))
        .await;
    send_signal(&run.child, "TERM");
    wait_until(Duration::from_secs(30), "the graceful stop", || run.stderr().contains("stopping")).await;
    send_signal(&run.child, "TERM");
    let started = std::time::Instant::now();
    let (status, err) = run.finish().await;
    assert!(started.elapsed() < Duration::from_secs(5), "the call was cut, not waited out: {err}");
    assert!(matches!(status.code(), Some(1..=4)), "a stop, not an abort: {status:?} {err}");

    spider("");
    let o = kumo_in(cwd, &args).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let items = std::fs::read_to_string(cwd.join("items.jsonl")).unwrap_or_default();
    assert_eq!(items.lines().count(), 1, "the page, once, after the resume: {items}\n{}", stderr(&o));
}
