//! The adaptive throttle as the servers see it: a host that answers slowly gets its requests
//! spaced out toward latency / target concurrency, a fast host in the same crawl is not held
//! back, and when the slow host speeds up its requests come closer together again.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{config, crawl};
use kumo_engine::AutoThrottle;
use kumo_testsite::{Fixture, Hit, ServerBuilder, SiteConfig};

/// The slow host's answer time, and how many of its pages answer that slowly before it
/// becomes fast.
const LATENCY: Duration = Duration::from_millis(300);
const SLOW: usize = 16;
const FAST: usize = 8;

fn gaps(hits: &[Hit]) -> Vec<Duration> {
    hits.windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delays_follow_latency_per_host() {
    // `/p?1` … `/p?24` are one fixture sequence (the query is not matched): the first 16
    // requests to arrive wait 300 ms for their headers, the rest answer at once.
    let links: String = (1..=SLOW + FAST).map(|i| format!("<a href=\"/p?{i}\">{i}</a>")).collect();
    let mut pages = vec![Fixture::html("slow").latency(LATENCY); SLOW];
    pages.push(Fixture::html("fast"));
    let slow = ServerBuilder::new()
        .ip(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        .fixture("/", Fixture::html(&links))
        .fixture_sequence("/p", pages)
        .start()
        .await
        .unwrap();
    let site = SiteConfig { pages: 60, ..Default::default() };
    let truth = site.ground_truth();
    let fast = ServerBuilder::new().synthetic(site).start().await.unwrap();

    let mut cfg = config(&slow.url("/"));
    cfg.seeds.push(fast.url("/index.html").parse().unwrap());
    cfg.robots.obey = false;
    cfg.auto_throttle = Some(AutoThrottle {
        target_concurrency: 1.0,
        start_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(5),
    });
    let (summary, _) = crawl(cfg).await;
    assert_eq!(summary.by_status[&200] as usize, 1 + SLOW + FAST + truth.unique_urls, "everything fetched");

    let p: Vec<Hit> = slow.hits().into_iter().filter(|h| h.target.starts_with("/p?")).collect();
    assert_eq!(p.len(), SLOW + FAST);
    let g = gaps(&p);
    let ms = |d: &[Duration]| d.iter().map(|d| d.as_millis()).collect::<Vec<_>>();
    // Gaps between the slow answers' requests: g[0..SLOW-1]; then the fast ones.
    let (slow_gaps, fast_gaps) = g.split_at(SLOW - 1);
    eprintln!("slow host gaps (ms): {:?} | {:?}", ms(slow_gaps), ms(fast_gaps));
    // Before any answer is in, requests go at half the start delay (the first page, "/",
    // answered at once): far closer together than the latency.
    assert!(slow_gaps[0] < LATENCY / 2, "at first the slow host is not yet known to be slow");
    // Then each slow answer pulls the delay halfway to 300 ms: the last gaps of the slow phase
    // are close to the latency.
    for gap in &slow_gaps[slow_gaps.len() - 3..] {
        assert!(*gap >= LATENCY * 7 / 10, "gaps grew toward the latency: {:?}", ms(slow_gaps));
    }
    // Once the host answers at once, each answer halves the delay again.
    let widest = *slow_gaps.iter().max().unwrap();
    let last = *fast_gaps.last().unwrap();
    assert!(last < widest / 3, "the delay came back down: {:?} after {:?}", ms(fast_gaps), ms(slow_gaps));
    assert!(last < Duration::from_millis(60), "close to the fast latency again: {:?}", ms(fast_gaps));

    // The fast host, crawled at the same time, was never spaced like the slow one: it
    // finished while the slow host was still answering slowly.
    let f = fast.hits();
    assert_eq!(f.len(), truth.unique_urls);
    let fast_gaps = gaps(&f);
    let widest_fast = *fast_gaps.iter().max().unwrap();
    assert!(widest_fast < LATENCY / 2, "the fast host was not slowed: widest gap {widest_fast:?}");
    assert!(f.last().unwrap().at < p[SLOW - 1].at, "the fast host was done first");
}
