//! The control server against a real crawl of the test site: its metrics parse as Prometheus
//! text, rise while it runs and end at the summary's numbers; pause quiets the site, resume
//! goes on, stop ends the crawl gracefully; the guard refuses forged hosts and bad tokens.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_control::{Control, ControlError, ControlServer, ListenConfig, Sites};
use kumo_core::Url;
use kumo_engine::{CrawlConfig, Engine, StopCause};
use kumo_frontier::{HostPolicy, MemoryFrontier, MemoryFrontierConfig, Politeness};
use kumo_pipeline::CollectSink;
use kumo_testsite::{Fixture, ServerBuilder, SiteConfig, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request to the server; its status and body.
async fn call(addr: SocketAddr, method: &str, path: &str, host: &str, token: Option<&str>) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    call(addr, "GET", path, &addr.to_string(), None).await
}

async fn post(addr: SocketAddr, path: &str) -> (u16, String) {
    call(addr, "POST", path, &addr.to_string(), None).await
}

/// A value of a metric without labels, from Prometheus text.
fn value(text: &str, name: &str) -> f64 {
    let scrape =
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("Prometheus text");
    let sample =
        scrape.samples.iter().find(|s| s.metric == name).unwrap_or_else(|| panic!("no {name} in\n{text}"));
    match sample.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => v,
        ref other => panic!("{name}: {other:?}"),
    }
}

/// A crawl of `pages` pages, one request at a time `delay` apart, with its control server;
/// its second seed, `/broken`, answers 500 and fails for good.
async fn slow_crawl(pages: usize, delay: Duration) -> (TestServer, Engine, ControlServer) {
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages, page_bytes: 1_000, ..SiteConfig::default() })
        .fixture("/broken", Fixture::status(500, "down"))
        .start()
        .await
        .unwrap();
    let politeness = Politeness {
        default: HostPolicy { parallelism: 1, delay, ..Default::default() },
        ..Default::default()
    };
    let cfg = CrawlConfig {
        seeds: vec![
            Url::parse(&server.url("/index.html")).unwrap(),
            Url::parse(&server.url("/broken")).unwrap(),
        ],
        concurrency: 4,
        politeness: politeness.clone(),
        retry_backoff: Duration::from_millis(5),
        ..Default::default()
    };
    let frontier = Arc::new(MemoryFrontier::new(MemoryFrontierConfig { politeness, ..Default::default() }));
    let mut engine = Engine::new();
    engine.init(cfg, frontier, vec![Box::new(CollectSink::new())]).unwrap();
    let listen = ListenConfig { addr: "127.0.0.1:0".parse().unwrap(), token: None };
    let control = ControlServer::start(listen, Sites::one("shop", Control::of(&engine))).await.unwrap();
    engine.start().await.unwrap();
    (server, engine, control)
}

/// Waits (bounded) until `f` holds, looking every 20 ms.
async fn until(what: &str, limit: Duration, mut f: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !f().await {
        assert!(start.elapsed() < limit, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_rise_during_the_crawl_and_end_at_the_summary() {
    let (server, mut engine, control) = slow_crawl(60, Duration::from_millis(10)).await;
    let addr = control.addr();
    let mut last = 0.0;
    until("pages in the metrics", Duration::from_secs(20), async || {
        let (status, body) = get(addr, "/metrics").await;
        if status != 200 {
            return false;
        }
        let pages = value(&body, "kumo_pages_total");
        assert!(pages >= last, "kumo_pages_total went back from {last} to {pages}");
        last = pages;
        pages >= 10.0
    })
    .await;
    let (_, body) = get(addr, "/metrics").await;
    assert!(body.contains("# TYPE kumo_pages_total counter"), "{body}");
    assert!(body.contains("kumo_responses_total{site=\"shop\",status=\"200\"}"), "{body}");
    assert!(body.contains("kumo_module_calls_total{site=\"shop\",module=\"D1\",step=\"called\"}"), "{body}");
    let summary = tokio::time::timeout(Duration::from_secs(60), engine.wait()).await.unwrap().unwrap();
    let (_, body) = get(addr, "/metrics").await;
    assert_eq!(value(&body, "kumo_pages_total"), summary.pages as f64, "the end matches the summary");
    assert_eq!(value(&body, "kumo_body_bytes_total"), summary.bytes as f64);
    assert_eq!(value(&body, "kumo_queued"), 0.0);
    // One request at a time, 10 ms apart: the crawl waited on politeness. How long depends
    // on the machine's load (a fetch slower than the delay leaves nothing to wait for), so
    // only that some wait was counted, within the crawl's time.
    let waited = value(&body, "kumo_politeness_wait_seconds_total");
    assert!(waited > 0.0 && waited <= summary.elapsed_secs, "{waited} s of {} s", summary.elapsed_secs);
    assert_eq!(waited, summary.politeness_wait_secs);
    // Every answer's latency, in a histogram whose count is the answers (robots.txt's too).
    let scrape = prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();
    let fetch =
        scrape.samples.iter().find(|s| s.metric == "kumo_fetch_latency_seconds").expect("a histogram");
    let prometheus_parse::Value::Histogram(buckets) = &fetch.value else { panic!("{:?}", fetch.value) };
    let answers: u64 = summary.by_status.values().sum();
    let all = buckets.iter().find(|b| b.less_than.is_infinite()).expect("a +Inf bucket").count;
    assert!(all >= answers as f64, "{all} answers in the histogram, {answers} in the summary");
    assert_eq!(summary.fetch_latency.count as f64, all);
    assert!(summary.commit_latency.count > 0, "commits timed");
    // The buffers between the stages, in the summary and on /metrics: every lease, every
    // answer handled, and nothing left in them at the end.
    let names: Vec<&str> = summary.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["leases", "fetched", "results", "items", "errors"]);
    for b in &summary.buffers[..4] {
        assert!(b.len == 0 && b.peak <= b.capacity, "{b:?}");
    }
    // Nobody reads this engine's error stream: the failure's error waits there.
    let errors = &summary.buffers[4];
    assert!(errors.total >= 1 && errors.len == errors.total, "{errors:?}");
    let (leases, results) = (&summary.buffers[0], &summary.buffers[2]);
    assert!(leases.total >= summary.pages && results.total >= summary.pages, "{:?}", summary.buffers);
    assert!(results.peak >= 1 && summary.buffers[1].total > 0, "{:?}", summary.buffers);
    let buffer = |name: &str, buffer: &str| {
        let s = scrape.samples.iter().find(|s| s.metric == name && s.labels.get("buffer") == Some(buffer));
        match s.map(|s| &s.value) {
            Some(prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v)) => *v,
            other => panic!("{name}{{buffer={buffer}}}: {other:?}"),
        }
    };
    assert_eq!(buffer("kumo_buffer_messages_total", "results"), results.total as f64);
    assert_eq!(buffer("kumo_buffer_capacity", "leases"), leases.capacity as f64);
    assert_eq!(buffer("kumo_buffer_peak", "results"), results.peak as f64);
    let (status, json) = get(addr, "/api/status").await;
    assert_eq!(status, 200);
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!((j["state"].as_str(), j["summary"]["pages"].as_u64()), (Some("stopped"), Some(summary.pages)));
    assert_eq!(j["hosts"][0]["host"].as_str(), Some(server.addr().to_string().as_str()), "{}", j["hosts"]);
    let (_, json) = get(addr, "/api/failures").await;
    let f: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(f["total"], 1, "{f}");
    assert_eq!(f["recent"][0]["url"].as_str(), Some(server.url("/broken").as_str()), "{f}");
    assert_eq!(f["recent"][0]["last_status"], 500, "{f}");
    // The status page: one file that polls the API.
    let (status, html) = get(addr, "/").await;
    assert_eq!(status, 200);
    assert!(html.contains("fetch(\"/api/status\"") && html.contains("id=\"pause\""), "{html}");
    assert!(!html.contains("http://") && !html.contains("https://"), "nothing from elsewhere");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_quiets_the_site_resume_goes_on_and_stop_ends_gracefully() {
    let (server, mut engine, control) = slow_crawl(200, Duration::from_millis(20)).await;
    let addr = control.addr();
    until("a few pages", Duration::from_secs(20), async || server.hit_count() >= 10).await;
    assert_eq!(post(addr, "/api/pause").await.0, 200);
    // What was in flight (one request at a time here) ends; then nothing more is asked.
    until("the pause to show", Duration::from_secs(10), async || {
        get(addr, "/api/status").await.1.contains("\"state\":\"paused\"")
    })
    .await;
    let settled = server.hit_count();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let paused_at = server.hit_count();
    assert!(paused_at <= settled + 1, "at most the request in flight: {settled} then {paused_at}");
    // A second of quiet: the crawl would have asked for some 40 pages in it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(server.hit_count(), paused_at, "no request while paused");
    let (_, body) = get(addr, "/metrics").await;
    assert_eq!(value(&body, "kumo_paused"), 1.0);

    assert_eq!(post(addr, "/api/resume").await.0, 200);
    until("requests again", Duration::from_secs(10), async || server.hit_count() > paused_at + 5).await;
    assert_eq!(post(addr, "/api/stop").await.0, 200);
    let summary = tokio::time::timeout(Duration::from_secs(30), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.stopped_by, StopCause::Stopped);
    assert!(summary.frontier.queued > 0, "stopped before the end: {} queued", summary.frontier.queued);
    // Only POST steers it.
    assert_eq!(get(addr, "/api/pause").await.0, 405);
    server.shutdown().await;
}

#[tokio::test]
async fn forged_hosts_missing_tokens_and_open_binds_are_refused() {
    let engine = Engine::new();
    let open = ListenConfig { addr: "0.0.0.0:0".parse().unwrap(), token: None };
    let e = ControlServer::start(open, Sites::one("x", Control::of(&engine))).await.unwrap_err();
    assert!(matches!(e, ControlError::TokenRequired { .. }), "{e}");
    assert!(e.to_string().contains("--listen-token"), "{e}");
    let weak = ListenConfig { addr: "127.0.0.1:0".parse().unwrap(), token: Some("short".into()) };
    assert!(matches!(
        ControlServer::start(weak, Sites::one("x", Control::of(&engine))).await,
        Err(ControlError::WeakToken)
    ));
    // Sixteen bytes, but eight characters: the rule counts what the user typed.
    let wide = ListenConfig { addr: "127.0.0.1:0".parse().unwrap(), token: Some("é".repeat(8)) };
    assert!(matches!(
        ControlServer::start(wide, Sites::one("x", Control::of(&engine))).await,
        Err(ControlError::WeakToken)
    ));

    let token = "a-token-of-32-characters-exactly";
    let cfg = ListenConfig { addr: "127.0.0.1:0".parse().unwrap(), token: Some(token.into()) };
    let server = ControlServer::start(cfg, Sites::one("x", Control::of(&engine))).await.unwrap();
    let addr = server.addr();
    let here = addr.to_string();
    assert_eq!(call(addr, "GET", "/metrics", &here, None).await.0, 401, "no token");
    assert_eq!(call(addr, "GET", "/metrics", &here, Some("a-token-of-32-characters-exactlY")).await.0, 401);
    let evil = format!("evil.example:{}", addr.port());
    assert_eq!(call(addr, "GET", "/metrics", &evil, Some(token)).await.0, 421, "DNS rebinding");
    // Not started: nothing to tell yet, but the request got through.
    assert_eq!(call(addr, "GET", "/metrics", &here, Some(token)).await.0, 503);
    assert_eq!(call(addr, "GET", "/etc/passwd", &here, Some(token)).await.0, 404);
    // The page may carry the token in its address; nothing else may.
    assert_eq!(call(addr, "GET", &format!("/?token={token}"), &here, None).await.0, 200);
    assert_eq!(call(addr, "GET", "/?token=wrong", &here, None).await.0, 401);
    assert_eq!(call(addr, "GET", &format!("/metrics?token={token}"), &here, None).await.0, 401);
    assert_eq!(call(addr, "POST", "/api/stop", &here, Some(token)).await.0, 409, "nothing running to stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_queue_is_shown_and_failures_go_back_through_the_scheduler() {
    let (server, mut engine, control) = slow_crawl(200, Duration::from_millis(20)).await;
    let addr = control.addr();
    let host = server.addr().to_string();
    let broken = || server.hits().iter().filter(|h| h.target == "/broken").count();
    // Before the run's first publication the API answers 503, in plain text.
    let failed = async || -> bool {
        let (status, body) = get(addr, "/api/failures").await;
        status == 200 && serde_json::from_str::<serde_json::Value>(&body).unwrap()["total"] == 1
    };
    until("/broken to fail", Duration::from_secs(20), failed).await;
    let attempts = broken();
    assert_eq!(attempts, 3, "a first try and two retries");

    let (status, json) = get(addr, &format!("/api/frontier?host={host}&limit=5")).await;
    assert_eq!(status, 200, "{json}");
    let q: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(q["host"].as_str(), Some(host.as_str()));
    assert!(q["queued"].as_u64().unwrap() > 5, "{q}");
    let next = q["next"].as_array().unwrap();
    assert_eq!(next.len(), 5, "at most the limit: {q}");
    assert!(next.iter().all(|r| r["url"].as_str().unwrap().starts_with(&server.base_url())), "{q}");
    assert_eq!(get(addr, "/api/frontier?host=nowhere.test").await.0, 404);
    assert_eq!(get(addr, "/api/frontier").await.0, 400, "a host is required");

    assert_eq!(post(addr, "/api/requeue-failures?kind=no-such-kind").await.0, 400);
    let (status, json) = post(addr, "/api/requeue-failures?kind=timeout").await;
    assert_eq!(status, 200, "{json}");
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(r["sites"]["shop"]["requeued"], 0, "an HTTP status failure is not a timeout: {r}");
    let (status, json) = post(addr, "/api/requeue-failures").await;
    assert_eq!(status, 200, "{json}");
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (r["sites"]["shop"]["requeued"].as_u64(), r["sites"]["shop"]["remaining"].as_u64()),
        (Some(1), Some(0))
    );
    // Back in the queue with its retries reset: three more tries, then it fails again.
    until("/broken to be tried again", Duration::from_secs(20), async || broken() == 2 * attempts).await;
    assert_eq!(post(addr, "/api/stop").await.0, 200);
    let summary = tokio::time::timeout(Duration::from_secs(30), engine.wait()).await.unwrap().unwrap();
    assert_eq!(summary.failed, 1, "counted once: out when requeued, in when it failed again");
    assert_eq!(summary.frontier.failed, 1);
    // The run is over: nothing to steer.
    assert_eq!(post(addr, "/api/requeue-failures").await.0, 409);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_capped_and_timed_out() {
    use kumo_control::serve::{HEADER_TIMEOUT, MAX_CONNECTIONS};
    let engine = Engine::new();
    let cfg = ListenConfig { addr: "127.0.0.1:0".parse().unwrap(), token: None };
    let server = ControlServer::start(cfg, Sites::one("x", Control::of(&engine))).await.unwrap();
    let addr = server.addr();
    let opened = Instant::now();
    let extra = 100;
    let mut idle = tokio::task::JoinSet::new();
    for _ in 0..MAX_CONNECTIONS + extra {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        // Sends nothing; reads until the server closes it (bounded well past the timeout).
        idle.spawn(async move {
            let mut buf = [0u8; 64];
            let read = tokio::time::timeout(HEADER_TIMEOUT * 3, s.read(&mut buf)).await;
            assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "closed by the server, not answered: {read:?}");
            opened.elapsed()
        });
    }
    let ended: Vec<Duration> = idle.join_all().await;
    let early = ended.iter().filter(|d| **d < HEADER_TIMEOUT / 2).count();
    let timed_out = ended.iter().filter(|d| **d >= HEADER_TIMEOUT - Duration::from_secs(1)).count();
    assert_eq!(
        (early, timed_out),
        (extra, MAX_CONNECTIONS),
        "over the cap: closed at once; the others at the timeout"
    );
    // All gone: the server answers again.
    let (status, page) = get(addr, "/").await;
    assert_eq!(status, 200, "{page}");
}
