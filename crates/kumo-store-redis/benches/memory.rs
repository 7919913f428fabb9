//! What a crawl costs in Redis's memory: bytes per seen URL and per queued request, at 1 M
//! URLs (`KUMO_BENCH_URLS` sets another count).
//!
//! `cargo bench -p kumo-store-redis --bench memory` starts its own redis-server, queues the URLs
//! (1,000 hosts, 10,000 per commit) and reads `used_memory`; then leases and completes every
//! request, so what is left is the seen set (and the hosts' records). Not a timed benchmark:
//! memory is counted, not measured against a clock.

use std::time::{Duration, Instant};

use kumo_core::{CanonicalOptions, DedupMode, Request, Url};
use kumo_frontier::{Commit, Completion, Frontier, HostPolicy, Politeness};
use kumo_store_redis::{RedisConfig, RedisFrontier};
use kumo_testsite::services::{Appendfsync, Redis, RedisOptions};

const HOSTS: usize = 1_000;
const BATCH: usize = 10_000;

fn used_memory(redis: &Redis) -> i64 {
    let info = redis.info("memory").expect("INFO memory");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory in INFO")
}

fn request(i: usize) -> (kumo_core::Fingerprint, Request) {
    let url = format!("http://host{}.bench.test/page/{}.html", i % HOSTS, i / HOSTS);
    let mut r = Request::get(Url::parse(&url).expect("URL"));
    r.depth = 2;
    (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
}

fn main() {
    let n: usize = std::env::var("KUMO_BENCH_URLS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(async move {
        // Memory does not depend on fsync; everysec keeps the run short.
        let options = RedisOptions { appendfsync: Appendfsync::Everysec, ..Default::default() };
        let redis = Redis::start_with(options).await.expect("redis-server starts");
        let mut cfg = RedisConfig::new(&redis.unix_url(), "memory", "bench");
        cfg.politeness = Politeness {
            default: HostPolicy { parallelism: 64, ..Default::default() },
            ..Default::default()
        };
        cfg.lease_ttl = Duration::from_secs(3600);
        let f = RedisFrontier::open(cfg).await.expect("open");
        let base = used_memory(&redis);
        let started = Instant::now();
        for start in (0..n).step_by(BATCH) {
            let pushes = (start..(start + BATCH).min(n)).map(request).collect();
            f.commit(Commit { pushes, ..Default::default() }).await.expect("push");
        }
        let queued = used_memory(&redis) - base;
        let pushed_in = started.elapsed();
        let started = Instant::now();
        let mut done = 0usize;
        // Bounded: every round leases at least one request until none is left.
        loop {
            let leases = f.lease(BATCH).await.expect("lease");
            if leases.is_empty() {
                break;
            }
            done += leases.len();
            let completions = leases
                .into_iter()
                .map(|l| Completion::Done { lease: l.id, discovered: vec![], page: None })
                .collect();
            f.commit(Commit { completions, ..Default::default() }).await.expect("complete");
        }
        assert_eq!(done, n, "every request leased once");
        let seen = used_memory(&redis) - base;
        let per = |bytes: i64| bytes as f64 / n as f64;
        println!("Redis memory at {n} URLs over {HOSTS} hosts (used_memory deltas, redis-server 7):");
        println!("| what | bytes |");
        println!("|---|---:|");
        println!(
            "| per seen URL (after every request completed; hosts' records included) | {:.1} |",
            per(seen)
        );
        println!("| per queued request (queue entry, beyond its seen entry) | {:.1} |", per(queued - seen));
        println!("| per queued URL in all (seen + queued) | {:.1} |", per(queued));
        println!("queued in {pushed_in:?}, leased and completed in {:?}", started.elapsed());
    });
}
