//! Tests of the host table: priority order, leases, pacing, spilling.

use kumo_core::{Request, Url};

use super::*;
use crate::{HostAdjustment, HostRule, RateLimit};

fn table() -> HostTable {
    let open = HostPolicy { parallelism: 100, ..Default::default() };
    let politeness = Politeness {
        default: open,
        rules: vec![
            HostRule::regex(r"^a\.test$", open)
                .unwrap()
                .with_rate_limits([RateLimit::per_second(2), RateLimit::per_minute(3)]),
        ],
        ..Default::default()
    };
    HostTable::new(politeness, Duration::from_secs(600), usize::MAX)
}

pub(super) fn push(t: &mut HostTable, url: &str, now: Instant) {
    let r = Request::get(Url::parse(url).unwrap());
    let (i, _) = t.host_for(&r.host_key(), now);
    t.enqueue(i, Entry::new(0, StoredRequest::from(&r)), now);
}

fn no_refill() -> impl FnMut(usize, Priority, u64, usize) -> Result<Vec<Entry>, FrontierError> {
    |_, _, _, _| Ok(Vec::new())
}

pub(super) fn lease(t: &mut HostTable, now: Instant) -> Vec<Lease> {
    t.lease(100, now, &mut no_refill()).unwrap().leases
}

fn hosts(leases: &[Lease]) -> Vec<String> {
    leases.iter().map(|l| l.request.url.host_str().unwrap().to_string()).collect()
}

/// With a synthetic clock: the throttled host waits in the heap for the exact instant a
/// token frees in every window, and the unlimited host neither waits nor carries a log.
#[test]
fn throttled_host_waits_for_the_exact_instant() {
    let mut t = table();
    let t0 = Instant::now();
    let s = Duration::from_secs;
    for i in 0..8 {
        push(&mut t, &format!("http://a.test/{i}"), t0);
    }
    for i in 0..5 {
        push(&mut t, &format!("http://b.test/{i}"), t0);
    }
    let b = t.host_index("b.test").unwrap();
    assert!(t.hosts[b].rare.is_none(), "no rate limits, no bookkeeping");
    let first = lease(&mut t, t0);
    assert_eq!(hosts(&first).iter().filter(|h| *h == "a.test").count(), 2, "2 per second");
    assert_eq!(first.len(), 7, "b.test is not held back");
    // Windows are widened by 5 %, at most 20 ms: 1 s → 1.02 s, 60 s → 60.02 s.
    let ms = Duration::from_millis;
    assert_eq!(t.readiness(t0), Readiness::At(t0 + ms(1020)), "the second window frees at 1.02 s");
    assert!(lease(&mut t, t0 + ms(1020) - Duration::from_nanos(1)).is_empty());
    assert_eq!(hosts(&lease(&mut t, t0 + ms(1020))), ["a.test"], "then the minute allows one more");
    assert_eq!(t.readiness(t0 + ms(1020)), Readiness::At(t0 + ms(60_020)), "the minute window is full");
    assert!(lease(&mut t, t0 + s(59)).is_empty());
    assert_eq!(lease(&mut t, t0 + ms(60_020)).len(), 2, "two leave the minute at once");
    assert_eq!(t.readiness(t0 + ms(60_020)), Readiness::At(t0 + ms(61_040)));
    assert_eq!(t.waiting.len(), 1, "one heap entry per wait, never a poll");
}

/// A pause or delay and a rate limit combine: the later of the two wins.
#[test]
fn delay_and_rate_limits_combine() {
    let mut t = table();
    let t0 = Instant::now();
    for i in 0..3 {
        push(&mut t, &format!("http://a.test/{i}"), t0);
    }
    let a = t.host_index("a.test").unwrap();
    t.hosts[a].next_at = (t0 + Duration::from_millis(1500)).into();
    t.schedule(a, t0);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + Duration::from_millis(1500)));
    assert_eq!(lease(&mut t, t0 + Duration::from_millis(1500)).len(), 2);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + Duration::from_millis(2520)), "1.5 s + the 1.02 s window");
}

/// A learned delay goes down as well as up, takes effect from the last lease at once, never
/// goes below the rule's delay or a Crawl-delay floor, and never cuts a pause short.
#[test]
fn learned_delay_goes_down_and_up_within_its_floors() {
    let open = HostPolicy { parallelism: 100, ..Default::default() };
    let ruled = HostPolicy { delay: Duration::from_millis(100), ..open };
    let politeness = Politeness {
        default: open,
        rules: vec![HostRule::new("r.test", ruled).unwrap()],
        ..Default::default()
    };
    let mut t = HostTable::new(politeness, Duration::from_secs(600), usize::MAX);
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    let learn = |d| HostAdjustment { learned_delay: Some(d), ..Default::default() };
    for i in 0..6 {
        push(&mut t, &format!("http://a.test/{i}"), t0);
    }
    assert_eq!(lease(&mut t, t0).len(), 6, "no delay: all at once");
    for i in 0..6 {
        push(&mut t, &format!("http://a.test/x{i}"), t0);
    }
    t.adjust("a.test", learn(Duration::from_secs(10)), t0);
    // 10 s plus the 20 ms margin, counted from the last lease.
    assert_eq!(t.readiness(t0), Readiness::At(t0 + ms(10_020)), "raised: counted from the last lease");
    t.adjust("a.test", learn(ms(400)), t0 + ms(100));
    assert_eq!(t.readiness(t0 + ms(100)), Readiness::At(t0 + ms(420)), "lowered: takes effect at once");
    assert_eq!(lease(&mut t, t0 + ms(420)).len(), 1);
    t.adjust("a.test", learn(Duration::ZERO), t0 + ms(430));
    assert_eq!(lease(&mut t, t0 + ms(430)).len(), 5, "learned zero: no spacing at all");
    let a = t.host_index("a.test").unwrap();
    assert_eq!(t.pacing(a).learned, Some(Duration::ZERO));

    // Never below the rule's delay, whatever is learned.
    push(&mut t, "http://r.test/1", t0);
    push(&mut t, "http://r.test/2", t0);
    assert_eq!(lease(&mut t, t0).len(), 1);
    t.adjust("r.test", learn(ms(1)), t0);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + ms(105)), "the rule's 100 ms (+5 %) still holds");
    let r = t.host_index("r.test").unwrap();
    assert_eq!(t.pacing(r).learned, Some(ms(100)), "clamped up to the rule's delay");
    assert_eq!(t.pacing(r).delay, ms(100));
    assert_eq!(hosts(&lease(&mut t, t0 + ms(105))), ["r.test"], "readiness is for all hosts: drain it");

    // Nor below a Crawl-delay floor, and a pause outlasts a lowered delay.
    for i in 0..3 {
        push(&mut t, &format!("http://c.test/{i}"), t0);
    }
    t.adjust("c.test", HostAdjustment { min_delay: Some(ms(300)), ..Default::default() }, t0);
    assert_eq!(lease(&mut t, t0).len(), 1);
    t.adjust("c.test", learn(Duration::from_secs(5)), t0);
    t.adjust("c.test", learn(ms(10)), t0);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + ms(315)), "the floor holds");
    t.adjust("c.test", HostAdjustment { pause: Some(Duration::from_secs(2)), ..Default::default() }, t0);
    t.adjust("c.test", learn(Duration::from_secs(5)), t0);
    t.adjust("c.test", learn(Duration::ZERO), t0);
    assert_eq!(t.readiness(t0), Readiness::At(t0 + Duration::from_secs(2)), "the pause holds");
    let learned: Vec<_> = t.learned_delays().into_iter().map(|(k, d)| (k.to_string(), d)).collect();
    assert_eq!(
        learned,
        [("a.test".into(), Duration::ZERO), ("r.test".into(), ms(100)), ("c.test".into(), Duration::ZERO)]
    );
}

/// Past `spill_at`, entries are counted, not held, and are read back in order.
#[test]
fn spilled_entries_are_read_back_in_order() {
    let open = HostPolicy { parallelism: 1000, ..Default::default() };
    let mut t =
        HostTable::new(Politeness { default: open, ..Default::default() }, Duration::from_secs(60), 2);
    let now = Instant::now();
    let mut disk = Vec::new();
    let mut placements = Vec::new();
    for seq in 1..=5u64 {
        let r = Request::get(Url::parse(&format!("http://h.test/{seq}")).unwrap());
        let (i, _) = t.host_for("h.test", now);
        let e = Entry::new(seq, StoredRequest::from(&r));
        disk.push(e.clone());
        placements.push(t.enqueue(i, e, now));
    }
    use Placement::*;
    assert_eq!(placements, [Buffered, Buffered, Spilled, Spilled, Spilled]);
    assert_eq!(t.queued(), 5);
    let mut reads = 0;
    let mut refill = |_: usize, _: Priority, after: u64, max: usize| {
        reads += 1;
        Ok(disk.iter().filter(|e| e.seq > after).take(max).cloned().collect())
    };
    let got = t.lease(10, now, &mut refill).unwrap().leases;
    let paths: Vec<_> = got.iter().map(|l| l.request.url.path().to_string()).collect();
    assert_eq!(paths, ["/1", "/2", "/3", "/4", "/5"]);
    assert_eq!(reads, 2, "read back two at a time");
    assert_eq!(t.queued(), 0);
}

/// Spilling cold hosts, a host never leased holds nothing in memory: its first lease reads
/// its requests back, and only then does it buffer what comes.
#[test]
fn a_host_never_leased_holds_no_request_in_memory() {
    let open = HostPolicy { parallelism: 1000, ..Default::default() };
    let politeness = Politeness { default: open, ..Default::default() };
    let mut t = HostTable::new(politeness, Duration::from_secs(60), 4).spilling_cold_hosts();
    let now = Instant::now();
    let mut disk = Vec::new();
    let enqueue = |t: &mut HostTable, disk: &mut Vec<Entry>, seq: u64| {
        let r = Request::get(Url::parse(&format!("http://h.test/{seq}")).unwrap());
        let (i, _) = t.host_for("h.test", now);
        let e = Entry::new(seq, StoredRequest::from(&r));
        disk.push(e.clone());
        t.enqueue(i, e, now)
    };
    use Placement::*;
    let cold: Vec<_> = (1..=2).map(|seq| enqueue(&mut t, &mut disk, seq)).collect();
    assert_eq!(cold, [Spilled, Spilled]);
    let mut refill = |_: usize, _: Priority, after: u64, max: usize| {
        Ok(disk.iter().filter(|e| e.seq > after).take(max).cloned().collect())
    };
    let first = t.lease(1, now, &mut refill).unwrap().leases;
    assert_eq!(first[0].request.url.path(), "/1");
    let mut disk = Vec::new();
    assert_eq!(enqueue(&mut t, &mut disk, 3), Buffered, "leased once, the host buffers");
    let rest = t.lease(10, now, &mut no_refill()).unwrap().leases;
    let paths: Vec<_> = rest.iter().map(|l| l.request.url.path().to_string()).collect();
    assert_eq!(paths, ["/2", "/3"]);
    assert_eq!(t.queued(), 0);
}

/// A pause, a retry's back-off or a deferral as long as a server may ask
/// (`Retry-After: 18446744073709551615`) is a century, never an overflow.
#[test]
fn no_wait_overflows_the_clock() {
    let open = HostPolicy { parallelism: 100, ..Default::default() };
    let mut t = HostTable::new(Politeness { default: open, ..Default::default() }, Duration::MAX, usize::MAX);
    let now = Instant::now();
    for i in 0..3 {
        push(&mut t, &format!("http://a.test/{i}"), now);
    }
    let huge = Duration::from_secs(u64::MAX);
    let mut leases = lease(&mut t, now);
    assert_eq!(leases.len(), 3, "a lease time-to-live past any clock is a century");
    let mut out = |t: &mut HostTable| t.take_lease(leases.pop().unwrap().id).unwrap();
    let o = out(&mut t);
    t.retry_later(o.host, o.entry, huge, now);
    let o = out(&mut t);
    t.requeue_front(o.host, o.entry, Duration::MAX, now);
    t.adjust(
        "a.test",
        HostAdjustment { pause: Some(huge), min_delay: Some(Duration::MAX), ..Default::default() },
        now,
    );
    assert_eq!(t.readiness(now), Readiness::At(now + crate::FAR));
    let view = t.host_views(now);
    assert_eq!(view[0].paused_for, Some(crate::FAR));
    assert_eq!(view[0].backing_off, 1);
}

/// Breadth across hosts: a host with many requests and room for many in flight takes one
/// turn in each round over the ready hosts, so it never fills the crawl's slots while others
/// wait (each lease puts its host at the back of the ready hosts of its priority).
#[test]
fn a_host_with_many_requests_takes_its_turn_with_the_others() {
    let mut t = table();
    let now = Instant::now();
    for i in 0..40 {
        push(&mut t, &format!("http://big.test/{i}"), now);
    }
    for h in 0..10 {
        for i in 0..2 {
            push(&mut t, &format!("http://h{h}.test/{i}"), now);
        }
    }
    for round in 0..2 {
        let leased = t.lease(11, now, &mut no_refill()).unwrap().leases;
        let mut names = hosts(&leased);
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 11, "round {round}: one lease for each of the 11 hosts: {names:?}");
    }
    // Once the small hosts are done, the big one may use the slots.
    let rest = t.lease(11, now, &mut no_refill()).unwrap().leases;
    assert_eq!(hosts(&rest), vec!["big.test"; 11]);
}

/// A host with requests in flight gets another slot only when no host of its priority
/// without one is ready: a slow host with room for many in flight does not take the slots
/// that others, ready beside it, could use.
#[test]
fn a_busy_host_waits_while_idle_hosts_are_ready() {
    let mut t = table();
    let now = Instant::now();
    for i in 0..10 {
        push(&mut t, &format!("http://slow.test/{i}"), now);
    }
    let first = t.lease(1, now, &mut no_refill()).unwrap().leases;
    assert_eq!(hosts(&first), ["slow.test"], "alone, it goes");
    for h in 0..3 {
        push(&mut t, &format!("http://h{h}.test/"), now);
    }
    // Its first request is still out: the three idle hosts take the three slots.
    let mut next = hosts(&t.lease(3, now, &mut no_refill()).unwrap().leases);
    next.sort();
    assert_eq!(next, ["h0.test", "h1.test", "h2.test"]);
    // With no idle host left, it takes what is free.
    assert_eq!(hosts(&t.lease(4, now, &mut no_refill()).unwrap().leases), vec!["slow.test"; 4]);
    // A better priority still goes first, busy or not.
    push(&mut t, "http://idle.test/", now);
    let r = Request::get(Url::parse("http://slow.test/urgent").unwrap()).with_priority(5);
    let (i, _) = t.host_for("slow.test", now);
    t.enqueue(i, Entry::new(1, StoredRequest::from(&r)), now);
    assert_eq!(hosts(&t.lease(1, now, &mut no_refill()).unwrap().leases), ["slow.test"]);
}
