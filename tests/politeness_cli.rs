//! The real `kumo` binary's politeness flags: the adaptive throttle spaces a slow host's
//! requests toward its latency, and its settings are checked.

use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

mod common;
use common::{kumo, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_throttle_spaces_a_slow_host() {
    let latency = Duration::from_millis(200);
    // Sixteen pages: the first few go before any answer is in, the rest are spaced.
    let links: String = (1..=16).map(|i| format!("<a href=\"/p?{i}\">{i}</a>")).collect();
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(&links))
        .fixture("/p", Fixture::html("slow").latency(latency))
        .start()
        .await
        .unwrap();
    let o = kumo(&[
        "crawl",
        &server.url("/"),
        "--memory",
        "--ignore-robots",
        "--auto-throttle",
        "--auto-throttle-start-delay",
        "0.05",
        "--auto-throttle-max-delay",
        "2",
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let hits = server.hits();
    assert_eq!(hits.len(), 17);
    let gaps: Vec<Duration> = hits.windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    let last = *gaps.last().unwrap();
    assert!(last >= latency * 7 / 10, "the slow host's requests were spaced toward 200 ms: {gaps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_throttle_settings_are_checked() {
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--auto-throttle-target", "2"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--auto-throttle"), "the setting needs the switch: {}", stderr(&o));
    let o =
        kumo(&["crawl", "http://127.0.0.1:1/", "--memory", "--auto-throttle", "--auto-throttle-target", "0"])
            .await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("target concurrency"), "{}", stderr(&o));
    let o = kumo(&[
        "crawl",
        "http://127.0.0.1:1/",
        "--memory",
        "--auto-throttle",
        "--auto-throttle-max-delay=-1",
    ])
    .await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--auto-throttle-max-delay"), "{}", stderr(&o));
}

/// A crawl stopped at a page limit and resumed with another delay runs at the new pace, and
/// says what changed: the state keeps what the crawl learned of a host (its Crawl-delay), not
/// the old rule. A setting a resumed crawl cannot change is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_runs_at_its_own_delay() {
    let links: String = (1..=12).map(|i| format!("<a href=\"/p{i}\">{i}</a>")).collect();
    let mut b = ServerBuilder::new().fixture("/", Fixture::html(&links));
    for i in 1..=12 {
        b = b.fixture(&format!("/p{i}"), Fixture::html("page"));
    }
    let server = b.start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let url = server.url("/");
    let run = |more: &[&str]| {
        let mut args = vec!["crawl", url.as_str(), "--state", "st", "-o", "p.jsonl", "--ignore-robots"];
        args.extend(more);
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let cwd = cwd.path().to_path_buf();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            common::kumo_in(&cwd, &args).await
        }
    };
    // The old flag, in milliseconds, still works.
    let o = run(&["--delay-ms", "400", "--max-pages", "3"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let before = server.hits().len();
    assert_eq!(before, 3);

    let o = run(&["--delay", "0s", "--strip-param", "ref"]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("strip_param was [], now [\"ref\"]") && err.contains("--fresh"), "{err}");
    assert_eq!(server.hits().len(), before, "a refused resume fetches nothing");

    let o = run(&["--delay", "0s", "--summary-json", "summary.json"]).await;
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("settings changed since the last run: delay: 400ms → 0s, max_pages: 3 → 0"),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.path().join("summary.json")).unwrap()).unwrap();
    let changed = &summary["settings_changed"];
    assert_eq!(changed[0], serde_json::json!({"name": "delay", "stored": "400ms", "now": "0s"}), "{summary}");
    let hits = server.hits();
    assert_eq!(hits.len(), 13, "the rest of the site");
    let gaps: Vec<Duration> = hits[before..].windows(2).map(|w| w[1].at.duration_since(w[0].at)).collect();
    let shortest = gaps.iter().min().unwrap();
    assert!(*shortest < Duration::from_millis(200), "no 400 ms delay after the resume: {gaps:?}");
}

/// A web of 200 names on 8 addresses, crawled with `--per-ip 2 --per-host 1`: the server's own
/// log shows no more than 2 requests in flight to an address or 1 to a host, no two starts to
/// a host closer than the delay (its Crawl-delay from its robots.txt on), robots.txt obeyed,
/// nothing misrouted or sent to a dead name, every reachable page fetched once, and about one
/// DNS question per name. The web has no trap host here, so the crawl needs no depth limit: with
/// one, a crawl paced per host is not breadth-first, and a page first found deeper than its
/// shortest path has its links cut where the truth's breadth-first search keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_ip_politeness_holds_across_a_web_of_many_names() {
    use std::collections::{BTreeSet, HashMap};

    use kumo_testsite::{Rules, SyntheticWeb, WebConfig};

    let web = SyntheticWeb::start(WebConfig { max_pages_per_host: 40, trap: false, ..Default::default() })
        .await
        .unwrap();
    let delay = Duration::from_millis(100);
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "crawl".to_string(),
        "--any-domain".into(),
        "--dns-server".into(),
        web.dns_addr().to_string(),
        "--per-ip".into(),
        "2".into(),
        "--per-host".into(),
        "1".into(),
        "--delay".into(),
        "100ms".into(),
        "--retries".into(),
        "0".into(),
        // A 5xx robots.txt pauses its host, an hour by default: the test waits 2 s.
        "--max-host-pause".into(),
        "2s".into(),
        "--state".into(),
        "st".into(),
        "-o".into(),
        "pages.jsonl".into(),
        "--no-progress".into(),
    ];
    args.extend(web.seeds());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tokio::time::timeout(Duration::from_secs(300), common::kumo_in(dir.path(), &args)).await.unwrap();
    let err = stderr(&o);
    let log = web.log();
    let rules = Rules { host_delay: delay, per_host: 1, per_ip: 2, max_depth: None, ..Default::default() };
    let judged = web.violations(&rules);
    assert!(judged.is_clean(), "{judged}\n{err}");
    // Every page a correct crawl reaches, once; and nothing but those and robots.txt.
    let truth = web.truth().reachable(None, true);
    let mut fetched: HashMap<String, usize> = HashMap::new();
    for h in log.iter().filter(|h| h.path != "/robots.txt") {
        *fetched.entry(web.url(&h.host, &h.path)).or_default() += 1;
    }
    let twice: Vec<_> = fetched.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    let got: BTreeSet<String> = fetched.into_keys().collect();
    let missed: Vec<_> = truth.difference(&got).take(5).collect();
    assert!(
        missed.is_empty(),
        "{} of {} reachable pages missed, e.g. {missed:?}\n{err}",
        truth.len() - got.len().min(truth.len()),
        truth.len()
    );
    assert_eq!(got.len(), truth.len());
    // One question per name and record type, give or take a retry.
    let queries = web.dns().queries();
    let asked: BTreeSet<(String, String)> =
        queries.iter().map(|q| (q.name.clone(), q.record_type.clone())).collect();
    assert!(
        queries.len() as f64 <= 1.05 * asked.len() as f64,
        "{} queries for {} names and types",
        queries.len(),
        asked.len()
    );
}

/// Per-IP politeness needs the host table of the memory and embedded frontiers, and direct
/// connections: through a proxy, or with the crawl in Redis, it is refused as a usage error
/// that names it, before anything is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_ip_politeness_is_refused_where_it_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 2] = [
        (&["--proxy", "http://127.0.0.1:9"], "proxy resolves names"),
        (&["--redis", "redis://127.0.0.1:9/"], "not built for crawls in Redis"),
    ];
    for (extra, says) in cases {
        let mut args =
            vec!["crawl", "http://127.0.0.1:9/", "--per-ip", "2", "-o", "out.jsonl", "--no-progress"];
        args.extend_from_slice(extra);
        let o = common::kumo_in(dir.path(), &args).await;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!dir.path().join("out.jsonl").exists(), "{extra:?}: no output is made");
    }
}
