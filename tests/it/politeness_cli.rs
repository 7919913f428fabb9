//! The real `kumo` binary's politeness flags: the adaptive throttle spaces a slow host's
//! requests toward its latency, and its settings are checked.

use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

use crate::common;
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

/// A web of 200 names on 8 addresses, crawled with `--broad --per-ip 2 --per-host 1` and no
/// address gap (`--ip-delay 0s`: under the full test run's load, a request's robots.txt check
/// or a new connection can take longer than the downloaders' margin, and the server then sees
/// two starts to an address a few ms closer than the gap): the server's own
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
        "--broad".into(),
        "--ip-delay".into(),
        "0s".into(),
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
    let rules = Rules { host_delay: delay, per_host: 1, per_ip: 2, ..Default::default() };
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

/// `--broad`'s own rule for an address: one request at a time, 100 ms after the answer to the
/// one before. On a web whose slow hosts answer after 400 ms, the server's log shows no two
/// starts to an address closer than 100 ms and never two in flight, because a request to an
/// address leaves only once the one before it was answered (and so had arrived). With two in
/// flight, a request that left while a slow one was out could arrive early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broads_one_request_per_address_holds_its_gap_at_the_server() {
    use kumo_testsite::{Rules, SyntheticWeb, WebConfig};

    let cfg = WebConfig {
        hosts: 60,
        addresses: 4,
        max_pages_per_host: 8,
        slow_hosts: 6,
        trap: false,
        ..Default::default()
    };
    let web = SyntheticWeb::start(cfg).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dns = web.dns_addr().to_string();
    let mut args = vec![
        "crawl",
        "--broad",
        "--dns-server",
        &dns,
        "--delay",
        "100ms",
        "--retries",
        "0",
        "--max-host-pause",
        "2s",
    ];
    args.extend(["--state", "st", "-o", "pages.jsonl", "--no-progress"]);
    let seeds = web.seeds();
    args.extend(seeds.iter().map(String::as_str));
    let o = tokio::time::timeout(Duration::from_secs(120), common::kumo_in(dir.path(), &args)).await.unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let ms = Duration::from_millis;
    let rules =
        Rules { host_delay: ms(100), per_host: 1, per_ip: 1, ip_delay: ms(100), ..Default::default() };
    let judged = web.violations(&rules);
    assert!(judged.is_clean(), "{judged}\n{err}");
    assert!(web.log().len() > 100, "a crawl, not a few requests: {}", web.log().len());
}

/// Per-IP politeness needs the host table of the memory and embedded frontiers, and direct
/// connections; page budgets need that table too. Through a proxy, or with the crawl in Redis,
/// they are refused as usage errors that name them, before anything is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_ip_politeness_and_budgets_are_refused_where_they_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let redis = "redis://127.0.0.1:9/";
    let cases: [(&[&str], &str); 4] = [
        (
            &["--broad", "--redis", redis],
            "per-IP politeness (--per-ip, --ip-delay) is not built for crawls in Redis",
        ),
        (&["--per-ip", "2", "--proxy", "http://127.0.0.1:9"], "proxy resolves names"),
        (
            &["--per-ip", "2", "--redis", redis],
            "per-IP politeness (--per-ip, --ip-delay) is not built for crawls in Redis",
        ),
        (
            &["--max-pages-per-domain", "9", "--redis", redis],
            "a page budget (--max-pages-per-host, --max-pages-per-domain) is not built",
        ),
    ];
    for (extra, says) in cases {
        let mut args = vec!["crawl", "http://127.0.0.1:9/", "-o", "out.jsonl", "--no-progress"];
        args.extend_from_slice(extra);
        let o = common::kumo_in(dir.path(), &args).await;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!dir.path().join("out.jsonl").exists(), "{extra:?}: no output is made");
    }
}

/// The broad crawl as the issue that built it asks: a web of 2 000 names (a trap, a spam farm,
/// dead names, every kind of robots.txt) on 50 addresses, crawled with `--broad --per-ip 2
/// --per-host 1 --delay 300ms` and page budgets, killed with SIGKILL twice and run a third
/// time to the end. From the server's log: no two starts to a host closer than its delay (its
/// Crawl-delay from its robots.txt on, across the kills too), 1 in flight to a host, 2 to an
/// address, robots.txt obeyed, nothing misrouted or sent to a dead name. From the output: every
/// page once, every link of a page followed unless robots.txt, a dead name or a used-up budget
/// stops it, and no host or domain past its budget. About one DNS question per name and type
/// over the whole crawl: the answers are kept in the state, so a resumed run asks only for
/// names it has not seen. As in `per_ip_politeness_holds_across_a_web_of_many_names`, no
/// address gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broad_crawl_of_two_thousand_names_holds_across_two_kills() {
    use std::collections::{BTreeSet, HashMap, HashSet};

    use kumo_testsite::{HostKind, PageBudgets, Rules, SyntheticWeb, WebConfig};

    let cfg =
        WebConfig { hosts: 2_000, addresses: 50, seeds: 20, max_pages_per_host: 40, ..Default::default() };
    let web = SyntheticWeb::start(cfg).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dns = web.dns_addr().to_string();
    let mut args = vec![
        "crawl",
        "--broad",
        "--ip-delay",
        "0s",
        "--dns-server",
        &dns,
        "--per-ip",
        "2",
        "--per-host",
        "1",
        "--delay",
        "300ms",
        "--max-pages-per-host",
        "20",
        "--max-pages-per-domain",
        "50",
        "--max-host-pause",
        "2s",
        "--retries",
        "0",
        "--state",
        "st",
        "-o",
        "pages.jsonl",
        "--no-progress",
        "--summary-json",
        "summary.json",
    ];
    let seeds = web.seeds();
    args.extend(seeds.iter().map(String::as_str));
    for stop_at in [1_500, 4_000] {
        let run = common::spawn_in(dir.path(), &args);
        common::wait_until(Duration::from_secs(120), "part of the crawl", || web.hit_count() >= stop_at)
            .await;
        common::send_signal(&run, "KILL");
        assert_eq!(common::finish(run).await.status.code(), None, "killed by the signal");
    }
    let o = tokio::time::timeout(Duration::from_secs(300), common::kumo_in(dir.path(), &args)).await.unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");

    let rules =
        Rules { host_delay: Duration::from_millis(300), per_host: 1, per_ip: 2, ..Default::default() };
    let judged = web.violations(&rules);
    // Budgets and the trap make requests outside a breadth-first truth: the closure below
    // judges those.
    let broken = [
        &judged.host_gap,
        &judged.host_overlap,
        &judged.ip_overlap,
        &judged.disallowed,
        &judged.misrouted,
        &judged.dead_names,
    ];
    assert!(broken.iter().all(|t| t.count == 0), "{judged}\n{err}");

    let text = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    let mut per_url: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *per_url.entry(v["url"].as_str().unwrap().to_string()).or_default() += 1;
    }
    let twice: Vec<_> = per_url.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "written more than once: {twice:?}");
    let fetched: HashSet<String> = per_url.into_keys().collect();
    let budgets = PageBudgets { per_host: Some(20), per_domain: Some(50) };
    let closure = web.truth().closure(&fetched, budgets);
    assert!(closure.holds(), "{} pages: {closure}\n{err}", fetched.len());
    assert!(closure.budgets_used > 0, "the trap and the big hosts use up their budgets");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    assert!(
        summary["skipped"]["budget"].as_u64().unwrap_or(0) > 0,
        "links past budgets are counted: {summary}"
    );
    // What the hosts came to: every one done with, and on the web's addresses.
    let hosts = &summary["hosts"];
    assert_eq!(hosts["with_work"], 0, "{hosts}");
    assert!(hosts["known"].as_u64().unwrap() > 1_000 && hosts["crawled"].as_u64().unwrap() > 0, "{hosts}");
    assert!(
        (1..=51).contains(&hosts["addresses"].as_u64().unwrap()),
        "50 addresses and the refusing one: {hosts}"
    );
    assert!(err.contains(" known, 0 with work left, on "), "{err}");

    // The names without an address that a written page links to are on the failure list
    // as `dns`, and none of their pages is written.
    let o = common::kumo_in(dir.path(), &["failures", "list", "--state", "st", "--json"]).await;
    let failures: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("failures as JSON");
    let dns_failed: HashSet<&str> = failures
        .iter()
        .filter(|f| f["kind"] == "dns")
        .filter_map(|f| f["url"].as_str()?.split('/').nth(2)?.split(':').next())
        .collect();
    let truth = web.truth();
    let dead: Vec<&str> =
        [HostKind::NxDomain, HostKind::Silent].into_iter().flat_map(|k| truth.names(k)).collect();
    let linked_dead: Vec<&&str> = dead.iter().filter(|n| closure.linked_hosts.contains(**n)).collect();
    assert!(!linked_dead.is_empty(), "the crawl reached a name without an address");
    for name in linked_dead {
        assert!(dns_failed.contains(*name), "{name} is not a `dns` failure: {failures:?}");
        assert!(!fetched.iter().any(|u| u.contains(&format!("//{name}:"))), "a page of {name} was written");
    }

    // About one question per name and record type over the three runs.
    let queries = web.dns().queries();
    let names: BTreeSet<(&str, &str)> =
        queries.iter().map(|q| (q.name.as_str(), q.record_type.as_str())).collect();
    assert!(
        queries.len() as f64 <= 1.05 * names.len() as f64,
        "{} queries for {} names and types",
        queries.len(),
        names.len()
    );
}

/// `kumo testsite --web` as a user runs it: it prints the start URLs and its DNS server, a
/// broad crawl of it goes through that server, and on Ctrl-C it judges the crawl's politeness
/// by the rules given and writes what it found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_site_serves_a_web_and_judges_a_crawl_of_it() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let site_args = [
        "testsite",
        "--web",
        "60",
        "--web-addresses",
        "4",
        "--web-seeds",
        "6",
        "--web-judge",
        "judged.json",
        "--judge-delay",
        "200ms",
        "--judge-per-ip",
        "2",
    ];
    let mut site = common::spawn_in(dir.path(), &site_args);
    let mut lines = BufReader::new(site.stdout.take().unwrap()).lines();
    let read = async |lines: &mut tokio::io::Lines<_>| {
        tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap()
    };
    let seeds: String = read(&mut lines).await;
    let dns: String = read(&mut lines).await;
    assert_eq!(seeds.split(' ').count(), 6, "{seeds}");
    let mut args = vec!["crawl", "--broad", "--dns-server", &dns, "--delay", "200ms", "--max-pages", "40"];
    args.extend([
        "--ip-delay",
        "0s",
        "--max-host-pause",
        "1s",
        "--memory",
        "-o",
        "pages.jsonl",
        "--no-progress",
    ]);
    args.extend(seeds.split(' '));
    let o = tokio::time::timeout(Duration::from_secs(120), common::kumo_in(dir.path(), &args)).await.unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    common::send_signal(&site, "INT");
    let ended = common::finish(site).await;
    assert!(ended.status.success(), "{}", stderr(&ended));
    let judged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("judged.json")).unwrap()).unwrap();
    let written = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap().lines().count();
    assert!(judged["requests"].as_u64().unwrap() as usize > written, "pages and robots.txt: {judged}");
    for kind in ["host_gap", "host_overlap", "ip_overlap", "disallowed", "misrouted", "dead_names"] {
        assert_eq!(judged["violations"][kind]["count"], 0, "{kind}: {judged}");
    }
}

/// A broad crawl keeps no idle connection, and bounds those in use by its open-file limit:
/// 1 500 hosts crawled by a process allowed 512 open files, up to 480 requests at once, all
/// answer with no error. (With connections kept idle for each host's next request, as
/// before, the crawl ran out of open files and its connections and DNS lookups failed.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broad_crawl_of_many_hosts_fits_a_small_open_file_limit() {
    use kumo_testsite::{RobotsMix, SyntheticWeb, WebConfig};

    let cfg = WebConfig {
        hosts: 1_500,
        addresses: 30,
        seeds: 1_500,
        max_pages_per_host: 3,
        even_addresses: true,
        refusing_hosts: 0,
        slow_hosts: 0,
        nxdomain_names: 0,
        silent_names: 0,
        trap: false,
        spam_domains: 0,
        robots: RobotsMix { server_error: 0, crawl_delay: 0, ..Default::default() },
        ..Default::default()
    };
    let web = SyntheticWeb::start(cfg).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), web.seeds().join("\n")).unwrap();
    let dns = web.dns_addr().to_string();
    let args = [
        "crawl",
        "--broad",
        "--dns-server",
        &dns,
        "--delay",
        "0s",
        "--ip-delay",
        "0s",
        "--per-ip",
        "16",
        "-c",
        "480",
        "--seeds-file",
        "seeds.txt",
        "--state",
        "st",
        "-o",
        "pages.jsonl",
        "--no-progress",
        "--summary-json",
        "summary.json",
    ];
    let o = common::kumo_with_open_files(dir.path(), &args, 512).await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["errors"], serde_json::json!({}), "{err}");
    assert_eq!(summary["failed"], 0, "{err}");
    let hosts = &summary["hosts"];
    assert_eq!(hosts["crawled"], 1_500, "every host answered: {hosts}");
    let pages = summary["pages"].as_u64().unwrap();
    assert_eq!(pages as usize, web.hit_count() - 1_500, "every request but robots.txt was a page");
}
