//! What the Redis backend's tests share: a redis-server of their own, workers on it, requests,
//! and reading Redis's clock and heartbeats.

use std::time::{Duration, Instant};

use kumo_core::{CanonicalOptions, DedupMode, Fingerprint, Item, Request, Url};
use kumo_frontier::{Completion, Frontier, HostPolicy, Lease, LeaseId, Politeness, Readiness};
use kumo_store_redis::{RedisConfig, RedisFrontier};
use kumo_testsite::services::Redis;

/// How short a heartbeat may stop before its worker counts as dead, in most tests.
pub const DEAD_AFTER: Duration = Duration::from_secs(1);
/// How often a test polls for something only time brings (a heartbeat timing out).
pub const POLL: Duration = Duration::from_millis(50);
/// The longest a test waits for a dead worker's leases to come back.
pub const COME_BACK_WITHIN: Duration = Duration::from_secs(5);

pub fn req(url: &str) -> (Fingerprint, Request) {
    let r = Request::get(Url::parse(url).expect("test URL"));
    (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
}

/// `n` requests spread over four hosts.
pub fn requests(n: usize) -> Vec<(Fingerprint, Request)> {
    (0..n).map(|i| req(&format!("http://h{}.test/{i}", i % 4))).collect()
}

pub fn config(redis: &Redis, crawl: &str, worker: &str) -> RedisConfig {
    let mut cfg = RedisConfig::new(&redis.url(), crawl, worker);
    // No politeness in the way: these tests are about who gets which lease.
    cfg.politeness =
        Politeness { default: HostPolicy { parallelism: 1000, ..Default::default() }, ..Default::default() };
    cfg.dead_after = DEAD_AFTER;
    cfg.outage_wait = Duration::from_secs(20);
    cfg
}

pub async fn open(cfg: RedisConfig) -> RedisFrontier {
    let who = format!("worker {:?} of crawl {:?}", cfg.worker, cfg.crawl);
    RedisFrontier::open(cfg).await.unwrap_or_else(|e| panic!("open {who}: {e}"))
}

pub async fn start_redis() -> Redis {
    Redis::start().await.expect("start redis-server")
}

pub fn url_of(l: &Lease) -> String {
    l.request.url.to_string()
}

pub fn urls(leases: &[Lease]) -> Vec<String> {
    let mut v: Vec<String> = leases.iter().map(url_of).collect();
    v.sort();
    v
}

pub fn request_urls(requests: &[(Fingerprint, Request)]) -> Vec<String> {
    let mut v: Vec<String> = requests.iter().map(|(_, r)| r.url.to_string()).collect();
    v.sort();
    v
}

pub fn done(lease: LeaseId) -> Completion {
    Completion::Done { lease, discovered: vec![], page: None }
}

pub async fn complete_all(f: &RedisFrontier, leases: &[Lease]) {
    let batch = leases.iter().map(|l| done(l.id)).collect();
    f.complete(batch).await.expect("complete the worker's own live leases");
}

pub fn item(page: &str, n: usize) -> Item {
    Item::new().with("page", page).with("n", n as u64)
}

/// Redis's clock in milliseconds (the clock the script decides liveness by).
pub fn redis_now_ms(redis: &Redis) -> u64 {
    let reply = redis.command(&["TIME"]).expect("TIME");
    let mut parts = reply.lines();
    let secs: u64 = parts.next().and_then(|s| s.parse().ok()).expect("TIME seconds");
    let micros: u64 = parts.next().and_then(|s| s.parse().ok()).expect("TIME microseconds");
    secs * 1000 + micros / 1000
}

/// The last heartbeat Redis holds for an incarnation, in Redis milliseconds.
/// When `inc` last beat: `alive` holds each incarnation's liveness deadline, its last beat
/// plus its `dead_after` (the tests' `DEAD_AFTER`).
pub fn last_beat_ms(redis: &Redis, crawl: &str, inc: &str) -> u64 {
    let key = format!("kumo:{{{crawl}}}:alive");
    let score = redis.command(&["ZSCORE", &key, inc]).expect("ZSCORE");
    let deadline =
        score.parse::<f64>().unwrap_or_else(|_| panic!("no heartbeat of {inc} in {key}: {score:?}")) as u64;
    deadline - DEAD_AFTER.as_millis() as u64
}

pub fn assert_polls_soon(r: Readiness, what: &str) {
    match r {
        Readiness::At(at) => assert!(
            at <= Instant::now() + Duration::from_secs(1),
            "{what}: a worker waiting on others' leases polls again soon, not in {:?}",
            at.saturating_duration_since(Instant::now())
        ),
        other => panic!("{what}: expected Readiness::At (poll soon), got {other:?}"),
    }
}

/// Sends one call of the frontier's function, with the arguments laid out as `frontier.lua`
/// reads them (op, incarnation, no crawl id (a call from outside a crawl), no slots given
/// back, no requests handed back, no host adjustments, no counters, the op's own).
/// The library is loaded under a test name of its own.
pub fn script_call(redis: &Redis, crawl: &str, op: &str, inc: &str, args: &[&str]) -> String {
    let library = format!(
        "#!lua name=kumo_test\n{}",
        include_str!("../../../src/frontier.lua").replace("KUMO_FN", "kumo_test")
    );
    let loaded = redis.command(&["FUNCTION", "LOAD", "REPLACE", &library]).expect("FUNCTION LOAD");
    assert!(!loaded.starts_with('-'), "FUNCTION LOAD: {loaded}");
    let prefix = format!("kumo:{{{crawl}}}:");
    let mut all = vec!["FCALL", "kumo_test", "1", &prefix, op, inc, "", "0", "0", "0", "0"];
    all.extend_from_slice(args);
    let reply = redis.command(&all).expect("FCALL");
    assert!(!reply.starts_with('-'), "{op}: {reply}");
    reply
}
