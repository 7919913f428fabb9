//! Distributed crawling under chaos: three `kumo crawl --redis` workers share one crawl of the
//! synthetic site while workers are killed with SIGKILL and restarted with the same command,
//! redis-server is killed and restarted, and one worker is frozen (SIGSTOP) past the heartbeat
//! timeout and woken. Then every page was fetched, every page's record is in exactly one
//! worker's output, refetches stay within what the kills had in flight, and every worker
//! exits 0. And when Redis loses the crawl (restarted without persistence, or flushed), the
//! workers stop with exit 1 and say so, promising nothing that cannot happen.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use kumo_testsite::services::{Redis, RedisOptions};
use kumo_testsite::{ServerBuilder, SiteConfig};

/// Requests in flight per worker: what one kill can cost at most in refetches.
const CONCURRENCY: usize = 4;

fn worker(cwd: &Path, seed: &str, redis: &str, n: usize) -> tokio::process::Child {
    common::spawn_in(cwd, &worker_args(seed, redis, "chaos", &format!("w{n}.jsonl")))
}

/// A worker's command line: crawl `crawl` in Redis at `redis` into `out`.
fn worker_args<'a>(seed: &'a str, redis: &'a str, crawl: &'a str, out: &'a str) -> [&'a str; 19] {
    [
        "crawl",
        seed,
        "--redis",
        redis,
        "--crawl",
        crawl,
        "-o",
        out,
        "--no-progress",
        "-c",
        "4",
        "--per-host",
        "8",
        // Spaced hand-outs keep the crawl going for a few seconds, long enough for the chaos.
        "--delay-ms",
        "4",
        "--dead-after",
        "1",
        "--redis-wait",
        "60",
    ]
}

async fn kill9(child: &mut tokio::process::Child) {
    child.start_kill().expect("SIGKILL");
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("killed worker ends");
}

/// Queued plus leased requests of the crawl, from Redis: still above 0 means the crawl is
/// still going, so a strike now hits it mid-crawl.
fn left(redis: &Redis) -> u64 {
    let reply = redis.command(&["HMGET", STATS, "queued", "leased"]).expect("stats");
    reply.lines().map(|l| l.parse::<u64>().unwrap_or(0)).sum()
}

const STATS: &str = "kumo:{chaos}:stats";

async fn finish(child: tokio::process::Child) -> (std::process::ExitStatus, String) {
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("worker ends within 90 s")
        .expect("worker ran");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_and_redis_die_and_nothing_is_lost_or_written_twice() {
    let site = SiteConfig { pages: 1500, page_bytes: 2_000, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.expect("site starts");
    let mut redis = Redis::start().await.expect("redis-server starts");
    let url = redis.unix_url();
    let seed = server.url("/index.html");
    let dir = tempfile::tempdir().expect("temp dir");
    let cwd = dir.path();
    let started = Instant::now();

    let mut workers: Vec<tokio::process::Child> = (0..3).map(|n| worker(cwd, &seed, &url, n)).collect();
    let mut kills = 0;
    // Seeded chaos: each step waits a little, then strikes, so the crawl is hit all along.
    let seed_rng = fastrand::u64(..);
    eprintln!("chaos seed {seed_rng}");
    let mut rng = fastrand::Rng::with_seed(seed_rng);
    let pause = |rng: &mut fastrand::Rng| Duration::from_millis(rng.u64(200..500));

    for _ in 0..2 {
        tokio::time::sleep(pause(&mut rng)).await;
        let n = rng.usize(0..3);
        kill9(&mut workers[n]).await;
        kills += 1;
        tokio::time::sleep(Duration::from_millis(rng.u64(0..300))).await;
        workers[n] = worker(cwd, &seed, &url, n);
    }

    tokio::time::sleep(pause(&mut rng)).await;
    redis.kill().expect("kill redis-server");
    tokio::time::sleep(Duration::from_millis(rng.u64(300..800))).await;
    redis.restart().await.expect("redis-server restarts on its AOF");

    // A frozen worker: its heartbeat stops, its leases go to the others, and when it wakes its
    // late commits are refused, so nothing it had is written twice.
    tokio::time::sleep(pause(&mut rng)).await;
    let frozen = rng.usize(0..3);
    common::send_signal(&workers[frozen], "STOP");
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    common::send_signal(&workers[frozen], "CONT");

    tokio::time::sleep(pause(&mut rng)).await;
    assert!(left(&redis) > 0, "the crawl is still going at the last strike (else it proves less)");
    let n = (frozen + 1) % 3;
    kill9(&mut workers[n]).await;
    kills += 1;
    workers[n] = worker(cwd, &seed, &url, n);

    let mut logs = Vec::new();
    for (n, w) in workers.into_iter().enumerate() {
        let (status, stderr) = finish(w).await;
        assert!(status.success(), "worker {n} exits 0 once the crawl is done: {status:?}\n{stderr}");
        logs.push(stderr);
    }
    eprintln!("chaos run took {:?}", started.elapsed());

    // Every record exactly once in the union of the outputs.
    let mut records: HashMap<String, usize> = HashMap::new();
    for n in 0..3 {
        let text = std::fs::read_to_string(cwd.join(format!("w{n}.jsonl"))).unwrap_or_default();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
            *records.entry(v["url"].as_str().expect("url").to_string()).or_default() += 1;
        }
    }
    let twice: Vec<_> = records.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "records written more than once: {twice:?}");
    assert_eq!(
        records.len(),
        truth.unique_urls,
        "every page's record is in some output\n{}",
        logs.join("\n")
    );

    // Every page fetched at least once; refetches bounded by what the kills and the freeze
    // had in flight (and, should a heartbeat miss the Redis restart, one worker's worth each).
    let hits = server.hits();
    let pages: Vec<&str> =
        hits.iter().map(|h| h.target.as_str()).filter(|t| !t.starts_with("/robots.txt")).collect();
    let distinct: HashSet<&str> = pages.iter().copied().collect();
    assert_eq!(distinct.len(), truth.unique_urls, "every page fetched");
    let refetches = pages.len() - distinct.len();
    let bound = (kills + 1 + 3) * CONCURRENCY;
    assert!(refetches <= bound, "{refetches} refetches, more than the {bound} the chaos can explain");

    // Nothing left behind in Redis: nothing queued, nothing leased.
    assert_eq!(left(&redis), 0, "nothing queued or leased at the end");
}

/// How Redis loses the crawl.
#[derive(Debug, Clone, Copy)]
enum Loss {
    /// Killed and started again without persistence: it comes back empty.
    Restart,
    /// FLUSHALL.
    Flush,
}

/// Two workers crawl through a Redis that keeps no data; once they have fetched some pages,
/// Redis loses everything. Both stop with exit 1 and a message that says the crawl's state
/// vanished from Redis, counts the items it held as lost (promising none for a resume) and says
/// what to do; neither writes a key of the crawl again. The same command run again is refused
/// (its output holds data) and told the crawl is new in Redis, so its state vanished.
async fn redis_loses_the_crawl(loss: Loss) {
    let site = SiteConfig { pages: 1500, page_bytes: 2_000, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.expect("site starts");
    let mut redis = Redis::start_with(RedisOptions { appendonly: false, ..Default::default() })
        .await
        .expect("redis-server without persistence starts");
    let url = redis.unix_url();
    let seed = server.url("/index.html");
    let dir = tempfile::tempdir().expect("temp dir");
    let cwd = dir.path();
    let workers: Vec<_> = ["w0.jsonl", "w1.jsonl"]
        .into_iter()
        .map(|out| common::spawn_in(cwd, &worker_args(&seed, &url, "loss", out)))
        .collect();

    // Mid-crawl: both workers have committed pages, some pages are fetched, most are not.
    let committed = || redis.command(&["HLEN", "kumo:{loss}:ctr"]).is_ok_and(|n| n == "2");
    common::wait_until(Duration::from_secs(30), "both workers committing", committed).await;
    common::wait_until(Duration::from_secs(30), "100 pages fetched", || server.hits().len() >= 100).await;
    match loss {
        Loss::Restart => {
            redis.kill().expect("kill redis-server");
            redis.restart().await.expect("redis-server restarts, empty");
        }
        Loss::Flush => assert_eq!(redis.command(&["FLUSHALL"]).expect("FLUSHALL"), "OK"),
    }
    let fetched = server.hits().len();
    assert!(fetched < truth.unique_urls, "Redis lost the crawl mid-crawl ({fetched} pages fetched)");

    for (n, w) in workers.into_iter().enumerate() {
        let (status, stderr) = finish(w).await;
        assert_eq!(status.code(), Some(1), "worker {n} stops with exit 1 ({loss:?}):\n{stderr}");
        for said in ["the crawl's state vanished from Redis", "crawl \"loss\"", "--fresh", "appendonly yes"] {
            assert!(stderr.contains(said), "worker {n} says {said:?} ({loss:?}):\n{stderr}");
        }
        for wrong in ["written when it resumes", "took over", "run the same command again to resume"] {
            assert!(!stderr.contains(wrong), "worker {n} does not say {wrong:?} ({loss:?}):\n{stderr}");
        }
    }
    let keys = redis.command(&["KEYS", "kumo:{loss}:*"]).expect("KEYS");
    assert_eq!(keys, "", "no worker wrote a key of the lost crawl again ({loss:?})");

    // The same command again: Redis holds nothing of the crawl, and w0.jsonl holds its records.
    let again = common::kumo_in(cwd, &worker_args(&seed, &url, "loss", "w0.jsonl")).await;
    let stderr = common::stderr(&again);
    assert_eq!(common::code(&again), Some(1), "the output holding data is refused:\n{stderr}");
    for said in ["is new in Redis", "vanished from Redis", "w0.jsonl"] {
        assert!(stderr.contains(said), "the run again says {said:?} ({loss:?}):\n{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restarted_without_persistence_stops_the_workers_and_says_the_crawl_is_gone() {
    redis_loses_the_crawl(Loss::Restart).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_flushed_stops_the_workers_and_says_the_crawl_is_gone() {
    redis_loses_the_crawl(Loss::Flush).await;
}
