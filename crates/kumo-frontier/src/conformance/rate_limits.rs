//! Checks of rate limits over several windows per host, read from the lease timestamps.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{done, lease_all, req};
use crate::{Frontier, HostPolicy, HostRule, Politeness, RateLimit, Readiness};

/// The rules [`rate_limits_per_host`] expects: `a.rate.test` (glob) at 4 per 100 ms and 6 per
/// 400 ms, `b.rate.test` (regex) at 3 per 20 ms, every other host unlimited.
pub fn rate_limited() -> Politeness {
    let open = HostPolicy { parallelism: 1000, ..Default::default() };
    Politeness {
        default: open,
        rules: vec![
            HostRule::new("a.rate.test", open)
                .expect("glob")
                .with_rate_limits([RateLimit::new(4, A_SHORT), RateLimit::new(6, A_LONG)]),
            HostRule::regex(r"^b\.rate\.test(:\d+)?$", open)
                .expect("regex")
                .with_rate_limit(RateLimit::new(3, B_WINDOW)),
        ],
        ..Default::default()
    }
}

const A_SHORT: Duration = Duration::from_millis(100);
const A_LONG: Duration = Duration::from_millis(400);
const B_WINDOW: Duration = Duration::from_millis(20);

/// Rate limits over several windows, from the lease timestamps: no window ever holds more than
/// its `max` leases, each host keeps to its own rule only, and a host without limits is not
/// held back. Leases are completed at once, so only the rate limits can hold a host. Needs the
/// backend built with [`rate_limited`].
pub async fn rate_limits_per_host(f: &impl Frontier) {
    let mut batch = Vec::new();
    for i in 0..10 {
        batch.push(req(&format!("http://a.rate.test/{i}"), 0));
    }
    for i in 0..12 {
        batch.push(req(&format!("http://b.rate.test/{i}"), 0));
    }
    for i in 0..5 {
        batch.push(req(&format!("http://free.test/{i}"), 0));
    }
    f.push(batch).await.expect("push");
    // Per host, for each lease in hand-out order: the instants just before and just after the
    // lease call, which bracket the instant the backend handed it out.
    let mut seen: HashMap<String, Vec<(Instant, Instant)>> = HashMap::new();
    let start = Instant::now();
    let mut first = true;
    // Bounded by count and by time: the schedule needs about 0.4 s.
    for _ in 0..2_000 {
        if start.elapsed() > Duration::from_secs(10) {
            break;
        }
        let before = Instant::now();
        let leases = lease_all(f).await;
        let after = Instant::now();
        if first {
            let count = |h: &str| leases.iter().filter(|l| l.request.url.host_str() == Some(h)).count();
            assert_eq!(
                (count("a.rate.test"), count("b.rate.test"), count("free.test")),
                (4, 3, 5),
                "a first burst of each host's smallest max; an unlimited host gives everything"
            );
            first = false;
        }
        for l in &leases {
            let host = l.request.url.host_str().unwrap_or("").to_string();
            seen.entry(host).or_default().push((before, after));
            done(f, l.id).await;
        }
        match f.readiness().await.expect("readiness") {
            Readiness::Empty => break,
            Readiness::Now => {}
            Readiness::At(at) => {
                let now = Instant::now();
                assert!(at > before, "a throttled host is parked until a token frees, not polled");
                tokio::time::sleep(at.saturating_duration_since(now).min(Duration::from_millis(50))).await;
            }
            Readiness::Blocked => panic!("leases were completed at once, nothing can be blocked"),
        }
    }
    let n = |h: &str| seen.get(h).map_or(0, Vec::len);
    assert_eq!(
        (n("a.rate.test"), n("b.rate.test"), n("free.test")),
        (10, 12, 5),
        "every request leased in time"
    );
    // No window exceeded: lease k+max is at least `per` after lease k. Measured as `after` of
    // the later minus `before` of the earlier, which can only overstate the true gap, so the
    // check never fails a correct backend.
    let holds = |h: &str, l: RateLimit| {
        let ts = &seen[h];
        let m = l.max as usize;
        (m..ts.len()).all(|k| ts[k].1 - ts[k - m].0 >= l.per)
    };
    for l in [RateLimit::new(4, A_SHORT), RateLimit::new(6, A_LONG)] {
        assert!(holds("a.rate.test", l), "a.rate.test exceeded {l:?}");
    }
    assert!(holds("b.rate.test", RateLimit::new(3, B_WINDOW)), "b.rate.test exceeded its limit");
    // Independence: each host went faster than the other's rule allows, so neither rule was
    // applied to the other host. Here the gap is measured `before` of the later minus `after`
    // of the earlier, which can only understate it, so a pass is proof.
    let beats = |h: &str, l: RateLimit| {
        let ts = &seen[h];
        let m = l.max as usize;
        (m..ts.len()).any(|k| ts[k].0.saturating_duration_since(ts[k - m].1) < l.per)
    };
    assert!(beats("a.rate.test", RateLimit::new(3, B_WINDOW)), "a.rate.test was held to b.rate.test's rule");
    assert!(beats("b.rate.test", RateLimit::new(6, A_LONG)), "b.rate.test was held to a.rate.test's rule");
}
