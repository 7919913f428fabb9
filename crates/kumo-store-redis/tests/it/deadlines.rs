//! The hard lease deadline (`lease_ttl`), the last resort behind heartbeats: it is kept per
//! lease call's batch of leases, so a lease past it comes back, one completed in time does not,
//! and a batch leaves no key behind once all its leases have ended.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kumo_frontier::{Commit, Frontier};

use crate::common;
use common::*;

fn card(redis: &kumo_testsite::services::Redis, cmd: &str, key: &str) -> u64 {
    redis.command(&[cmd, key]).expect(cmd).trim().parse().unwrap_or_else(|_| panic!("{cmd} {key}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_past_their_deadline_come_back_and_an_ended_batch_leaves_nothing() {
    let redis = start_redis().await;
    let mut cfg = config(&redis, "ttl", "a");
    cfg.lease_ttl = Duration::from_millis(400);
    let a = open(cfg).await;
    a.push(requests(3)).await.expect("push");
    let held = a.lease(10).await.expect("lease");
    assert_eq!(held.len(), 3, "one lease call hands out all three");
    let (dl, dn) = ("kumo:{ttl}:dl", "kumo:{ttl}:dn");
    assert_eq!(card(&redis, "ZCARD", dl), 1, "one deadline for the call's batch");

    // One completes in time; the batch still has two out.
    let report =
        a.commit(Commit { completions: vec![done(held[0].id)], ..Default::default() }).await.expect("commit");
    assert_eq!(report.stale, 0);
    assert_eq!(card(&redis, "ZCARD", dl), 1, "the batch keeps its deadline while leases are out");

    // Past the deadline, the other two come back (the reaper runs with lease calls).
    let expected: BTreeSet<String> = held[1..].iter().map(url_of).collect();
    let started = Instant::now();
    let mut back = Vec::new();
    while back.len() < 2 && started.elapsed() < COME_BACK_WITHIN {
        back.extend(a.lease(10).await.expect("lease"));
        tokio::time::sleep(POLL).await;
    }
    let got: BTreeSet<String> = back.iter().map(url_of).collect();
    assert_eq!(got, expected, "exactly the leases not completed come back");

    // The old leases are gone: completing one is stale. The new ones complete.
    let late =
        a.commit(Commit { completions: vec![done(held[1].id)], ..Default::default() }).await.expect("commit");
    assert_eq!(late.stale, 1, "a lease past its deadline can no longer be completed");
    complete_all(&a, &back).await;
    assert!(a.stats().await.expect("stats").is_drained());
    assert_eq!(
        card(&redis, "ZCARD", dl),
        0,
        "no deadline left: {}",
        redis.command(&["ZRANGE", dl, "0", "-1"]).unwrap()
    );
    assert_eq!(card(&redis, "HLEN", dn), 0, "no batch count left");
}
