//! `kumo crawl URL --redis … --recrawl`: the workers of a crawl kept in Redis keep each page's
//! record there, and a later `--recrawl` asks for every known page again, conditionally, once
//! for the whole crawl however many workers take part: only what changed is written.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::{Watched, kumo_in, stderr, wait_until};
use kumo_testsite::services::Redis;
use kumo_testsite::{ServerBuilder, SiteConfig};

/// The lines of every worker's output, by URL, with how many times each was written.
fn written(dir: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for name in ["w1.jsonl", "w2.jsonl"] {
        let Ok(text) = std::fs::read_to_string(dir.join(name)) else { continue };
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            *out.entry(v["url"].as_str().unwrap().to_string()).or_default() += 1;
        }
    }
    out
}

/// The synthetic site of `pages` pages with validators (its distinct URLs), and a Redis.
async fn site_and_redis(pages: usize) -> (kumo_testsite::TestServer, usize, Redis) {
    let cfg = SiteConfig { pages, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let unique = cfg.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let redis = Redis::start().await.expect("redis-server starts");
    (server, unique, redis)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_recrawl_a_crawl_in_redis_once_between_them() {
    let (server, unique, redis) = site_and_redis(60).await;
    let redis_url = redis.unix_url();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    // 20 ms between requests to the host: a round lasts over a second, time for a second
    // worker to join it.
    let args = |worker: &'static str, out: &'static str| {
        vec!["crawl", url.as_str(), "--redis", redis_url.as_str(), "--crawl", "t", "--worker", worker]
            .into_iter()
            .chain(["-o", out, "--recrawl", "--delay-ms", "20", "--no-progress"])
            .collect::<Vec<&str>>()
    };
    let asked_since = |from: usize| -> Vec<kumo_testsite::Hit> {
        server.hits()[from..].iter().filter(|h| h.target != "/robots.txt").cloned().collect()
    };

    // The first crawl keeps every page's record.
    let out = kumo_in(dir.path(), &args("w1", "w1.jsonl")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no page of this crawl has a record yet"), "{}", stderr(&out));
    assert_eq!(written(dir.path()).len(), unique);

    // Five pages change; two workers re-crawl, the second joining the round under way.
    server.change_pages(&[1, 2, 3, 4, 5]);
    let before = server.hits().len();
    let first = Watched::spawn(dir.path(), &args("w1", "w1.jsonl"));
    wait_until(Duration::from_secs(30), "the round to be queued", || {
        first.stderr().contains("asked for again")
    })
    .await;
    assert!(
        first.stderr().contains(&format!("recrawl: {unique} pages asked for again")),
        "{}",
        first.stderr()
    );
    let second = Watched::spawn(dir.path(), &args("w2", "w2.jsonl"));
    let (status, err) = second.finish().await;
    assert!(status.success(), "{err}");
    assert!(err.contains("this run finishes it") || err.contains("asked for again"), "{err}");
    let (status, err) = first.finish().await;
    assert!(status.success(), "{err}");

    let asked = asked_since(before);
    let mut once: BTreeMap<&str, usize> = BTreeMap::new();
    for h in &asked {
        *once.entry(h.target.as_str()).or_default() += 1;
    }
    assert_eq!(once.len(), unique, "every known page asked for: {once:?}");
    assert!(once.values().all(|&n| n == 1), "each once between the two workers: {once:?}");
    assert!(asked.iter().all(|h| h.if_none_match.is_some()), "all conditional");
    let lines = written(dir.path());
    assert!(lines.values().all(|&n| n <= 2), "{lines:?}");
    let again: Vec<&String> = lines.iter().filter(|(_, n)| **n == 2).map(|(u, _)| u).collect();
    assert_eq!(again.len(), 5, "only the changed pages written again: {again:?}");
    for p in 1..=5 {
        assert!(again.iter().any(|u| u.ends_with(&format!("/page/{p}.html"))), "{again:?}");
    }

    // The records are there to look at, as a state directory's are.
    let out =
        kumo_in(dir.path(), &["frontier", "pages", "--redis", &redis_url, "--crawl", "t", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let pages: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(pages.len(), unique, "{}", stderr(&out));
    assert!(pages.iter().all(|p| p["etag"].is_string() && p["checked_ms"].as_u64() > Some(0)), "{pages:?}");
    assert!(stderr(&out).contains(&format!("{unique} pages kept in crawl t")), "{}", stderr(&out));
}

/// `kumo run --redis`: a site's runs on its schedule with its crawl in Redis, every run after
/// the first a re-crawl round: the second asks for every page conditionally and writes only
/// the two that changed. The schedule's record stays in the state directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kumo_run_keeps_a_sites_crawl_in_redis() {
    let (server, unique, redis) = site_and_redis(20).await;
    let redis_url = redis.unix_url();
    let dir = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    std::fs::write(
        dir.path().join("shop.toml"),
        format!("{spider}\n[site.schedule]\nevery = \"2s\"\ntimes = 2\n"),
    )
    .unwrap();

    let args = ["run", "shop.toml", "--redis", redis_url.as_str(), "--summary-json", "runs.jsonl"];
    let daemon = Watched::spawn(dir.path(), &args);
    wait_until(Duration::from_secs(30), "the first run to end", || daemon.stderr().contains("run 1 of 2:\n"))
        .await;
    let after_first = server.hits().len();
    server.change_pages(&[3, 7]);
    let (status, err) = daemon.finish().await;
    assert!(status.success(), "{err}");
    assert!(err.contains("its schedule is done (2 runs)"), "{err}");
    assert!(err.contains(&format!("recrawl: {unique} pages asked for again")), "{err}");

    let later: Vec<_> =
        server.hits()[after_first..].iter().filter(|h| h.target != "/robots.txt").cloned().collect();
    assert_eq!(later.len(), unique, "each page once in the second run");
    assert!(later.iter().all(|h| h.if_none_match.is_some()), "all conditional");
    let runs: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("runs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let changes = &runs[1]["summary"]["changes"];
    assert_eq!(
        (changes["changed"].as_u64(), changes["unchanged"].as_u64()),
        (Some(2), Some(unique as u64 - 2))
    );
    let products = std::fs::read_to_string(dir.path().join("products.jsonl")).unwrap();
    assert_eq!(products.lines().count(), unique + 2, "every product, then the two that changed");
    let list = kumo_in(dir.path(), &["schedule", "list", "shop.toml", "--json"]).await;
    let sites: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!((sites[0]["runs"].as_str(), sites[0]["state"].as_str()), (Some("2 of 2"), Some("done")));
}

/// Two `kumo run --redis` daemons (two machines, played by two folders) on one schedule
/// whose `start` aligns their ticks: each run is one round between them, every page asked
/// once a run, and the union of their outputs holds every product once, then the two that
/// changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemons_share_each_run_of_a_site() {
    let (server, unique, redis) = site_and_redis(20).await;
    let redis_url = redis.unix_url();
    let start = humantime::format_rfc3339_seconds(std::time::SystemTime::now() + Duration::from_secs(2));
    // 30 ms between requests to the host, for the whole crawl: a run lasts about as long as
    // both daemons need to be in it.
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price")).replacen(
        "output = ",
        "delay_ms = 30\noutput = ",
        1,
    );
    let file = format!("{spider}\n[site.schedule]\nevery = \"3s\"\ntimes = 2\nstart = \"{start}\"\n");
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut daemons = Vec::new();
    for (dir, worker) in dirs.iter().zip(["a", "b"]) {
        std::fs::write(dir.path().join("shop.toml"), &file).unwrap();
        let args = ["run", "shop.toml", "--redis", redis_url.as_str(), "--worker", worker];
        daemons.push(Watched::spawn(dir.path(), &args));
    }
    let before = server.hits().len();
    wait_until(Duration::from_secs(30), "both daemons' first run to end", || {
        daemons.iter().all(|d| d.stderr().contains("run 1 of 2:\n"))
    })
    .await;
    let after_first = server.hits().len();
    server.change_pages(&[3, 7]);
    for d in daemons {
        let (status, err) = d.finish().await;
        assert!(status.success(), "{err}");
        assert!(err.contains("its schedule is done (2 runs)"), "{err}");
    }

    let pages = |from: usize, to: usize| -> Vec<kumo_testsite::Hit> {
        server.hits()[from..to].iter().filter(|h| h.target != "/robots.txt").cloned().collect()
    };
    let first = pages(before, after_first);
    let second = pages(after_first, server.hits().len());
    assert_eq!(first.len(), unique, "each page once in the first run, between the two");
    assert_eq!(second.len(), unique, "and once in the second");
    assert!(second.iter().all(|h| h.if_none_match.is_some()), "the second conditional");
    let mut skus: Vec<String> = Vec::new();
    for dir in &dirs {
        let text = std::fs::read_to_string(dir.path().join("products.jsonl")).unwrap_or_default();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            skus.push(v["sku"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(skus.len(), unique + 2, "every product once, then the two that changed: {skus:?}");
}
