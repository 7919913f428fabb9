//! What only a shared backend must do: several workers crawling as one through one Redis,
//! workers dying and coming back, zombies, Redis restarting under a crawl, and the servers and
//! crawls a worker must refuse (the item journal: `journal.rs`). Each test runs its own
//! `redis-server` (a free port, an append-only file fsynced before every reply).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_core::Item;
use kumo_frontier::{Commit, Completion, Frontier, Readiness};
use kumo_pipeline::ItemJournal;
use kumo_store_redis::RedisFrontier;
use kumo_testsite::services::{Redis, RedisOptions};

use crate::common;
use common::*;

// 1 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_one_crawl() {
    let redis = start_redis().await;
    let a = open(config(&redis, "shared", "a")).await;
    let b = open(config(&redis, "shared", "b")).await;

    let pushed = requests(20);
    let all: HashSet<String> = pushed.iter().map(|(_, r)| r.url.to_string()).collect();
    let report = a.push(pushed).await.expect("A pushes");
    assert_eq!(report.added, 20, "A's pushes are queued");
    assert_eq!(
        b.push(requests(20)).await.expect("B pushes").added,
        0,
        "the seen set is shared: B's same URLs are seen"
    );

    let b_first = b.lease(5).await.expect("B leases");
    assert_eq!(b_first.len(), 5, "B leases what A pushed");
    // B leased ahead of what it started (its reserve): B counts that as queued, A as out.
    for (who, f) in [("A", &a), ("B", &b)] {
        let s = f.stats().await.expect("stats");
        assert_eq!(s.queued + s.leased, 20, "stats are global: {who} counts every request once");
    }
    assert_eq!(b.stats().await.expect("stats").leased, 5, "B's own count: what it started");
    assert!(a.stats().await.expect("stats").leased >= 5, "A sees B's leases out");
    let a_first = a.lease(3).await.expect("A leases");
    assert_eq!(a_first.len(), 3, "A leases from the same queue");

    // Both lease at once until nothing is left.
    let mut a_leases = a_first;
    let mut b_leases = b_first;
    for _ in 0..50 {
        let (ra, rb) = tokio::join!(a.lease(2), b.lease(2));
        let (ra, rb) = (ra.expect("A leases"), rb.expect("B leases"));
        if ra.is_empty() && rb.is_empty() {
            break;
        }
        a_leases.extend(ra);
        b_leases.extend(rb);
    }
    let a_urls: HashSet<String> = a_leases.iter().map(url_of).collect();
    let b_urls: HashSet<String> = b_leases.iter().map(url_of).collect();
    assert_eq!(a_urls.len(), a_leases.len(), "no request is handed to A twice");
    assert_eq!(b_urls.len(), b_leases.len(), "no request is handed to B twice");
    let both: Vec<_> = a_urls.intersection(&b_urls).collect();
    assert!(both.is_empty(), "no request is handed to both workers: {both:?}");
    let union: HashSet<String> = a_urls.union(&b_urls).cloned().collect();
    assert_eq!(union, all, "between them the workers lease every pushed request");
    for (who, f) in [("A", &a), ("B", &b)] {
        let s = f.stats().await.expect("stats");
        assert_eq!((s.queued, s.leased), (0, 20), "stats are global: {who} sees every lease out");
    }

    // B is done with its own; A still holds some: B must poll again soon, not stop.
    complete_all(&b, &b_leases).await;
    assert!(!a_leases.is_empty(), "A holds leases");
    let s = b.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (0, a_leases.len()), "B sees A's leases still out");
    assert!(b.lease(10).await.expect("B leases").is_empty(), "B gets none of A's live leases");
    // Asked right after a lease, readiness is the one that lease learned (it is reused for
    // 2 ms): asked here, not after A's commit below, which it would predate.
    assert_polls_soon(b.readiness().await.expect("readiness"), "B, with no leases while A holds some");

    complete_all(&a, &a_leases).await;
    for (who, f) in [("A", &a), ("B", &b)] {
        assert_eq!(
            f.readiness().await.expect("readiness"),
            Readiness::Empty,
            "{who}: the crawl is empty once every lease is completed"
        );
        assert!(f.stats().await.expect("stats").is_drained(), "{who} sees the crawl drained");
    }
}

/// A worker given nothing while another holds the crawl's work asks again within milliseconds
/// (so it starts as soon as the other's pages bring links, and sees the crawl end at once),
/// then less and less often, at most every 100 ms; given work again, it is quick again once
/// that is done. A worker holding leases asks every 100 ms at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_left_without_work_asks_again_soon_then_backs_off() {
    let redis = start_redis().await;
    let a = open(config(&redis, "backoff", "a")).await;
    let b = open(config(&redis, "backoff", "b")).await;
    a.push(requests(2)).await.expect("push");
    let held = a.lease(10).await.expect("A leases");
    assert_eq!(held.len(), 2, "A holds all the work");
    let ms = |f: &RedisFrontier| f.poll_interval().expect("a shared frontier polls").as_millis();
    assert_eq!(
        ms(&a),
        100,
        "a worker with leases asks at most every 100 ms: its reserve and commits bring it more"
    );
    assert_eq!(ms(&b), 5, "a worker that has asked nothing yet would ask again after 5 ms");
    let mut waits = Vec::new();
    // Bounded: eight answers, each waited out (at most 100 ms).
    for _ in 0..8 {
        assert!(b.lease(10).await.expect("B leases").is_empty(), "B gets none of A's leases");
        waits.push(ms(&b));
        tokio::time::sleep(b.poll_interval().expect("poll")).await;
    }
    assert_eq!(
        waits,
        [10, 20, 40, 80, 100, 100, 100, 100],
        "each empty answer doubles the wait, up to 100 ms"
    );

    // Work again: the next answer that hands B some makes it quick again.
    a.push(vec![req("http://h0.test/more/1"), req("http://h1.test/more/2")]).await.expect("push more");
    let got = b.lease(10).await.expect("B leases");
    assert!(!got.is_empty(), "B gets the new work");
    complete_all(&b, &got).await;
    assert_eq!(ms(&b), 5, "a worker given work asks within milliseconds again once it runs out");
    complete_all(&a, &held).await;
}

// 2 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_workers_leases_come_back_after_dead_after() {
    let redis = start_redis().await;
    let a = open(config(&redis, "dead", "a")).await;
    let b = open(config(&redis, "dead", "b")).await;
    a.push(requests(6)).await.expect("push");
    let held = a.lease(4).await.expect("A leases");
    assert_eq!(held.len(), 4);
    let held_urls = urls(&held);
    let rest = b.lease(10).await.expect("B leases the rest");
    assert_eq!(rest.len(), 2);

    let inc = a.incarnation().to_string();
    drop(a); // its heartbeat stops
    let beat = last_beat_ms(&redis, "dead", &inc);
    assert!(b.lease(10).await.expect("lease").is_empty(), "a worker that just stopped keeps its leases");

    let started = Instant::now();
    let mut back = Vec::new();
    while started.elapsed() < COME_BACK_WITHIN {
        back = b.lease(10).await.expect("lease");
        if !back.is_empty() {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let now = redis_now_ms(&redis);
    assert!(!back.is_empty(), "a dead worker's leases come back within {COME_BACK_WITHIN:?}");
    assert!(
        now.saturating_sub(beat) >= DEAD_AFTER.as_millis() as u64,
        "leases come back only dead_after ({DEAD_AFTER:?}) after the last heartbeat, not {} ms after it",
        now.saturating_sub(beat)
    );
    assert_eq!(urls(&back), held_urls, "the dead worker's requests are handed out again, all of them");
    let s = b.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (0, 6), "requeued leases are counted once");
    complete_all(&b, &back).await;
    complete_all(&b, &rest).await;
    assert!(b.stats().await.expect("stats").is_drained());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_workers_leases_stay_out() {
    let redis = start_redis().await;
    let a = open(config(&redis, "live", "a")).await;
    let b = open(config(&redis, "live", "b")).await;
    a.push(requests(3)).await.expect("push");
    let held = a.lease(10).await.expect("A leases");
    assert_eq!(held.len(), 3);

    // Twice dead_after of B asking (and so reaping) while A heartbeats.
    let started = Instant::now();
    let mut polls = 0;
    while started.elapsed() < 2 * DEAD_AFTER && polls < 200 {
        let got = b.lease(10).await.expect("lease");
        assert!(
            got.is_empty(),
            "a live worker's leases are not handed out again ({:?} after they were leased): {:?}",
            started.elapsed(),
            urls(&got)
        );
        polls += 1;
        tokio::time::sleep(POLL).await;
    }
    assert_polls_soon(b.readiness().await.expect("readiness"), "B, while A holds every lease");
    let report = a
        .commit(Commit { completions: held.iter().map(|l| done(l.id)).collect(), ..Default::default() })
        .await
        .expect("A commits");
    assert_eq!(report.stale, 0, "a live worker's leases are still its own after 2 × dead_after");
    assert!(a.stats().await.expect("stats").is_drained());
}

// 3 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombies_commit_is_stale_and_its_items_dropped() {
    let redis = start_redis().await;
    // A's heartbeat is slow (12 s apart), so it cannot refresh the heartbeat this test ages
    // between the aging and B's lease.
    let mut cfg_a = config(&redis, "zombie", "a");
    cfg_a.dead_after = Duration::from_secs(60);
    let a = open(cfg_a).await;
    let b = open(config(&redis, "zombie", "b")).await;
    a.push(vec![req("http://z.test/page")]).await.expect("push");
    let a_leases = a.lease(1).await.expect("A leases");
    assert_eq!(a_leases.len(), 1);

    // A's heartbeat looks ancient: A is dead for everyone else, though it goes on.
    let aged = redis.command(&["ZADD", "kumo:{zombie}:alive", "0", a.incarnation()]).expect("ZADD");
    assert_eq!(aged, "0", "A's heartbeat is updated, not added");
    // The reaper runs at most every 100 ms: poll, bounded.
    let mut b_leases = Vec::new();
    let started = Instant::now();
    while b_leases.is_empty() && started.elapsed() < COME_BACK_WITHIN {
        b_leases = b.lease(1).await.expect("B leases");
        if b_leases.is_empty() {
            tokio::time::sleep(POLL).await;
        }
    }
    assert_eq!(urls(&b_leases), urls(&a_leases), "B gets the page of the dead-looking worker");

    let report = a
        .commit(Commit {
            completions: vec![done(a_leases[0].id)],
            items: vec![item("z.test/page", 1)],
            item_sources: vec![(a_leases[0].id, 1)],
            ..Default::default()
        })
        .await
        .expect("the zombie's commit is answered, not refused");
    assert_eq!(report.stale, 1, "the zombie's completion is stale");
    assert!(report.items.is_empty(), "the zombie's items are dropped: B's commit brings them");
    assert_eq!(report.journaled_to, None, "nothing is journaled for the zombie");
    let s = b.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (0, 1), "the zombie's commit does not complete B's lease");

    let b_item = item("z.test/page", 2);
    let report = b
        .commit(Commit {
            completions: vec![done(b_leases[0].id)],
            items: vec![b_item.clone()],
            item_sources: vec![(b_leases[0].id, 1)],
            ..Default::default()
        })
        .await
        .expect("B commits");
    assert_eq!(report.stale, 0, "B's lease is live");
    assert_eq!(report.items, vec![b_item.clone()], "B's items are handed back");
    assert_eq!(report.journaled_to, Some(1), "B journals the page's item");

    let ra = a.resume_point().await.expect("A's resume point");
    assert!(ra.pending.is_empty(), "the zombie's journal holds nothing: {:?}", ra.pending);
    let rb = b.resume_point().await.expect("B's resume point");
    assert_eq!(rb.pending, vec![(1, b_item)], "B's journal holds the page's item once");
    assert!(b.stats().await.expect("stats").is_drained());
}

// 5 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_survives_a_redis_restart() {
    let mut redis = start_redis().await;
    let mut cfg = config(&redis, "restart", "w");
    // Longer than the outage: this test is about calls waiting Redis out, not heartbeats
    // (see an_outage_longer_than_dead_after_kills_no_worker).
    cfg.dead_after = Duration::from_secs(10);
    let w = Arc::new(open(cfg).await);
    assert_eq!(w.push(requests(50)).await.expect("push").added, 50);
    let leases = w.lease(10).await.expect("lease");
    assert_eq!(leases.len(), 10);
    let (committed, held) = leases.split_at(8);

    redis.kill().expect("kill redis-server");
    let discovered: Vec<_> = (0..5).map(|i| req(&format!("http://found.test/{i}"))).collect();
    let mut completions: Vec<Completion> = committed[1..].iter().map(|l| done(l.id)).collect();
    completions.push(Completion::Done { lease: committed[0].id, discovered, page: None });
    // Items with no page: journaled whatever becomes of leases, so a commit applied twice
    // would journal them twice.
    let items: Vec<Item> = (0..3).map(|n| item("no page", n)).collect();
    let commit = Commit { completions, items: items.clone(), ..Default::default() };
    let task = {
        let w = w.clone();
        tokio::spawn(async move { w.commit(commit).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!task.is_finished(), "a commit while Redis is away waits for it, it does not fail");
    redis.restart().await.expect("restart redis-server");
    let restarted = redis_now_ms(&redis);

    let report = tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the commit finishes once Redis is back")
        .expect("the commit task")
        .unwrap_or_else(|e| panic!("a commit through a restart succeeds: {e}\n{}", redis.log()));
    assert_eq!(report.stale, 0, "the commit's leases survived the restart");
    assert_eq!(report.pushed.added, 5, "the commit's discoveries are queued");
    assert_eq!(report.journaled_to, Some(3), "the commit's items are journaled");

    let s = w.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (45, 2), "the commit is applied exactly once");
    let r = w.resume_point().await.expect("resume point");
    assert_eq!(r.pending, (1..).zip(items).collect::<Vec<_>>(), "the commit's items are journaled once");

    // The heartbeat goes on by itself once Redis is back.
    let started = Instant::now();
    while last_beat_ms(&redis, "restart", w.incarnation()) < restarted {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the heartbeat resumes after a restart (every {:?})",
            Duration::from_secs(2)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let rest = w.lease(100).await.expect("leasing goes on after the restart");
    assert_eq!(rest.len(), 45, "every queued request is leased after the restart, and no held one");
    let held_urls: HashSet<String> = held.iter().map(url_of).collect();
    assert!(rest.iter().all(|l| !held_urls.contains(&url_of(l))), "leases held through the restart stay out");
    let report = w
        .commit(Commit { completions: held.iter().map(|l| done(l.id)).collect(), ..Default::default() })
        .await
        .expect("commit");
    assert_eq!(report.stale, 0, "leases held through a restart are still the worker's own");
    complete_all(&w, &rest).await;
    assert!(w.stats().await.expect("stats").is_drained());
}

// 6 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicting_redis_is_refused() {
    let options = RedisOptions { maxmemory_policy: Some("allkeys-lru".into()), ..Default::default() };
    let redis = Redis::start_with(options).await.expect("start redis-server");
    let e = RedisFrontier::open(config(&redis, "evict", "w"))
        .await
        .expect_err("a Redis that may evict keys is refused");
    let msg = e.to_string();
    assert!(msg.contains("noeviction"), "the refusal says to use noeviction: {msg}");
    assert!(msg.contains("allkeys-lru"), "the refusal names the server's policy: {msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_with_another_configuration_is_refused() {
    let redis = start_redis().await;
    let mut cfg = config(&redis, "configured", "a");
    cfg.config_id = "config-one".into();
    let _a = open(cfg).await;

    let mut cfg = config(&redis, "configured", "b");
    cfg.config_id = "config-two".into();
    let e = RedisFrontier::open(cfg).await.expect_err("a worker with another configuration is refused");
    let msg = e.to_string();
    assert!(
        msg.contains("another configuration"),
        "the refusal says the crawl has another configuration: {msg}"
    );

    let mut cfg = config(&redis, "configured", "c");
    cfg.config_id = "config-one".into();
    let c = open(cfg).await;
    assert_eq!(
        c.push(requests(1)).await.expect("push").added,
        1,
        "a worker with the same configuration joins"
    );
}

// A worker's name -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_restarted_under_its_name_takes_over_at_once() {
    let redis = start_redis().await;
    let old = open(config(&redis, "takeover", "w")).await;
    old.push(requests(3)).await.expect("push");
    let held = old.lease(2).await.expect("lease");
    assert_eq!(held.len(), 2);

    let new = open(config(&redis, "takeover", "w")).await;
    let s = new.stats().await.expect("stats");
    assert_eq!(
        (s.queued, s.leased),
        (3, 0),
        "the previous process's leases go back at once, not after dead_after"
    );
    let got = new.lease(10).await.expect("lease");
    assert_eq!(
        urls(&got),
        request_urls(&requests(3)),
        "the new process gets every request, the old one's included"
    );

    let e = old
        .commit(Commit { completions: vec![done(held[0].id)], ..Default::default() })
        .await
        .expect_err("the superseded process's commit is refused");
    assert!(e.to_string().contains("took over"), "the refusal says another process took over: {e}");
    let e = old.lease(1).await.expect_err("a superseded process stops");
    assert!(e.to_string().contains("took over"), "the refusal says another process took over: {e}");
    complete_all(&new, &got).await;
    assert!(new.stats().await.expect("stats").is_drained());
}

// Retried calls ----------------------------------------------------------------------------------

/// A commit whose reply was lost is sent again with the same sequence number; the worker can't
/// be made to lose a reply from here, so the calls are made by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_commit_is_applied_once() {
    let redis = start_redis().await;
    let (crawl, inc) = ("replay", "0000000000000abc");
    let call = |op: &str, args: &[&str]| script_call(&redis, crawl, op, inc, args);
    call("register", &["raw", "", "1000", "1", "1000|0|0|"]);
    // A discovery: its fingerprint's seen bucket (2 bytes) and the rest, host, rule, level, JSON.
    let page = ["fp", "-0000000000001", "r.test", "0", "0", "{\"page\":1}"];
    let reply = call("commit", &[&["1", "raw", "1"][..], &page, &["0", "0"]].concat());
    // added, seen, stale, journaled to; then the crawl's queued, leased, hosts, failed, its
    // politeness epoch, and when a host is next ready (0: now).
    assert_eq!(reply, "1\n0\n0\n-1\n1\n0\n1\n0\n0\n0\n0", "the page is queued");
    let reply = call("lease", &["raw", "1", "1", "600000", "0", "8", "0"]);
    // readiness (blocked on own leases), epoch, one lease, then the one host's holding: 1 slot,
    // of a share of 1000 (the host's parallelism, one worker).
    let reply = reply.strip_suffix("\n1\nr.test\n1\n1000").unwrap_or_else(|| panic!("holds 1 slot: {reply}"));
    assert!(reply.ends_with("{\"page\":1}"), "the page is leased: {reply}");

    let lease = format!("{inc}:1");
    let found = ["fp", "-0000000000002", "r.test", "0", "0", "{\"page\":2}"];
    let commit = |seq: &str| {
        // A completion: its lease, its page's URL and record (for re-crawls), one discovery.
        let head = [seq, "raw", "0", "1", "D", &lease, "http://r.test/1", "{\"page\":1}", "1"];
        call("commit", &[&head[..], &found, &["1", &lease, "{\"item\":1}"]].concat())
    };
    let first = commit("2");
    assert_eq!(
        first, "1\n0\n0\n1\n1\n0\n1\n0\n0\n0\n0",
        "the commit completes the lease, queues its discovery, journals its item"
    );
    assert_eq!(commit("2"), first, "the same commit sent again gets the same reply");
    let stats = redis.command(&["HMGET", "kumo:{replay}:stats", "queued", "leased"]).expect("HMGET");
    assert_eq!(stats, "1\n0", "a retried commit is applied once (one discovery queued, the lease done)");
    let journal = redis.command(&["LLEN", "kumo:{replay}:j:raw"]).expect("LLEN");
    assert_eq!(journal, "1", "a retried commit journals its items once");
    let record = redis.command(&["HGET", "kumo:{replay}:pg", "http://r.test/1"]).expect("HGET");
    assert_eq!(record, "{\"page\":1}", "the completed page's record is kept");
    // What applying it again would have answered: the lease stale, the discovery seen.
    assert_eq!(
        commit("3"),
        format!("0\n1\n1\n-1\n1\n0\n1\n0\n0\n0\n0\n{lease}"),
        "a new commit of the same lease is stale"
    );
}

// Liveness across an outage, per-worker dead_after, and takeovers ------------------------------------

/// Nobody can heartbeat while Redis is away: an outage longer than `dead_after` must not make
/// every worker look dead (the liveness deadlines move on by the time Redis was silent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_longer_than_dead_after_kills_no_worker() {
    let mut redis = start_redis().await;
    let a = open(config(&redis, "long-outage", "a")).await;
    let b = open(config(&redis, "long-outage", "b")).await;
    a.push(requests(3)).await.expect("push");
    let held = a.lease(10).await.expect("A leases");
    assert_eq!(held.len(), 3);
    redis.kill().expect("kill redis-server");
    // The outage itself: longer than dead_after.
    tokio::time::sleep(DEAD_AFTER + DEAD_AFTER / 2).await;
    redis.restart().await.expect("restart redis-server");
    let got = b.lease(10).await.expect("B leases after the restart");
    assert!(
        got.is_empty(),
        "a live worker's leases stay its own through an outage longer than dead_after: B got {:?}",
        urls(&got)
    );
    let report = a
        .commit(Commit { completions: held.iter().map(|l| done(l.id)).collect(), ..Default::default() })
        .await
        .expect("A commits");
    assert_eq!(report.stale, 0, "a live worker's leases are its own after an outage");
}

/// The reaper judges every worker by the crawl's `dead_after` (the first worker's), while each
/// worker beats at its own `dead_after / 5`: one started with a longer `--dead-after` than the
/// crawl's beats too rarely and loses its leases while alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_with_a_longer_dead_after_keeps_its_leases() {
    let redis = start_redis().await;
    let a = open(config(&redis, "mixed", "a")).await;
    let mut cfg = config(&redis, "mixed", "b");
    cfg.dead_after = 10 * DEAD_AFTER;
    let b = open(cfg).await;
    b.push(requests(3)).await.expect("push");
    assert_eq!(b.lease(10).await.expect("B leases").len(), 3);
    let started = Instant::now();
    let mut polls = 0;
    while started.elapsed() < 3 * DEAD_AFTER && polls < 200 {
        let got = a.lease(10).await.expect("A leases");
        assert!(
            got.is_empty(),
            "a live worker heartbeating at its own pace keeps its leases: A got {:?} after {:?}",
            urls(&got),
            started.elapsed()
        );
        polls += 1;
        tokio::time::sleep(POLL).await;
    }
}

/// A process whose name another process took over can still lease until its heartbeat or a
/// commit tells it; those leases belong to an incarnation no longer in the alive set, so no
/// heartbeat timeout ever brings them back: only `lease_ttl` (10 minutes by default) does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_superseded_process_strands_no_lease() {
    let redis = start_redis().await;
    let old = open(config(&redis, "stranded", "w")).await;
    let new = open(config(&redis, "stranded", "w")).await;
    new.push(requests(3)).await.expect("push");
    let taken = old.lease(10).await.map(|l| l.len()).unwrap_or(0);
    let started = Instant::now();
    let mut back = 0;
    while started.elapsed() < COME_BACK_WITHIN && back < 3 {
        back += new.lease(10).await.expect("lease").len();
        tokio::time::sleep(POLL).await;
    }
    assert_eq!(
        back, 3,
        "every request is leasable by the live process within {COME_BACK_WITHIN:?} \
         (the superseded one took {taken} after the takeover)"
    );
}
