//! Each worker's item journal in Redis: numbered items trimmed by checkpoints and resumed by a
//! restarted worker, and its checkpoints folded into one, at resume and while it runs.

use crate::common;

use common::*;
use kumo_core::Item;
use kumo_frontier::{Commit, Completion, Frontier};
use kumo_pipeline::{ItemJournal, PipelineCheckpoint};

// 4 ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_item_journal_numbers_trims_and_resumes() {
    let redis = start_redis().await;
    let w = open(config(&redis, "journal", "w")).await;
    w.push(requests(4)).await.expect("push");
    let leases = w.lease(4).await.expect("lease");
    assert_eq!(leases.len(), 4);

    let mut journaled = Vec::new();
    let mut last = 0;
    for (i, lease) in leases[..3].iter().enumerate() {
        let items: Vec<Item> = (0..=i).map(|n| item(&url_of(lease), n)).collect();
        let n = items.len();
        let report = w
            .commit(Commit {
                completions: vec![done(lease.id)],
                items: items.clone(),
                item_sources: vec![(lease.id, n)],
                ..Default::default()
            })
            .await
            .expect("commit");
        let to = report.journaled_to.expect("a commit with items says where they were journaled");
        assert_eq!(to, last + n as u64, "journal numbers increase by the commit's items");
        assert_eq!(report.items, items, "the items are handed back in order");
        last = to;
        journaled.extend(items);
    }
    let report = w
        .commit(Commit { completions: vec![done(leases[3].id)], ..Default::default() })
        .await
        .expect("commit");
    assert_eq!(report.journaled_to, None, "a commit without items journals nothing");

    let numbered: Vec<(u64, Item)> = (1..).zip(journaled.iter().cloned()).collect();
    let r = w.resume_point().await.expect("resume point");
    assert_eq!((r.upto, r.pipeline.is_some()), (0, false), "no checkpoint yet");
    assert_eq!(r.pending, numbered, "every journaled item is pending, numbered from 1");

    w.checkpoint(3, PipelineCheckpoint::default()).await.expect("checkpoint");
    let r = w.resume_point().await.expect("resume point");
    assert_eq!(r.upto, 3, "the checkpoint moves the resume point");
    assert!(r.pipeline.is_some(), "the checkpoint is given back");
    assert_eq!(r.pending, numbered[3..].to_vec(), "items up to the checkpoint are trimmed");

    // The same worker name, a new process: it resumes from the checkpoint.
    drop(w);
    let w = open(config(&redis, "journal", "w")).await;
    let r = w.resume_point().await.expect("resume point after a restart");
    assert_eq!(r.upto, 3, "a restarted worker resumes at its checkpoint");
    assert!(r.pipeline.is_some(), "a restarted worker gets its checkpoint back");
    assert_eq!(r.pending, numbered[3..].to_vec(), "only the items after the checkpoint are pending");

    // Its numbers go on from where the journal stood, never reusing one.
    w.push(vec![req("http://h0.test/after-restart")]).await.expect("push");
    let more = w.lease(1).await.expect("lease");
    assert_eq!(more.len(), 1);
    let report = w
        .commit(Commit {
            completions: vec![done(more[0].id)],
            items: vec![item("after", 0)],
            item_sources: vec![(more[0].id, 1)],
            ..Default::default()
        })
        .await
        .expect("commit");
    assert_eq!(report.journaled_to, Some(last + 1), "journal numbers go on after a restart");

    // Another worker's journal is its own.
    let other = open(config(&redis, "journal", "other")).await;
    let r = other.resume_point().await.expect("resume point");
    assert_eq!((r.upto, r.pending.len(), r.pipeline.is_some()), (0, 0, false), "journals are per worker");
}

/// A worker's checkpoints are folded into one when it resumes, so their list stays short
/// however long the worker runs, and the folded one resumes to the same point.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_fold_into_one_at_resume() {
    use kumo_pipeline::{SinkCheckpoint, StateEntry};
    let redis = start_redis().await;
    let w = open(config(&redis, "fold", "w")).await;
    let cp = |offset: u64, key: u8| PipelineCheckpoint {
        processors: vec![StateEntry { processor: 0, data: vec![key] }],
        sinks: vec![SinkCheckpoint {
            offset: Some(offset),
            state: vec![StateEntry { processor: 1, data: vec![key] }],
            file: None,
        }],
    };
    for (i, offset) in [10u64, 20, 30].into_iter().enumerate() {
        w.checkpoint(0, cp(offset, i as u8)).await.expect("checkpoint");
    }
    assert_eq!(redis.command(&["LLEN", "kumo:{fold}:cp:w"]).expect("LLEN"), "3");
    let before = w.resume_point().await.expect("resume point").pipeline.expect("checkpoints");
    assert_eq!(redis.command(&["LLEN", "kumo:{fold}:cp:w"]).expect("LLEN"), "1", "folded into one");
    let after = w.resume_point().await.expect("resume point").pipeline.expect("checkpoints");
    assert_eq!(after, before, "the folded checkpoint resumes to the same point");
    assert_eq!(after.sinks[0].offset, Some(30), "the last offset");
    assert_eq!(after.processors.len(), 3, "every state entry");
}

/// While a worker runs, its checkpoints are folded too (every 256), so a worker that never
/// restarts does not grow them without end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_fold_while_the_worker_runs() {
    use kumo_pipeline::{SinkCheckpoint, StateEntry};
    let redis = start_redis().await;
    let w = open(config(&redis, "fold-run", "w")).await;
    // The pipeline reads its resume point first, as the engine does.
    assert!(w.resume_point().await.expect("resume point").pipeline.is_none());
    for i in 0..300u64 {
        let cp = PipelineCheckpoint {
            processors: vec![StateEntry { processor: 0, data: i.to_le_bytes().to_vec() }],
            sinks: vec![SinkCheckpoint { offset: Some(i), state: vec![], file: None }],
        };
        w.checkpoint(0, cp).await.expect("checkpoint");
    }
    let len: usize =
        redis.command(&["LLEN", "kumo:{fold-run}:cp:w"]).expect("LLEN").parse().expect("a number");
    assert!(len < 256, "folded on the way: {len} entries for 300 checkpoints");
    let r = w.resume_point().await.expect("resume point").pipeline.expect("checkpoints");
    assert_eq!(r.sinks[0].offset, Some(299), "the last offset");
    assert_eq!(r.processors.len(), 300, "every state entry, once");
}

/// A commit's counters are saved by the commit's own call (they say where the worker's WARC
/// files end, which must not lag behind the pages it completes): a worker killed right after
/// a commit resumes with them. The exact ones, with what the commit saw, follow on the next
/// call. A process another took over never overwrites the new one's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commits_counters_are_saved_with_it() {
    use kumo_frontier::{CountersFn, PushReport};
    let redis = start_redis().await;
    let counters = |step: &'static str| -> CountersFn {
        Box::new(move |pushed: &PushReport| format!("{step} seen {}", pushed.seen).into_bytes())
    };
    let w = open(config(&redis, "counters", "w")).await;
    w.push(requests(2)).await.expect("push");
    let leases = w.lease(2).await.expect("lease");
    let discovered = vec![requests(1)[0].clone()];
    let completion = Completion::Done { lease: leases[0].id, discovered, page: None };
    w.commit(Commit {
        completions: vec![completion],
        counters: Some(counters("first")),
        ..Default::default()
    })
    .await
    .expect("commit");
    // Killed here: no other call of this process reaches Redis.
    let saved = |f: kumo_store_redis::RedisFrontier| async move {
        String::from_utf8(f.saved_counters().await.unwrap().unwrap()).unwrap()
    };
    let after_kill = open(config(&redis, "counters", "w")).await;
    assert_eq!(saved(after_kill).await, "first seen 0", "saved by the commit, before its seen checks");

    let w = open(config(&redis, "counters", "w")).await;
    w.push(requests(2)).await.expect("push");
    let leases = w.lease(1).await.expect("lease");
    let discovered = vec![requests(1)[0].clone()];
    let completion = Completion::Done { lease: leases[0].id, discovered, page: None };
    w.commit(Commit {
        completions: vec![completion],
        counters: Some(counters("second")),
        ..Default::default()
    })
    .await
    .expect("commit");
    w.stats().await.expect("a call after the commit");
    assert_eq!(
        String::from_utf8(w.saved_counters().await.unwrap().unwrap()).unwrap(),
        "second seen 1",
        "the next call saves the exact ones"
    );

    w.push(vec![req("http://h9.test/late")]).await.expect("push");
    let leases = w.lease(1).await.expect("lease");
    let new = open(config(&redis, "counters", "w")).await;
    let completion = Completion::Done { lease: leases[0].id, discovered: vec![], page: None };
    w.commit(Commit {
        completions: vec![completion],
        counters: Some(counters("stale")),
        ..Default::default()
    })
    .await
    .expect_err("the superseded process's commit is refused");
    assert_eq!(saved(new).await, "second seen 1", "nor are its counters saved");
}
