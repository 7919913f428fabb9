//! Workers lease ahead (a reserve per host, started as their slots of the host free up):
//! they split a busy host's slots, never run more at once than its parallelism, and hand their
//! reserve back when another worker learns the host must pause. Against a real `redis-server`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use kumo_frontier::{Frontier, HostAdjustment, HostPolicy, Lease, Politeness};
use kumo_store_redis::RedisFrontier;

use crate::common;
use common::*;

fn at_most(parallelism: u32) -> Politeness {
    Politeness { default: HostPolicy { parallelism, ..Default::default() }, ..Default::default() }
}

fn one_host(n: usize, host: &str) -> Vec<(kumo_core::Fingerprint, kumo_core::Request)> {
    (0..n).map(|i| req(&format!("http://{host}/{i}"))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_split_a_busy_host_and_never_exceed_its_parallelism() {
    let redis = start_redis().await;
    let open_worker = |name: &str| {
        let mut cfg = config(&redis, "busy", name);
        cfg.politeness = at_most(8);
        open(cfg)
    };
    let (a, b) = (open_worker("a").await, open_worker("b").await);
    a.push(one_host(200, "busy.test")).await.expect("push");

    let mut running: [Vec<Lease>; 2] = [Vec::new(), Vec::new()];
    let mut ran: HashMap<String, usize> = HashMap::new();
    let mut most = [0usize; 2];
    let deadline = Instant::now() + Duration::from_secs(30);
    for round in 0..2_000 {
        assert!(Instant::now() < deadline, "the crawl ends in time (round {round})");
        let mut got_any = false;
        for (i, w) in [&a, &b].into_iter().enumerate() {
            let got = w.lease(64).await.expect("lease");
            got_any |= !got.is_empty();
            for l in &got {
                *ran.entry(url_of(l)).or_default() += 1;
            }
            running[i].extend(got);
            most[i] = most[i].max(running[i].len());
            assert!(running[i].len() <= 4, "a worker holds at most its share (4 of 8): {}", running[i].len());
        }
        assert!(running[0].len() + running[1].len() <= 8, "never more than the host's 8 at once");
        // Each worker finishes half of what runs (at least one), as pages come back.
        for (i, w) in [&a, &b].into_iter().enumerate() {
            let n = running[i].len().div_ceil(2);
            let finished: Vec<Lease> = running[i].drain(..n).collect();
            complete_all(w, &finished).await;
        }
        if !got_any && running.iter().all(Vec::is_empty) && ran.len() == 200 {
            break;
        }
    }
    assert_eq!(ran.len(), 200, "every request ran");
    assert!(ran.values().all(|&n| n == 1), "no request ran twice");
    assert!(most.iter().all(|&m| m > 0), "both workers took part: {most:?}");
    for w in [&a, &b] {
        assert!(w.stats().await.expect("stats").is_drained());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_learned_by_one_worker_empties_the_others_reserve() {
    let redis = start_redis().await;
    let mut cfg = config(&redis, "paused", "a");
    cfg.politeness = at_most(8);
    let a = open(cfg.clone()).await;
    cfg.worker = "b".into();
    let b: RedisFrontier = open(cfg).await;
    a.push(one_host(100, "p.test")).await.expect("push");
    let first = a.lease(1).await.expect("lease");
    assert_eq!(first.len(), 1);
    let out = redis.command(&["HGET", "kumo:{paused}:stats", "leased"]).expect("HGET");
    assert!(out.parse::<usize>().unwrap() > 1, "A leased ahead of what it started: {out}");

    // B's page of that host answered 429: B pauses the host for the whole crawl.
    let day = HostAdjustment { pause: Some(Duration::from_secs(86_400)), ..Default::default() };
    b.adjust_host("p.test", day).await.expect("adjust");
    // A's page completes; the commit tells A the crawl's politeness moved.
    complete_all(&a, &first).await;
    assert!(a.lease(64).await.expect("lease").is_empty(), "A starts nothing at a paused host");
    let s = a.stats().await.expect("stats");
    assert_eq!((s.queued, s.leased), (99, 0), "A's reserve went back to the queue");
    let back: HashSet<String> = redis
        .command(&["LRANGE", "kumo:{paused}:q:p.test:0", "0", "-1"])
        .expect("LRANGE")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(back.len(), 99, "each request once in the queue");
    assert!(b.lease(64).await.expect("lease").is_empty(), "nor does B");
}

/// A worker that joins while another holds every slot of a busy host gets its share: the
/// holder runs no more than its new share and gives each extra slot back as its page ends,
/// never letting the two run more than the host's parallelism at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_joining_a_busy_host_gets_its_share_of_the_slots() {
    let redis = start_redis().await;
    let mut cfg = config(&redis, "joined", "a");
    cfg.politeness = at_most(8);
    let a = open(cfg.clone()).await;
    a.push(one_host(400, "busy.test")).await.expect("push");
    let first = a.lease(64).await.expect("lease");
    assert_eq!(first.len(), 8, "alone, A runs all 8 slots");
    cfg.worker = "b".into();
    let b = open(cfg).await;

    let mut running: [Vec<Lease>; 2] = [first, Vec::new()];
    let mut ran: HashMap<String, usize> = running[0].iter().map(|l| (url_of(l), 1)).collect();
    let mut split = None;
    let deadline = Instant::now() + Duration::from_secs(30);
    for round in 0..2_000 {
        assert!(Instant::now() < deadline, "the crawl ends in time (round {round})");
        // Each worker's oldest page ends, then each asks for more.
        let mut got_any = false;
        for (i, w) in [&a, &b].into_iter().enumerate() {
            if !running[i].is_empty() {
                let ended = running[i].remove(0);
                complete_all(w, &[ended]).await;
            }
            let got = w.lease(64).await.expect("lease");
            got_any |= !got.is_empty();
            for l in &got {
                *ran.entry(url_of(l)).or_default() += 1;
            }
            running[i].extend(got);
            assert!(running[0].len() + running[1].len() <= 8, "never more than the host's 8 at once");
        }
        if split.is_none() && running[1].len() == 4 && running[0].len() == 4 {
            split = Some(round);
        }
        if !got_any && running.iter().all(Vec::is_empty) && ran.len() == 400 {
            break;
        }
        if !got_any {
            tokio::time::sleep(POLL).await; // what a worker was told to wait for is time
        }
    }
    assert!(split.is_some(), "B came to run 4 of the host's 8 and A the other 4");
    assert_eq!(ran.len(), 400, "every request ran");
    assert!(ran.values().all(|&n| n == 1), "no request ran twice");
}
