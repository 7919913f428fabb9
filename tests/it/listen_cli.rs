//! `kumo crawl --listen`: the running crawl's metrics and controls over HTTP. A stop through
//! the API ends the crawl gracefully (exit 3) and the same command resumes it; an open bind
//! without a token is refused before anything is crawled.

use crate::common;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use common::{Watched, kumo_in, stderr, wait_until};

async fn call(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    common::control_call(addr, method, path).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_stopped_through_the_api_resumes_with_every_page_once() {
    let (server, truth) = common::small_site(100).await;
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let args = common::listened_crawl(&url, &["--state", "st"], "20");
    let crawl = Watched::spawn(dir.path(), &args);
    let addr = crawl.control_addr().await;
    wait_until(Duration::from_secs(20), "a few pages", || server.hit_count() >= 10).await;
    let (status, metrics) = call(addr, "GET", "/metrics").await;
    assert_eq!(status, 200, "{metrics}");
    assert!(metrics.contains("kumo_pages_total "), "{metrics}");
    assert_eq!(call(addr, "POST", "/api/stop").await.0, 200);
    let (status, err) = crawl.finish().await;
    assert_eq!(status.code(), Some(3), "{err}");

    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    let urls: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].as_str().unwrap().to_string())
        .collect();
    let unique: HashSet<&String> = urls.iter().collect();
    assert_eq!((urls.len(), unique.len()), (truth.unique_urls, truth.unique_urls), "every page exactly once");
    server.shutdown().await;
}

#[tokio::test]
async fn an_open_bind_without_a_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        kumo_in(dir.path(), &["crawl", "http://127.0.0.1:9/", "--memory", "--listen", "0.0.0.0:0"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not a loopback address"), "{}", stderr(&out));
}

/// A spider file's sites are sites of the server: metrics labelled by site, status by site,
/// and a stop for all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_files_sites_are_watched_and_stopped_together() {
    let (one, _) = common::small_site(100).await;
    let (two, _) = common::small_site(100).await;
    let dir = tempfile::tempdir().unwrap();
    let site = |name: &str, seed: String| {
        format!(
            "[[site]]\nname = \"{name}\"\nseeds = [\"{seed}\"]\nper_host = 1\ndelay_ms = 20\noutput = {{ jsonl = \"{name}.jsonl\" }}\n"
        )
    };
    let file = format!("{}\n{}", site("one", one.url("/index.html")), site("two", two.url("/index.html")));
    std::fs::write(dir.path().join("two.toml"), file).unwrap();
    let crawl =
        Watched::spawn(dir.path(), &["crawl", "two.toml", "--listen", "127.0.0.1:0", "--no-progress"]);
    let addr = crawl.control_addr().await;
    wait_until(Duration::from_secs(20), "both sites under way", || {
        one.hit_count() >= 5 && two.hit_count() >= 5
    })
    .await;
    let mut both = false;
    for _ in 0..100 {
        let (_, metrics) = call(addr, "GET", "/metrics").await;
        if metrics.contains("kumo_pages_total{site=\"one\"}")
            && metrics.contains("kumo_pages_total{site=\"two\"}")
        {
            both = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(both, "both sites in the metrics");
    let (status, body) = call(addr, "GET", "/api/status?site=two").await;
    assert_eq!(status, 200, "{body}");
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((j["site"].as_str(), j["sites"].as_array().map(Vec::len)), (Some("two"), Some(2)), "{j}");
    assert_eq!(call(addr, "GET", "/api/status?site=three").await.0, 404);
    let (status, body) = call(addr, "POST", "/api/stop").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"one\"") && body.contains("\"two\""), "{body}");
    let (status, err) = crawl.finish().await;
    assert_eq!(status.code(), Some(3), "{err}");
    one.shutdown().await;
    two.shutdown().await;
}

/// One sample of a family in the Prometheus text, if there is one.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(&format!("{name}{{")))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// With workers sharing a crawl through Redis, each one's metrics and status give its own
/// counts and the whole crawl's beside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_crawls_totals_are_beside_each_workers_own() {
    let (server, truth) = common::small_site(300).await;
    let redis = kumo_testsite::services::Redis::start().await.expect("redis-server starts");
    let redis_url = redis.unix_url();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let worker = |n: usize, listen: bool| {
        let out = format!("w{n}.jsonl");
        let mut args: Vec<String> = [
            "crawl",
            &url,
            "--redis",
            &redis_url,
            "--crawl",
            "shared",
            "-o",
            &out,
            "--no-progress",
            "--per-host",
            "2",
            "--delay-ms",
            "10",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if listen {
            args.extend(["--listen".to_string(), "127.0.0.1:0".to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Watched::spawn(dir.path(), &args)
    };
    let watched = worker(0, true);
    let other = worker(1, false);
    let addr = watched.control_addr().await;
    // Both workers commit; the crawl's pages are then more than this worker's own.
    let start = std::time::Instant::now();
    let (own, whole) = loop {
        let (_, metrics) = call(addr, "GET", "/metrics").await;
        let own = sample(&metrics, "kumo_pages_total").unwrap_or(0.0);
        let whole = sample(&metrics, "kumo_crawl_pages_total").unwrap_or(0.0);
        if sample(&metrics, "kumo_crawl_workers") == Some(2.0) && whole > own && own > 0.0 {
            break (own, whole);
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no totals of two workers: {metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(whole <= truth.unique_urls as f64, "{whole} pages in a crawl of {}", truth.unique_urls);
    let (_, status) = call(addr, "GET", "/api/status").await;
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["crawl"]["workers"], 2, "{status}");
    assert!(v["crawl"]["pages"].as_f64().unwrap() >= own, "{status}");
    for w in [watched, other] {
        let (status, err) = w.finish().await;
        assert!(status.success(), "{err}");
    }
}
