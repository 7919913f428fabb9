//! Checks of what a frontier tells of itself and lets be changed from outside its scheduler:
//! its failures, re-queueing them, one host's queue.

use std::time::{Duration, SystemTime};

use kumo_core::ErrorKind;

use super::{done, lease_all, req};
use crate::{Completion, FailureRecord, Frontier};

/// A failed lease leaves the queue and is recorded with its kind.
pub async fn failures_are_recorded(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0)]).await.expect("push");
    let l = lease_all(f).await.pop().expect("one lease");
    let failure = FailureRecord {
        url: l.request.url.to_string(),
        kind: ErrorKind::Connect,
        message: "refused".into(),
        attempts: 3,
        last_status: None,
        at: SystemTime::now(),
    };
    f.complete(vec![Completion::Failed { lease: l.id, failure }]).await.expect("fail");
    let s = f.stats().await.expect("stats");
    assert!(s.is_drained() && s.failed == 1, "a failed lease leaves the queue and is recorded");
    let list = f.failures().await.expect("failures");
    assert_eq!(list[0].kind, ErrorKind::Connect);
}

/// Failures go back to the queue by kind, their retry counts reset, and are counted out.
pub async fn failures_are_requeued(f: &impl Frontier) {
    f.push(vec![req("http://a.test/1", 0), req("http://a.test/2", 0)]).await.expect("push");
    let first = lease_all(f).await;
    let one = first.iter().find(|l| l.request.url.path() == "/1").expect("leased").id;
    f.complete(vec![Completion::Retry { lease: one, after: Duration::ZERO }]).await.expect("retry");
    let mut leases = lease_all(f).await;
    leases.extend(first.into_iter().filter(|l| l.id != one));
    assert_eq!(leases.len(), 2);
    let fail = |l: &crate::Lease, kind| Completion::Failed {
        lease: l.id,
        failure: FailureRecord {
            url: l.request.url.to_string(),
            kind,
            message: "gave up".into(),
            attempts: l.request.retries + 1,
            last_status: None,
            at: SystemTime::now(),
        },
    };
    let kind_of =
        |l: &crate::Lease| if l.request.url.path() == "/1" { ErrorKind::Connect } else { ErrorKind::Timeout };
    f.complete(leases.iter().map(|l| fail(l, kind_of(l))).collect()).await.expect("fail");
    assert_eq!(f.stats().await.expect("stats").failed, 2);

    let r = f.requeue_failures(&[ErrorKind::Connect]).await.expect("requeue");
    assert_eq!((r.requeued, r.remaining, r.invalid), (1, 1, 0), "only the kinds asked for go back");
    let s = f.stats().await.expect("stats");
    assert_eq!((s.queued, s.failed), (1, 1), "a requeued failure is queued, not failed");
    let again = lease_all(f).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].request.url.path(), "/1");
    assert_eq!(again[0].request.retries, 0, "a requeued failure starts its retries again");
    done(f, again[0].id).await;

    let r = f.requeue_failures(&[]).await.expect("requeue");
    assert_eq!((r.requeued, r.remaining), (1, 0), "no kinds: every failure goes back");
    assert_eq!(lease_all(f).await.len(), 1);
    assert!(f.failures().await.expect("failures").is_empty());
}

/// A host's queue lists its next requests in the order they go out, best level first.
pub async fn host_queue_shows_what_goes_next(f: &impl Frontier) {
    let batch = vec![
        req("http://a.test/1", 0),
        req("http://a.test/2", 5),
        req("http://a.test/3", 0),
        req("http://a.test/4", 0),
        req("http://b.test/1", 0),
    ];
    f.push(batch).await.expect("push");
    let q = f.host_queue("a.test", 10).await.expect("host queue").expect("a known host");
    let paths: Vec<&str> = q.next.iter().map(|r| r.url.trim_start_matches("http://a.test")).collect();
    assert_eq!(paths, ["/2", "/1", "/3", "/4"], "best priority first, first-come within a level");
    assert_eq!((q.host.as_str(), q.queued, q.in_flight), ("a.test", 4, 0));
    assert_eq!(q.next[0].priority, 5);
    let q = f.host_queue("a.test", 2).await.expect("host queue").expect("a known host");
    assert_eq!(q.next.len(), 2, "at most as many as asked for");
    assert_eq!(q.queued, 4, "the count is the whole queue's");
    assert!(f.host_queue("nowhere.test", 5).await.expect("host queue").is_none());
    assert_eq!(f.stats().await.expect("stats").queued, 5, "looking moves nothing");
    let leased = f.lease(1).await.expect("lease");
    assert_eq!(leased.len(), 1);
    let host = leased[0].request.url.host_str().expect("host").to_string();
    let q = f.host_queue(&host, 10).await.expect("host queue").expect("a known host");
    // A shared frontier counts what a worker holds in reserve for the host as in flight too.
    assert!(q.in_flight >= 1, "a lease out is in flight");
}
