//! A crawl whose keys vanish from Redis (a restart without persistence, a flush) stops its
//! workers with an error that says so, on every path (lease, commit, item journal, heartbeat),
//! and no worker writes a key of it again on its own; a crawl cleared by `--fresh` is told
//! apart from one that vanished, and a worker taken over by another process from both.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use kumo_frontier::{Commit, Frontier, FrontierError};
use kumo_pipeline::{ItemJournal, PipelineCheckpoint};
use kumo_store_redis::{Joined, RedisFrontier, RedisStoreError, StateGone};
use kumo_testsite::services::{Redis, RedisOptions};

/// The crawl's keys in Redis (the function library is no key).
fn keys(redis: &Redis, crawl: &str) -> String {
    redis.command(&["KEYS", &format!("kumo:{{{crawl}}}:*")]).expect("KEYS")
}

/// Waits (at most 5 s) until the worker learns, from its heartbeat alone, that it is out of its
/// crawl.
async fn out_of_crawl(w: &RedisFrontier) -> RedisStoreError {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(e) = w.out_of_crawl() {
            return e;
        }
        assert!(Instant::now() < deadline, "the heartbeat never found the crawl gone");
        tokio::time::sleep(POLL).await;
    }
}

fn is_lost(e: &FrontierError) -> bool {
    matches!(e, FrontierError::StateLost(_)) && StateGone::in_message(&e.to_string()) == Some(StateGone::Lost)
}

/// A worker whose heartbeat beats 12 s apart, none before the test ends: what it learns, its
/// own calls learn.
async fn quiet(redis: &Redis, crawl: &str, worker: &str) -> RedisFrontier {
    let mut cfg = config(redis, crawl, worker);
    cfg.dead_after = Duration::from_secs(60);
    open(cfg).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_that_vanish_in_a_restart_stop_every_path_and_are_never_written_again() {
    let mut redis = Redis::start_with(RedisOptions { appendonly: false, ..Default::default() })
        .await
        .expect("start redis-server without persistence");
    let leaser = quiet(&redis, "gone", "leaser").await;
    assert_eq!(leaser.joined(), Joined::New, "the first worker starts the crawl");
    let committer = quiet(&redis, "gone", "committer").await;
    assert_eq!(committer.joined(), Joined::Existing, "the second joins it");
    let writer = quiet(&redis, "gone", "writer").await;
    let beating = open(config(&redis, "gone", "beating")).await;
    committer.push(requests(8)).await.expect("push");

    redis.kill().expect("kill redis-server");
    redis.restart().await.expect("redis-server restarts, empty");
    assert_eq!(keys(&redis, "gone"), "", "nothing survived the restart");

    // The lease path: a typed error that names the loss.
    let e = leaser.lease(4).await.expect_err("a worker whose crawl vanished leases nothing");
    assert!(is_lost(&e), "the lease says the crawl's state vanished: {e:?}");
    assert!(e.to_string().contains("crawl \"gone\""), "and names the crawl: {e}");
    // The commit path.
    let commit = Commit { pushes: requests(1), ..Default::default() };
    let e = committer.commit(commit).await.expect_err("a commit into a vanished crawl is refused");
    assert!(is_lost(&e), "the commit says the crawl's state vanished: {e:?}");
    // The item journal.
    let e =
        writer.checkpoint(1, PipelineCheckpoint::default()).await.expect_err("no checkpoint into nothing");
    assert_eq!(StateGone::in_message(&e.to_string()), Some(StateGone::Lost), "{e}");
    // The heartbeat, on a worker that calls nothing.
    let e = out_of_crawl(&beating).await;
    assert!(matches!(e, RedisStoreError::StateLost(_)), "the heartbeat's finding: {e:?}");
    // Going on never brings the crawl back: calls fail without writing.
    for w in [&leaser, &committer, &writer, &beating] {
        assert!(is_lost(&w.stats().await.expect_err("stats")), "every later call fails the same way");
        w.leave().await.expect("a worker out of its crawl leaves quietly");
    }
    assert_eq!(keys(&redis, "gone"), "", "no worker wrote a key of the vanished crawl");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_is_a_loss_even_once_a_new_crawl_of_the_name_started() {
    let redis = start_redis().await;
    let old = quiet(&redis, "again", "old").await;
    old.push(requests(2)).await.expect("push");
    assert_eq!(redis.command(&["FLUSHALL"]).expect("FLUSHALL"), "OK");
    let new = open(config(&redis, "again", "new")).await;
    assert_eq!(new.joined(), Joined::New, "Redis held no key of the crawl: a new one starts");
    let e = old.lease(1).await.expect_err("the old crawl's worker stops");
    assert!(is_lost(&e), "its crawl vanished, whatever started since under its name: {e:?}");
    assert!(new.lease(1).await.expect("the new crawl goes on").is_empty(), "and holds nothing of the old");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_cleared_by_fresh_is_not_called_lost() {
    let redis = start_redis().await;
    // No beat before the test ends: the test says when the workers are dead.
    let away = quiet(&redis, "cleared", "away").await;
    let later = quiet(&redis, "cleared", "later").await;
    for w in [&away, &later] {
        let alive = "kumo:{cleared}:alive";
        redis.command(&["ZADD", alive, "0", w.incarnation()]).expect("ZADD");
    }
    let cleared = RedisFrontier::forget(&redis.url(), "cleared").await.expect("--fresh with no live worker");
    assert!(cleared > 0, "--fresh deleted the crawl's keys");

    let e = away.lease(1).await.expect_err("a worker of the cleared crawl stops");
    assert!(matches!(e, FrontierError::StateLost(_)), "a typed error: {e:?}");
    assert_eq!(StateGone::in_message(&e.to_string()), Some(StateGone::Cleared), "says --fresh: {e}");
    assert!(e.to_string().contains("--fresh"), "{e}");

    let fresh = open(config(&redis, "cleared", "fresh")).await;
    assert_eq!(fresh.joined(), Joined::AfterFresh, "the crawl starts again after --fresh");
    let e = later.lease(1).await.expect_err("a worker of the cleared crawl stops, after a new one began too");
    assert_eq!(StateGone::in_message(&e.to_string()), Some(StateGone::Cleared), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_taken_over_is_neither_lost_nor_cleared() {
    let redis = start_redis().await;
    let first = quiet(&redis, "takeover", "w").await;
    let _second = open(config(&redis, "takeover", "w")).await;
    let e = first.lease(1).await.expect_err("the process taken over stops");
    assert!(matches!(e, FrontierError::Storage(_)), "{e:?}");
    assert!(e.to_string().contains("took over"), "{e}");
    assert_eq!(StateGone::in_message(&e.to_string()), None, "nothing was lost: {e}");
}
