//! The conformance suite every frontier backend passes, against a real `redis-server`
//! started for this test on a free port (all but the per-IP checks: `--redis` refuses
//! `--per-ip` until its frontier keeps addresses).

use std::sync::atomic::{AtomicUsize, Ordering};

use kumo_frontier::conformance::{self, SuiteConfig};
use kumo_store_redis::{RedisConfig, RedisFrontier};
use kumo_testsite::services::Redis;

static CRAWLS: AtomicUsize = AtomicUsize::new(0);

/// Opens a frontier from inside the test's runtime (the suite's factories are synchronous).
fn open(cfg: RedisConfig) -> RedisFrontier {
    tokio::task::block_in_place(|| {
        tokio::runtime::Handle::current().block_on(RedisFrontier::open(cfg)).expect("open the Redis frontier")
    })
}

fn config(url: &str, crawl: &str, suite: SuiteConfig) -> RedisConfig {
    let mut cfg = RedisConfig::new(url, crawl, "tester");
    cfg.politeness = suite.politeness;
    cfg.lease_ttl = suite.lease_ttl;
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_frontier_passes_the_conformance_suite() {
    let redis = Redis::start().await.expect("start redis-server");
    let url = redis.url();
    conformance::run_all(|suite| {
        let crawl = format!("conformance-{}", CRAWLS.fetch_add(1, Ordering::Relaxed));
        open(config(&url, &crawl, suite))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_frontier_survives_a_worker_restart() {
    let redis = Redis::start().await.expect("start redis-server");
    let url = redis.unix_url();
    conformance::survives_reopen(|| {
        let suite = SuiteConfig {
            politeness: kumo_frontier::Politeness::default(),
            lease_ttl: std::time::Duration::from_secs(600),
        };
        open(config(&url, "reopen", suite))
    })
    .await;
}
