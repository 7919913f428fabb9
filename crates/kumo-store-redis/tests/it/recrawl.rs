//! Re-crawl rounds in Redis (`--recrawl`): a page completed with its record keeps it; a round
//! queues each due page once, whoever queues it; a round whose queuer died part way is
//! finished, then taken up by the next worker that comes with `--recrawl`, which queues only
//! what the dead one had not.

use std::collections::BTreeSet;

use kumo_core::request::host_key;
use kumo_core::{RequestKind, StoredRequest};
use kumo_frontier::{Completion, Frontier, PageRecord};
use kumo_store_redis::{RedisFrontier, RoundStart};

use crate::common;
use common::*;

fn record(url: &str) -> PageRecord {
    let (_, req) = req(url);
    PageRecord {
        request: StoredRequest::from(&req),
        etag: Some(format!("\"{url}\"")),
        last_modified: None,
        hash: 7,
        bytes: 100,
        checked_ms: 1,
        interval_ms: 0,
    }
}

/// Everything `f` can lease (a worker gets its share of a host per call: a few calls).
async fn lease_all(f: &RedisFrontier) -> Vec<kumo_frontier::Lease> {
    let mut all = Vec::new();
    for _ in 0..20 {
        let got = f.lease(100).await.expect("lease");
        if got.is_empty() {
            break;
        }
        all.extend(got);
    }
    all
}

/// Leases everything `f` can have and completes it, each page with its record.
async fn fetch_all(f: &RedisFrontier) -> BTreeSet<String> {
    let leases = lease_all(f).await;
    let got = leases.iter().map(url_of).collect();
    let batch = leases
        .iter()
        .map(|l| Completion::Done {
            lease: l.id,
            discovered: vec![],
            page: Some(Box::new(record(l.request.url.as_str()))),
        })
        .collect();
    f.complete(batch).await.expect("complete");
    got
}

fn queued(r: RoundStart) -> usize {
    match r {
        RoundStart::Queued(r) => r.queued,
        other => panic!("a round queued: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_cut_short_is_taken_up_and_queues_each_page_once() {
    let redis = start_redis().await;
    let a = open(config(&redis, "rc", "a")).await;
    assert_eq!(a.revisit_pages(u64::MAX, true).await.unwrap(), RoundStart::NoRecords, "nothing kept yet");
    let all = requests(10);
    a.push(all.clone()).await.expect("push");
    let first = fetch_all(&a).await;
    assert_eq!(first.len(), 10);
    assert!(a.stats().await.unwrap().is_drained());

    // A queuer opens round 1, queues four pages and dies before the rest.
    let begun = script_call(&redis, "rc", "round_begin", "dead", &["dead", ""]);
    assert_eq!(begun, "0\n1\n0", "round 1 opened");
    let urls: Vec<String> = first.iter().cloned().collect();
    let mut args: Vec<String> = vec!["1".into(), "4".into()];
    for url in &urls[..4] {
        let request = record(url).revisit_request(true);
        let host = host_key(&kumo_core::Url::parse(url).unwrap());
        args.extend([url.clone(), host, "0".into(), "0".into(), serde_json::to_string(&request).unwrap()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(script_call(&redis, "rc", "round_push", "dead", &args), "4");

    // The next worker with --recrawl finds the crawl under way and finishes it ...
    let b = open(config(&redis, "rc", "b")).await;
    assert_eq!(b.revisit_pages(u64::MAX, true).await.unwrap(), RoundStart::Busy(4));
    let part = fetch_all(&b).await;
    assert_eq!(part, urls[..4].iter().cloned().collect(), "the four the dead queuer queued");
    // ... and then takes up round 1: the six it had not queued, each asked conditionally.
    assert_eq!(queued(b.revisit_pages(u64::MAX, true).await.unwrap()), 10, "the round's due pages");
    let leases = lease_all(&b).await;
    let rest: BTreeSet<String> = leases.iter().map(url_of).collect();
    assert_eq!(rest, urls[4..].iter().cloned().collect(), "only the six not queued yet");
    for l in &leases {
        assert!(matches!(l.request.kind, RequestKind::Revisit { hash: 7, .. }), "{:?}", l.request.kind);
        assert!(l.request.headers.contains_key("if-none-match"), "{:?}", l.request.headers);
    }
    complete_all(&b, &leases).await;

    // Round 1 is closed: the next --recrawl opens round 2 with every page.
    assert_eq!(queued(a.revisit_pages(u64::MAX, true).await.unwrap()), 10);
    assert_eq!(fetch_all(&a).await, first, "round 2 asks for every page once");
    // Not due yet: nothing queued, the wait reported.
    let r = a.revisit_pages(0, true).await.unwrap();
    assert!(matches!(r, RoundStart::Queued(r) if r.queued == 0 && r.not_due == 10), "{r:?}");
}
