//! Politeness as the server sees it: robots.txt, Crawl-delay, per-host delay and parallelism
//! across several hosts, 429/503 with Retry-After, retries with back-off, failures.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use common::{config, crawl, field, status};
use kumo_core::SkipReason;
use kumo_frontier::{HostPolicy, HostRule};
use kumo_testsite::{Fixture, Hit, ServerBuilder, SiteConfig, TestServer};

fn robots(txt: &str) -> Fixture {
    Fixture { headers: vec![("content-type".into(), "text/plain".into())], ..Fixture::html(txt) }
}

/// The smallest gap between two consecutive requests the server saw, robots.txt included.
fn min_gap(hits: &[Hit]) -> Duration {
    hits.windows(2).map(|w| w[1].at.duration_since(w[0].at)).min().unwrap_or(Duration::MAX)
}

fn links(paths: &[&str]) -> String {
    paths.iter().map(|p| format!("<a href=\"{p}\">{p}</a>")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_disallowed_paths_are_never_requested() {
    let server = ServerBuilder::new()
        .fixture("/robots.txt", robots("User-agent: *\nDisallow: /private/\n"))
        .fixture("/", Fixture::html(&links(&["/a", "/private/x", "/private/y", "/b"])))
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let (summary, items) = crawl(config(&server.url("/"))).await;
    let targets: Vec<String> = server.hits().iter().map(|h| h.target.clone()).collect();
    assert!(targets.iter().all(|t| !t.starts_with("/private/")), "{targets:?}");
    assert_eq!(targets.iter().filter(|t| *t == "/robots.txt").count(), 1, "fetched once");
    assert_eq!(items.len(), 3);
    assert_eq!(summary.skipped[&SkipReason::Robots], 2);
    assert_eq!(summary.robots.disallowed, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_robots_fetches_everything() {
    let server = ServerBuilder::new()
        .fixture("/robots.txt", robots("User-agent: *\nDisallow: /\n"))
        .fixture("/", Fixture::html(&links(&["/a"])))
        .fixture("/a", Fixture::html("a"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    let (_, items) = crawl(cfg).await;
    assert_eq!(items.len(), 2);
    assert!(server.hits().iter().all(|h| h.target != "/robots.txt"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_robots_txt_allows_all_and_a_failing_one_backs_off() {
    let ok = ServerBuilder::new().fixture("/", Fixture::html("home")).start().await.unwrap();
    let (_, items) = crawl(config(&ok.url("/"))).await;
    assert_eq!(items.len(), 1, "404 robots.txt allows everything");

    let flaky = ServerBuilder::new()
        .fixture_sequence(
            "/robots.txt",
            vec![Fixture::status(503, "busy"), robots("User-agent: *\nAllow: /\n")],
        )
        .fixture("/", Fixture::html("home"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&flaky.url("/"));
    cfg.robots.unavailable_backoff = Duration::from_millis(200);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 1);
    let hits = flaky.hits();
    let targets: Vec<&str> = hits.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(targets, ["/robots.txt", "/robots.txt", "/"], "nothing fetched while robots.txt fails");
    assert!(hits[1].at.duration_since(hits[0].at) >= Duration::from_millis(200), "backed off");
    assert_eq!(summary.robots.unavailable, 1);

    let down = ServerBuilder::new()
        .fixture("/robots.txt", Fixture::status(500, "down"))
        .fixture("/", Fixture::html("home"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&down.url("/"));
    cfg.robots.unavailable_backoff = Duration::from_millis(50);
    let (summary, items, frontier) = common::crawl_keeping_frontier(cfg).await;
    assert!(items.is_empty());
    assert_eq!(summary.failed, 1, "recorded as failed after repeated 5xx");
    let failures = kumo_frontier::Frontier::failures(&*frontier).await.unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].kind, kumo_core::ErrorKind::Robots);
    assert_eq!(failures[0].last_status, Some(500), "the status robots.txt answered: {:?}", failures[0]);
    assert!(failures[0].message.contains("answered 500"), "{}", failures[0].message);
    assert!(down.hits().iter().all(|h| h.target == "/robots.txt"));
}

/// RFC 9309 §2.3.1.4: a robots.txt that cannot be reached (a network error) means complete
/// disallow for a while, as a 5xx does: nothing is fetched until it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_robots_txt_disallows_until_it_answers() {
    let cut = Fixture::html("User-agent: *\nAllow: /\n").trickle(4, Duration::from_millis(5)).reset_after(8);
    let server = ServerBuilder::new()
        .fixture_sequence("/robots.txt", vec![cut, robots("User-agent: *\nAllow: /\n")])
        .fixture("/", Fixture::html("home"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.unreachable_backoff = Duration::from_millis(200);
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 1);
    let hits = server.hits();
    let targets: Vec<&str> = hits.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(
        targets,
        ["/robots.txt", "/robots.txt", "/"],
        "nothing fetched while robots.txt is unreachable"
    );
    assert!(hits[1].at.duration_since(hits[0].at) >= Duration::from_millis(200), "backed off");
    assert_eq!(summary.robots.unavailable, 1);
}

/// A host that never answers costs one timeout per try (its robots.txt's), not two: the
/// failed robots.txt fetch is remembered, its pages are never requested, and after the
/// tries robots.txt is allowed they are recorded as failed, with why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_host_costs_one_timeout_per_try() {
    let silent = Fixture::html("late").latency(Duration::from_secs(30));
    let server = ServerBuilder::new()
        .fixture("/robots.txt", silent.clone())
        .fixture("/", silent.clone())
        .fixture("/a", silent)
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.downloader.timeout = Duration::from_millis(300);
    cfg.robots.unreachable_backoff = Duration::from_millis(50);
    let (summary, items) = crawl(cfg).await;
    assert!(items.is_empty());
    let targets: Vec<String> = server.hits().into_iter().map(|h| h.target).collect();
    assert_eq!(targets, ["/robots.txt"; 3], "three tries of robots.txt, no page requested");
    assert_eq!(summary.failed, 1, "the page is recorded as failed");
    assert_eq!(summary.errors.get("downloader:robots"), Some(&1), "{:?}", summary.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_is_honored_and_capped() {
    let pages = ["/1", "/2", "/3", "/4"];
    let mut b = ServerBuilder::new()
        .fixture("/robots.txt", robots("User-agent: *\nCrawl-delay: 0.15\n"))
        .fixture("/", Fixture::html(&links(&pages)));
    for p in pages {
        b = b.fixture(p, Fixture::html(p));
    }
    let server = b.start().await.unwrap();
    let (_, items) = crawl(config(&server.url("/"))).await;
    assert_eq!(items.len(), 5);
    let gap = min_gap(&server.hits());
    assert!(gap >= Duration::from_millis(150), "requests {gap:?} apart, Crawl-delay 0.15 s");

    // A Crawl-delay above the cap is cut to the cap. Every page is a seed, and robots.txt is
    // slow to answer: all five checks wait on its one fetch, and it is counted once.
    let slow_robots =
        Fixture { latency: Duration::from_millis(200), ..robots("User-agent: *\nCrawl-delay: 60\n") };
    let mut b =
        ServerBuilder::new().fixture("/robots.txt", slow_robots).fixture("/", Fixture::html(&links(&pages)));
    for p in pages {
        b = b.fixture(p, Fixture::html(p));
    }
    let server = b.start().await.unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.seeds.extend(pages.iter().map(|p| kumo_core::Url::parse(&server.url(p)).unwrap()));
    cfg.robots.max_crawl_delay = Duration::from_millis(100);
    let started = Instant::now();
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 5);
    assert!(min_gap(&server.hits()) >= Duration::from_millis(100));
    assert!(started.elapsed() < Duration::from_secs(20), "the cap, not 60 s, spaced the requests");
    assert_eq!(summary.robots.crawl_delay_capped, 1, "one robots.txt, capped once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_slows_the_host_and_the_request_is_retried() {
    let server = ServerBuilder::new()
        .fixture_sequence(
            "/busy",
            vec![Fixture::status(429, "slow down").with_header("retry-after", "1"), Fixture::html("ok")],
        )
        .fixture("/", Fixture::html(&links(&["/busy"])))
        .start()
        .await
        .unwrap();
    let (summary, items) = crawl(config(&server.url("/"))).await;
    assert_eq!(items.iter().filter(|i| status(i) == 200).count(), 2);
    let hits: Vec<_> = server.hits().into_iter().filter(|h| h.target == "/busy").collect();
    assert_eq!(hits.len(), 2);
    assert!(hits[1].at.duration_since(hits[0].at) >= Duration::from_secs(1), "Retry-After: 1 honored");
    assert_eq!(summary.retries, 1);
    assert_eq!(summary.by_status[&429], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_then_recorded() {
    let server = ServerBuilder::new()
        .fixture_sequence(
            "/flaky",
            vec![Fixture::status(503, "x"), Fixture::status(500, "x"), Fixture::html("ok")],
        )
        .fixture("/broken", Fixture::status(500, "always"))
        .fixture("/cut", Fixture::html(&"z".repeat(5000)).reset_after(1000))
        .fixture("/", Fixture::html(&links(&["/flaky", "/broken", "/cut"])))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.max_retries = 2;
    let (summary, items) = crawl(cfg).await;
    let ok: Vec<_> = items.iter().map(|i| field(i, "url").to_string()).collect();
    assert!(ok.iter().any(|u| u.ends_with("/flaky")), "succeeds on the third try");
    let count = |p: &str| server.hits().iter().filter(|h| h.target == p).count();
    assert_eq!((count("/flaky"), count("/broken"), count("/cut")), (3, 3, 3));
    assert_eq!(summary.failed, 2);
    assert_eq!(summary.errors["downloader:status"], 1);
    assert_eq!(summary.errors["downloader:body"], 3, "a reset mid-body is a body error");
}

/// Several hosts at once: per-host delay and parallelism hold for each, and a slow, polite
/// host does not hold back a fast one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_host_politeness_across_hosts() {
    let slow_ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
    let slow_paths: Vec<String> = (0..6).map(|i| format!("/s{i}")).collect();
    let mut sb = ServerBuilder::new().ip(slow_ip);
    for p in &slow_paths {
        sb = sb.fixture(p, Fixture::html("slow page"));
    }
    let slow: TestServer = sb.start().await.unwrap();
    let mut seed_links: String =
        slow_paths.iter().map(|p| format!("<a href=\"{}\">s</a>", slow.url(p))).collect();
    let fast = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 150, ..Default::default() })
        .start()
        .await
        .unwrap();
    seed_links.push_str(&format!("<a href=\"{}\">fast</a>", fast.url("/index.html")));
    let hub = ServerBuilder::new()
        .ip(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 4)))
        .fixture("/", Fixture::html(&seed_links))
        .start()
        .await
        .unwrap();

    let mut cfg = config(&hub.url("/"));
    cfg.scope.any_domain = true;
    cfg.politeness.rules = vec![
        HostRule::new(
            "127.0.0.3:*",
            HostPolicy { parallelism: 1, delay: Duration::from_millis(200), ..Default::default() },
        )
        .unwrap(),
        HostRule::new("127.0.0.1:*", HostPolicy { parallelism: 3, ..Default::default() }).unwrap(),
    ];
    let (summary, _) = crawl(cfg).await;
    assert_eq!(
        summary.by_status[&200] as usize,
        1 + slow_paths.len() + fast.hit_count() - 1,
        "everything fetched"
    );

    let slow_hits: Vec<Hit> = slow.hits().into_iter().filter(|h| h.target != "/robots.txt").collect();
    assert_eq!(slow_hits.len(), slow_paths.len());
    assert!(min_gap(&slow.hits()) >= Duration::from_millis(200), "slow host: 200 ms apart");
    assert_eq!(slow.max_in_flight(), 1);
    assert!(fast.max_in_flight() <= 3, "fast host: at most 3 at once, saw {}", fast.max_in_flight());
    // The fast host finished long before the slow one: it was not held back.
    let fast_end = fast.hits().last().unwrap().at;
    let slow_end = slow_hits.last().unwrap().at;
    assert!(fast_end < slow_end, "fast host done first");
    let fast_span = fast_end.duration_since(fast.hits()[0].at);
    assert!(fast_span < Duration::from_millis(1000), "fast host crawled at full speed ({fast_span:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rule_headers_go_with_every_request_to_matching_hosts() {
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links(&["/a"])))
        .fixture("/a", Fixture::html("a"))
        .start()
        .await
        .unwrap();
    let mut cfg = config(&server.url("/"));
    cfg.robots.obey = false;
    let rule =
        HostRule::new("127.0.0.1:*", HostPolicy::default()).unwrap().with_header("user-agent", "rule-agent");
    cfg.politeness.rules = vec![rule];
    crawl(cfg).await;
    let agents: Vec<String> = server.hits().into_iter().map(|h| h.user_agent.unwrap_or_default()).collect();
    assert_eq!(agents, ["rule-agent", "rule-agent"]);
}

/// A site of a home page linking to `/1`..`/8`, robots.txt answering `robots_txt`.
async fn eight_pages(robots_txt: &str, flaky: Option<&str>) -> TestServer {
    let pages: Vec<String> = (1..=8).map(|i| format!("/{i}")).collect();
    let paths: Vec<&str> = pages.iter().map(String::as_str).collect();
    let mut b = ServerBuilder::new()
        .fixture("/robots.txt", robots(robots_txt))
        .fixture("/", Fixture::html(&links(&paths)));
    for p in &paths {
        b = match flaky {
            Some(f) if f == *p => b.fixture_sequence(p, vec![Fixture::status(503, "busy"), Fixture::html(p)]),
            _ => b.fixture(p, Fixture::html(p)),
        };
    }
    b.start().await.unwrap()
}

/// Issue 21.6: robots.txt work (the fetch and the deferral after it on a paced host) and
/// retries used to consume the `max_pages` budget, so a paced crawl stopped a page or more
/// short. The budget is page records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_counts_pages_not_robots_work_or_retries() {
    // A Crawl-delay host: the first page waits its turn after robots.txt.
    let server = eight_pages("User-agent: *\nCrawl-delay: 0.05\n", None).await;
    let mut cfg = config(&server.url("/"));
    cfg.max_pages = 5;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(summary.stopped_by, kumo_engine::StopCause::MaxPages);
    assert_eq!(items.len(), 5, "Crawl-delay: {:?}", server.hits());
    assert_eq!(summary.pages, 5);
    assert_eq!(common::page_hits(&server), 5, "no page fetched past the budget");

    // A delay from the host's rule, robots.txt allowing all.
    let server = eight_pages("User-agent: *\nAllow: /\n", None).await;
    let mut cfg = config(&server.url("/"));
    cfg.politeness.default.delay = Duration::from_millis(50);
    cfg.max_pages = 5;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(summary.stopped_by, kumo_engine::StopCause::MaxPages);
    assert_eq!(items.len(), 5, "delay: {:?}", server.hits());
    assert_eq!(summary.pages, 5);

    // A retried page: its 503 is no page record, so it leaves the budget alone.
    let server = eight_pages("User-agent: *\nAllow: /\n", Some("/1")).await;
    let mut cfg = config(&server.url("/"));
    cfg.politeness.default.parallelism = 1;
    cfg.max_pages = 5;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(summary.stopped_by, kumo_engine::StopCause::MaxPages);
    assert_eq!(items.len(), 5, "retry: {:?}", server.hits());
}

/// More origins than the robots.txt cache holds, each paced: a page sent back after its
/// robots.txt (to wait out its host's delay) still finds the answer when it returns, so each
/// robots.txt is asked once and every page is fetched. (An answer dropped in the meantime was
/// asked again, and the page sent back again, for ever.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_hosts_than_the_robots_cache_holds_are_crawled_whole() {
    let mut servers = Vec::new();
    for _ in 0..6 {
        let s = ServerBuilder::new()
            .fixture("/robots.txt", Fixture::status(404, "none"))
            .fixture("/", Fixture::html(&links(&["/a"])))
            .fixture("/a", Fixture::html("a"))
            .start()
            .await
            .unwrap();
        servers.push(s);
    }
    let mut cfg = config(&servers[0].url("/"));
    cfg.seeds = servers.iter().map(|s| kumo_core::Url::parse(&s.url("/")).unwrap()).collect();
    cfg.robots.capacity = 2;
    cfg.politeness.default =
        HostPolicy { parallelism: 1, delay: Duration::from_millis(100), ..Default::default() };
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 12, "two pages of each of six hosts");
    for s in &servers {
        let robots = s.hits().iter().filter(|h| h.target == "/robots.txt").count();
        assert_eq!(robots, 1, "{}: robots.txt once", s.base_url());
    }
    assert_eq!(summary.robots.fetched, 6);
}
