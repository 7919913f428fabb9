//! Politeness across workers, seen from the servers: three `kumo crawl --redis` workers share a
//! crawl of three hosts, one with a Crawl-delay and a Disallow, one answering 429 with
//! Retry-After, one with slow pages, all at one request at a time per host. Whatever the
//! three workers do together, each server sees no gap shorter than its delay, nothing during
//! a pause, never two requests at once, and robots.txt fetched once.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use kumo_testsite::services::Redis;
use kumo_testsite::{Fixture, Hit, ServerBuilder, TestServer};

const CRAWL_DELAY: Duration = Duration::from_millis(300);
const RETRY_AFTER: Duration = Duration::from_secs(1);

fn links(paths: &[String]) -> String {
    paths.iter().map(|p| format!("<a href=\"{p}\">{p}</a>\n")).collect()
}

fn robots(txt: &str) -> Fixture {
    Fixture::html(txt).with_header("content-type", "text/plain")
}

/// A host whose home page links to `/p0` … `/p{n-1}` and `extra`.
fn host(n: usize, extra: &[&str]) -> (ServerBuilder, Vec<String>) {
    let mut pages: Vec<String> = (0..n).map(|i| format!("/p{i}")).collect();
    pages.extend(extra.iter().map(|s| s.to_string()));
    let b = ServerBuilder::new().fixture("/", Fixture::html(&links(&pages)));
    (b, pages)
}

fn page(p: &str) -> Fixture {
    Fixture::html(&format!("<title>{p}</title>"))
}

fn targets(server: &TestServer) -> Vec<Hit> {
    let mut hits = server.hits();
    hits.sort_by_key(|h| h.at);
    hits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_keep_each_hosts_politeness_and_fetch_robots_once() {
    // Crawl-delay and Disallow.
    let (mut b, delayed_pages) = host(6, &["/private/x"]);
    b = b.fixture("/robots.txt", robots("User-agent: *\nCrawl-delay: 0.3\nDisallow: /private\n"));
    for p in &delayed_pages {
        b = b.fixture(p, page(p));
    }
    let delayed = b.start().await.expect("site starts");
    // 429 with Retry-After on one page, the first time.
    let (mut b, paused_pages) = host(6, &[]);
    for p in &paused_pages {
        b = match p.as_str() {
            "/p2" => b.fixture_sequence(
                p,
                vec![Fixture::status(429, "slow down").with_header("retry-after", "1"), page(p)],
            ),
            _ => b.fixture(p, page(p)),
        };
    }
    let paused = b.start().await.expect("site starts");
    // Slow pages: two requests at once would show.
    let (mut b, slow_pages) = host(10, &[]);
    for p in &slow_pages {
        b = b.fixture(p, page(p).latency(Duration::from_millis(60)));
    }
    let slow = b.start().await.expect("site starts");

    let redis = Redis::start().await.expect("redis-server starts");
    let url = redis.unix_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let seeds = [delayed.url("/"), paused.url("/"), slow.url("/")];
    let workers: Vec<_> = (0..3)
        .map(|n| {
            let out = format!("w{n}.jsonl");
            let mut args = vec!["crawl"];
            args.extend(seeds.iter().map(String::as_str));
            args.extend(["--redis", &url, "-o", &out, "--no-progress", "-c", "4", "--per-host", "1"]);
            common::spawn_in(dir.path(), &args)
        })
        .collect();
    let mut outputs = Vec::new();
    for (n, w) in workers.into_iter().enumerate() {
        let out = common::finish(w).await;
        assert!(out.status.success(), "worker {n} exits 0: {}", common::stderr(&out));
        outputs.push(std::fs::read_to_string(dir.path().join(format!("w{n}.jsonl"))).unwrap_or_default());
    }

    // Every allowed page once in the union of the outputs.
    let mut records: HashMap<String, usize> = HashMap::new();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        *records.entry(v["url"].as_str().expect("url").to_string()).or_default() += 1;
    }
    assert!(records.values().all(|n| *n == 1), "a record written twice: {records:?}");
    // Each host's pages, its home page included, less what robots.txt disallows.
    let pages = |ps: &[String]| ps.iter().filter(|p| !p.starts_with("/private")).count() + 1;
    assert_eq!(
        records.len(),
        pages(&delayed_pages) + pages(&paused_pages) + pages(&slow_pages),
        "every allowed page crawled: {records:?}"
    );

    for (name, server) in [("delayed", &delayed), ("paused", &paused), ("slow", &slow)] {
        let hits = targets(server);
        let robots = hits.iter().filter(|h| h.target == "/robots.txt").count();
        assert_eq!(robots, 1, "{name}: robots.txt fetched once for the whole crawl, not once per worker");
        assert_eq!(server.max_in_flight(), 1, "{name}: never two requests at once (parallelism 1)");
    }

    let hits = targets(&delayed);
    assert!(hits.iter().all(|h| !h.target.starts_with("/private")), "Disallow holds for every worker");
    let gaps: Vec<Duration> = hits.windows(2).map(|w| w[1].at - w[0].at).collect();
    let shortest = gaps.iter().min().copied().unwrap_or_default();
    assert!(
        shortest >= CRAWL_DELAY,
        "no gap shorter than the Crawl-delay across the workers: shortest {shortest:?} of {gaps:?}"
    );

    let hits = targets(&paused);
    let at = hits.iter().position(|h| h.target == "/p2").expect("the 429 page was fetched");
    let next = hits.get(at + 1).expect("the crawl went on after the pause");
    let waited = next.at - hits[at].at;
    assert!(waited >= RETRY_AFTER, "nothing reached the paused host during its Retry-After: {waited:?}");
}

/// A crawl in Redis stopped at a page limit and resumed with another delay takes it (its
/// hosts' policy changes in Redis) and says so; a worker that brings another start URL under
/// the same `--crawl` name is refused by name before it joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_redis_crawl_takes_a_new_delay_and_refuses_another_start() {
    let (mut b, pages) = host(12, &[]);
    for p in &pages {
        b = b.fixture(p, page(p));
    }
    let server = b.start().await.expect("site starts");
    let redis = Redis::start().await.expect("redis-server starts");
    let redis_url = redis.unix_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |start: String, more: &[&str]| {
        let mut args: Vec<String> = ["crawl", &start, "--redis", &redis_url, "--crawl", "c", "-o", "p.jsonl"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--ignore-robots", "--no-progress"].iter().chain(more).map(|s| s.to_string()));
        let cwd = dir.path().to_path_buf();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            common::kumo_in(&cwd, &args).await
        }
    };
    let o = run(server.url("/"), &["--delay", "400ms", "--max-pages", "3"]).await;
    assert!(o.status.success(), "{}", common::stderr(&o));
    let before = server.hits().len();
    assert_eq!(before, 3);

    let o = run(server.url("/p1"), &[]).await;
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let (was, now) = (server.url("/"), server.url("/p1"));
    assert!(err.contains(&format!("start was [\"{was}\"], now [\"{now}\"]")), "{err}");
    assert_eq!(server.hits().len(), before, "a refused worker fetches nothing");

    let o = run(server.url("/"), &["--delay", "0s"]).await;
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("settings changed since the last run: delay: 400ms → 0s, max_pages: 3 → 0"),
        "{err}"
    );
    let hits = targets(&server);
    assert_eq!(hits.len(), 13, "the rest of the site");
    let gaps: Vec<Duration> = hits[before..].windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    assert!(
        gaps.iter().min().unwrap() < &Duration::from_millis(200),
        "no 400 ms delay after the resume: {gaps:?}"
    );
}
