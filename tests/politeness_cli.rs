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
