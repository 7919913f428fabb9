//! kill -9 at random moments, resume, and nothing is lost or duplicated: the real binary
//! crawls the synthetic site with its default embedded state, is killed again and again,
//! and the final output, the summary and the server's log are checked against the ground
//! truth, and so is its WARC archive. `KUMO_KILLS=20 cargo test --test kill_resume` (or
//! scripts/kill-test.sh) kills more.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;

use kumo_testsite::services::Postgres;
use kumo_testsite::{Fixture, ServerBuilder, SiteConfig, TestServer};

const KUMO: &str = env!("CARGO_BIN_EXE_kumo");
const PER_HOST: usize = 4;

fn kills() -> usize {
    std::env::var("KUMO_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(5)
}

/// Starts `kumo ARGS` in `cwd`, its standard error captured.
fn spawn_kumo(args: &[String], cwd: &Path) -> tokio::process::Child {
    spawn(Path::new(KUMO), args, cwd)
}

/// Starts the program `exe` with `args` in `cwd`, its standard error captured.
fn spawn(exe: &Path, args: &[String], cwd: &Path) -> tokio::process::Child {
    tokio::process::Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts")
}

/// Runs `kumo crawl` and kills it with SIGKILL after `kill_after`, unless it ends first.
/// Returns whether it was killed while running.
async fn run_and_kill(
    args: &[String],
    cwd: &Path,
    kill_after: Option<Duration>,
) -> (bool, std::process::Output) {
    kill_when(spawn_kumo(args, cwd), kill_after.map(tokio::time::sleep)).await
}

/// Runs `kumo crawl` and kills it with SIGKILL `after` its first page was fetched, unless it
/// ends first. Timing from the first page, not from the start, puts the kill mid-crawl even
/// when a busy machine slows the start (connecting to PostgreSQL, replaying items) past it.
async fn run_and_kill_mid_crawl(
    args: &[String],
    cwd: &Path,
    server: &TestServer,
    after: Duration,
) -> (bool, std::process::Output) {
    // Two requests: robots.txt and a page, or two pages when the state kept robots.txt.
    let fetched = server.hit_count() + 2;
    let child = spawn_kumo(args, cwd);
    let spawned = Instant::now();
    let kill = async move {
        common::wait_until(Duration::from_secs(60), "the run's first page", || server.hit_count() >= fetched)
            .await;
        // Said, so that a failure shows how slow the starts were.
        eprintln!("first page after {:?}, kill {after:?} later", spawned.elapsed());
        tokio::time::sleep(after).await;
    };
    kill_when(child, Some(kill)).await
}

/// Kills `child` with SIGKILL once `kill` completes, unless it ends first; then collects it.
/// Returns whether it was killed while running.
async fn kill_when(
    mut child: tokio::process::Child,
    kill: Option<impl std::future::Future<Output = ()>>,
) -> (bool, std::process::Output) {
    let mut killed = false;
    if let Some(kill) = kill {
        tokio::select! {
            _ = kill => {
                child.start_kill().expect("SIGKILL");
                killed = true;
            }
            _ = child.wait() => {}
        }
    }
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("kumo ends within 120 s")
        .expect("kumo ran");
    (killed && !out.status.success(), out)
}

/// Kills the crawl `kills()` times at random moments, then lets it finish. Returns the final
/// run's summary.
async fn crawl_with_kills(args: Vec<String>, cwd: &Path, server: &TestServer) -> serde_json::Value {
    crawl_with_n_kills(args, cwd, server, kills()).await
}

/// Kills the crawl `kills` times at random moments after each run's first page (at least 5
/// or `kills` must land mid-crawl), then lets it finish and returns its summary.
async fn crawl_with_n_kills(
    args: Vec<String>,
    cwd: &Path,
    server: &TestServer,
    kills: usize,
) -> serde_json::Value {
    let seed = fastrand::u64(..);
    eprintln!("kill schedule seed: {seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let started = Instant::now();
    let mut killed = 0;
    let mut attempts = 0;
    while killed < kills && attempts < kills * 3 {
        attempts += 1;
        // More kills, shorter runs: a crawl that finishes before the last kill proves less. The
        // spider-file crawl takes about 2 s whole, so even 3 runs must stay well under that.
        let upper = (1_200 / kills.max(1) as u64).clamp(60, 400);
        let after = Duration::from_millis(rng.u64(0..upper));
        let (was_killed, out) = run_and_kill_mid_crawl(&args, cwd, server, after).await;
        if was_killed {
            killed += 1;
        } else {
            assert!(out.status.success(), "kumo failed: {}", String::from_utf8_lossy(&out.stderr));
            break; // the crawl finished before the kill
        }
    }
    assert!(killed >= kills.min(5), "only {killed} kills landed mid-crawl");
    let (_, out) = run_and_kill(&args, cwd, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "final run failed: {stderr}");
    assert!(stderr.contains("resuming from"), "the final run resumed: {stderr}");
    eprintln!("{killed} kills, {:.1}s in all", started.elapsed().as_secs_f64());
    let summary = cwd.join("summary.json");
    serde_json::from_str(&std::fs::read_to_string(summary).expect("summary written")).expect("summary JSON")
}

fn site() -> (SiteConfig, usize) {
    let site = SiteConfig { pages: 20_000, page_bytes: 3_000, ..Default::default() };
    let unique = site.ground_truth().unique_urls;
    (site, unique)
}

/// Every same-host URL of the ground truth was requested at least once (a page may be
/// fetched again after a kill: its commit was lost), and the server never saw more than
/// `PER_HOST` requests at once.
fn check_server(server: &TestServer, unique: usize) {
    let pages: HashSet<String> =
        server.hits().into_iter().map(|h| h.target).filter(|t| t != "/robots.txt").collect();
    assert_eq!(pages.len(), unique, "every page fetched at least once, nothing else");
    assert!(server.max_in_flight() <= PER_HOST, "{} in flight at once", server.max_in_flight());
}

fn check_summary(summary: &serde_json::Value, unique: usize) {
    assert_eq!(summary["pages"], unique as u64, "pages counted once each across runs");
    assert_eq!(summary["items"], unique as u64);
    let by_status: BTreeMap<String, u64> = serde_json::from_value(summary["by_status"].clone()).unwrap();
    assert_eq!(by_status, BTreeMap::from([("200".to_string(), unique as u64)]));
    assert_eq!(summary["frontier"]["queued"], 0);
    assert_eq!(summary["failed"], 0);
}

/// Every WARC file is whole (`warcio check`, which reads every gzip member and digest) and
/// closed, and the responses are each page's once; robots.txt's once per run that fetched it
/// (a run asks for it again when the state did not keep its answer, and each fetch is
/// archived).
fn check_warc(archive: &Path, server: &TestServer, unique: usize) {
    let mut files: Vec<_> = std::fs::read_dir(archive).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.iter().all(|f| f.to_string_lossy().ends_with(".warc.gz")), "all closed: {files:?}");
    assert!(files.len() > 1, "rolled over: {files:?}");
    let mut responses: BTreeMap<String, u32> = BTreeMap::new();
    for f in &files {
        common::run_tool("warcio", &["check", f.to_str().unwrap()]);
        for r in common::warc_index(f, "warc-type,warc-target-uri") {
            if r["warc-type"] == "response" {
                *responses.entry(r["warc-target-uri"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
    }
    let robots = responses.remove(&server.url("/robots.txt"));
    assert!(robots.is_some(), "robots.txt archived");
    let twice: Vec<_> = responses.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "responses archived twice: {twice:?}");
    assert_eq!(responses.len(), unique, "every page's response");
}

fn crawl_args(server: &TestServer, output: &str) -> Vec<String> {
    [
        "crawl",
        &server.url("/index.html"),
        "-o",
        output,
        "--per-host",
        &PER_HOST.to_string(),
        "--no-progress",
        "--summary-json",
        "summary.json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The crawl is archived too (`--warc`, files rolled every 4 MB so kills land in several):
/// after the kills, every WARC file passes `warcio check` and holds each page's response once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_resume_writes_every_page_once_to_jsonl_and_warc() {
    let (site, unique) = site();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = crawl_args(&server, "pages.jsonl");
    args.extend(["--warc", "archive", "--warc-max-size", "4000000"].map(String::from));
    let summary = crawl_with_kills(args, dir.path(), &server).await;
    check_warc(&dir.path().join("archive"), &server, unique);

    let text = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    let mut urls = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not whole JSON: {e}", n + 1));
        let url = v["url"].as_str().expect("url").to_string();
        assert!(urls.insert(url.clone()), "{url} written twice");
    }
    assert_eq!(urls.len(), unique, "every page's record exactly once");
    check_summary(&summary, unique);
    check_server(&server, unique);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_resume_writes_every_page_once_to_postgres() {
    let (site, unique) = site();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let summary = crawl_with_kills(crawl_args(&server, &pg.url()), dir.path(), &server).await;

    let (client, conn) = tokio_postgres::connect(&pg.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    let row = client
        .query_one("SELECT count(*), count(DISTINCT item ->> 'url') FROM kumo_pages", &[])
        .await
        .unwrap();
    let (rows, distinct): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!((rows, distinct), (unique as i64, unique as i64), "every page's row exactly once");
    check_summary(&summary, unique);
    check_server(&server, unique);
}

/// A spider file's sites are durable too: its state survives kills, and its dedup processor's
/// memory with it, so each product is written once although print variants repeat them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_resume_a_spider_file_writes_every_item_once() {
    let site = SiteConfig { pages: 8_000, page_bytes: 3_000, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = format!(
        r#"
[[site]]
name = "shop"
seeds = ["{}"]
per_host = {PER_HOST}
concurrency = 16
output = {{ jsonl = "products.jsonl" }}

[[site.model]]
name = "product"
root = {{ css = "div.product" }}
fields = [
  {{ name = "sku", css = "span.sku", required = true }},
  {{ name = "title", css = "h1.product-title" }},
]
processors = [{{ dedup = ["sku"] }}]
"#,
        server.url("/index.html")
    );
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let args: Vec<String> =
        ["crawl", "shop.toml", "--summary-json", "summary.json"].iter().map(|s| s.to_string()).collect();
    let summary = crawl_with_n_kills(args, dir.path(), &server, 3).await;

    let text = std::fs::read_to_string(dir.path().join("products.jsonl")).unwrap();
    let mut skus = HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
        let sku = v["sku"].as_str().expect("sku").to_string();
        assert!(skus.insert(sku.clone()), "{sku} written twice");
    }
    assert_eq!(skus.len(), truth.documents, "every product exactly once");
    assert_eq!(summary["shop"]["pages"], truth.unique_urls as u64, "pages counted once each across runs");
    let this_run = summary["shop"]["pages_this_run"].as_u64().expect("pages_this_run");
    assert!(this_run < truth.unique_urls as u64, "the last run resumed, not started over: {this_run}");
    check_server(&server, truth.unique_urls);
}

/// A host's delay holds across kills: the server never sees two requests closer than the
/// delay, even when one run is killed and the next starts at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_keeps_the_delay_between_runs() {
    let site = SiteConfig { pages: 40, page_bytes: 1_000, ..Default::default() };
    let unique = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = crawl_args(&server, "pages.jsonl");
    args.extend(["--delay-ms".to_string(), "40".to_string(), "--ignore-robots".to_string()]);
    let mut rng = fastrand::Rng::new();
    // Where each run's requests begin in the server's log.
    let mut starts = Vec::new();
    for _ in 0..3 {
        starts.push(server.hits().len());
        let (_, out) = run_and_kill(&args, dir.path(), Some(Duration::from_millis(rng.u64(200..600)))).await;
        assert!(out.status.code() != Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    }
    starts.push(server.hits().len());
    let (_, out) = run_and_kill(&args, dir.path(), None).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let hits = server.hits();
    let pages: HashSet<&str> = hits.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(pages.len(), unique);
    // Across a kill the spacing comes from the saved state alone: it must hold exactly.
    // (Spacing within one run is the politeness tests' subject.)
    for &k in starts.iter().filter(|&&k| k > 0 && k < hits.len()) {
        let gap = hits[k].at - hits[k - 1].at;
        assert!(
            gap >= Duration::from_millis(40),
            "the first request after a kill came {gap:?} after the last"
        );
    }
}

/// A kill while robots.txt is being fetched: the request may have reached the host, whose
/// answer (a Crawl-delay) nobody read. The next run waits out the claim the killed run left
/// in the state before it asks again, so the host never sees two requests closer than its
/// Crawl-delay, and the page waits that delay after the robots.txt that carried it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_during_a_robots_fetch_keeps_its_crawl_delay() {
    let robots = Fixture::html("User-agent: *\nCrawl-delay: 2\n")
        .with_header("content-type", "text/plain")
        .latency(Duration::from_millis(1_500));
    let server = ServerBuilder::new()
        .fixture("/robots.txt", robots)
        .fixture("/", Fixture::html("<p>home</p>"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/");
    // The killed run's claim holds 13 s: the connect timeout (10 s) and the robots.txt cap.
    let args = [
        "crawl",
        url.as_str(),
        "--state",
        "st",
        "-o",
        "pages.jsonl",
        "--no-progress",
        "--max-crawl-delay",
        "3s",
        "--timeout",
        "5s",
    ];
    let run = common::spawn_in(dir.path(), &args);
    common::wait_until(Duration::from_secs(20), "the robots.txt request", || server.hit_count() >= 1).await;
    common::send_signal(&run, "KILL");
    assert_eq!(common::finish(run).await.status.code(), None, "killed by the signal");

    let o = tokio::time::timeout(Duration::from_secs(60), common::kumo_in(dir.path(), &args)).await.unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let hits = server.hits();
    let targets: Vec<&str> = hits.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(targets, ["/robots.txt", "/robots.txt", "/"], "asked again, then the page once");
    let gaps: Vec<Duration> = hits.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert!(gaps.iter().all(|g| *g >= Duration::from_secs(2)), "closer than the Crawl-delay: {gaps:?}");
}

/// Ctrl-C once: what is in flight finishes and is committed; the next run resumes and every
/// page is written once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_gracefully_then_resume_writes_every_page_once() {
    let (site, unique) = site();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = crawl_args(&server, "pages.jsonl");
    let out = run_and_interrupt(&args, dir.path(), &server, 1).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("(stopped)"), "a graceful stop");
    let (_, out) = run_and_kill(&args, dir.path(), None).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(urls_once(&dir.path().join("pages.jsonl")), unique, "every page once");
}

/// Ctrl-C twice: the second cuts short a graceful stop that waits on a slow page (its body
/// trickles for seconds); the slow page is fetched again on resume, and written once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_twice_stops_now_and_the_slow_page_comes_back() {
    let slow = Fixture::html(&"<p>slow</p>".repeat(40)).trickle(20, Duration::from_millis(100));
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(r#"<a href="/slow">slow</a> <a href="/fast">fast</a>"#))
        .fixture("/fast", Fixture::html("<title>fast</title>"))
        .fixture("/slow", slow)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args = crawl_args(&server, "pages.jsonl");
    args[1] = server.url("/");
    args.push("--ignore-robots".into());
    let started = Instant::now();
    let out = run_and_interrupt(&args, dir.path(), &server, 2).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("(stopped-now)"), "a stop now");
    assert!(started.elapsed() < Duration::from_secs(8), "did not wait for the slow body");
    let (_, out) = run_and_kill(&args, dir.path(), None).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(urls_once(&dir.path().join("pages.jsonl")), 3, "/, /fast and /slow once each");
    let slow_hits = server.hits().iter().filter(|h| h.target == "/slow").count();
    assert_eq!(slow_hits, 2, "the slow page was fetched again after the stop");
}

/// Runs `kumo`, and once `server` has seen three requests (the crawl is under way) sends it
/// SIGINT (what Ctrl-C sends) `presses` times, 300 ms apart. It must then exit by itself, with
/// the "stopped before finishing" status (3).
async fn run_and_interrupt(
    args: &[String],
    cwd: &Path,
    server: &TestServer,
    presses: usize,
) -> std::process::Output {
    let under_way = server.hit_count() + 3;
    let child = spawn_kumo(args, cwd);
    let pid = child.id().expect("running").to_string();
    common::wait_until(Duration::from_secs(60), "three requests", || server.hit_count() >= under_way).await;
    for _ in 0..presses {
        let ok = std::process::Command::new("kill").args(["-INT", &pid]).status().expect("kill runs");
        assert!(ok.success(), "SIGINT delivered");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The number of records in a JSON Lines file, after checking that no URL is there twice.
fn urls_once(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut urls = HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
        let url = v["url"].as_str().expect("url").to_string();
        assert!(urls.insert(url.clone()), "{url} written twice");
    }
    urls.len()
}

/// The library's durable crawl (`examples/durable.rs`: `Crawler`, `Store::dir`, an output
/// file), killed with SIGKILL mid-crawl and run again, writes every page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_durable_example_killed_and_run_again_writes_every_page_once() {
    // Built beside this test by `cargo test`: target/<profile>/examples/durable.
    let exe =
        std::env::current_exe().unwrap().parent().and_then(Path::parent).unwrap().join("examples/durable");
    assert!(exe.is_file(), "{} is built by cargo test", exe.display());
    let site = SiteConfig { pages: 300, page_bytes: 2_000, ..Default::default() };
    let unique = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = vec![server.url("/index.html"), "state".into(), "pages.jsonl".into()];
    let mut rng = fastrand::Rng::new();
    let mut killed = 0;
    for _ in 0..6 {
        let fetched = server.hit_count() + 2;
        let child = spawn(&exe, &args, dir.path());
        let after = Duration::from_millis(rng.u64(0..400));
        let kill = async {
            common::wait_until(Duration::from_secs(60), "the run's first page", || {
                server.hit_count() >= fetched
            })
            .await;
            tokio::time::sleep(after).await;
        };
        let (was_killed, out) = kill_when(child, Some(kill)).await;
        if !was_killed {
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            break;
        }
        killed += 1;
        if killed == 3 {
            break;
        }
    }
    assert!(killed >= 2, "only {killed} kills landed mid-crawl");
    let (_, out) = kill_when(spawn(&exe, &args, dir.path()), None::<std::future::Ready<()>>).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(urls_once(&dir.path().join("pages.jsonl")), unique, "every page once");
}
