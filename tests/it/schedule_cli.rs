//! `kumo run`: sites on their schedules. Runs come at their ticks and never overlap; every run
//! after the first asks for the known pages with their validators and writes only what
//! changed; a run cut short by kill -9 goes on when the daemon starts again, losing and
//! repeating nothing; `kumo schedule list` says where each site stands.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use common::{Watched, kumo_in, stderr, wait_until};
use kumo_testsite::{ServerBuilder, SiteConfig, TestServer};

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The shop spider with a schedule (and `extra` site settings before it).
fn scheduled_shop(server: &TestServer, extra: &str, schedule: &str) -> String {
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    // Site settings go in the [[site]] table, before its sub-tables.
    let spider = spider.replacen("output = ", &format!("{extra}\noutput = "), 1);
    format!("{spider}\n[site.schedule]\n{schedule}\n")
}

fn skus(records: &[serde_json::Value]) -> Vec<String> {
    let mut s: Vec<String> = records.iter().map(|p| p["sku"].as_str().unwrap().to_string()).collect();
    s.sort();
    s
}

/// Page requests (robots.txt aside) from hit `from` on.
fn page_hits(server: &TestServer, from: usize) -> Vec<kumo_testsite::Hit> {
    server.hits()[from..].iter().filter(|h| h.target != "/robots.txt").cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_runs_come_at_their_ticks_and_later_ones_write_only_changes() {
    let cfg = SiteConfig { pages: 20, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let unique = cfg.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shop.toml"), scheduled_shop(&server, "", "every = \"3s\"\ntimes = 3"))
        .unwrap();

    let daemon = Watched::spawn(dir.path(), &["run", "shop.toml", "--summary-json", "runs.jsonl"]);
    wait_until(Duration::from_secs(30), "the first run to end", || daemon.stderr().contains("run 1 of 3:\n"))
        .await;
    let after_first = server.hit_count();
    server.change_pages(&[3, 7]);

    // While it waits, a second daemon on the same file is refused, and the list says when.
    let second = kumo_in(dir.path(), &["run", "shop.toml"]).await;
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    assert!(stderr(&second).contains("another kumo run is running shop.toml"), "{}", stderr(&second));
    let list = kumo_in(dir.path(), &["schedule", "list", "shop.toml"]).await;
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(text.contains("every 3s") && text.contains("1 of 3") && text.contains("(in "), "{text}");

    let (status, err) = daemon.finish().await;
    assert!(status.success(), "{err}");
    assert!(err.contains("its schedule is done (3 runs)"), "{err}");

    // The ticks: 0 s, 3 s, 6 s from the first, each run after the one before had ended.
    let runs = lines(&dir.path().join("runs.jsonl"));
    assert_eq!(runs.len(), 3, "{runs:?}");
    let ms = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    let first = ms(&runs[0], "started_ms");
    for (k, r) in runs.iter().enumerate() {
        assert_eq!(r["run"], k as u64 + 1);
        let late = ms(r, "started_ms") - first;
        let tick = 3_000 * k as u64;
        assert!((tick..tick + 2_500).contains(&late), "run {} started {late} ms after the first", k + 1);
        if k > 0 {
            assert!(ms(r, "started_ms") >= ms(&runs[k - 1], "ended_ms"), "runs overlap: {runs:?}");
        }
    }

    // Runs 2 and 3 asked for every known page, each with its validators.
    let later = page_hits(&server, after_first);
    assert_eq!(later.len(), 2 * unique, "each page once per later run");
    assert!(later.iter().all(|h| h.if_none_match.is_some()), "all conditional");
    let changes: Vec<_> = runs.iter().map(|r| r["summary"]["changes"].clone()).collect();
    assert_eq!(
        (changes[1]["changed"].as_u64(), changes[1]["unchanged"].as_u64()),
        (Some(2), Some(unique as u64 - 2))
    );
    assert_eq!(
        (changes[2]["changed"].as_u64(), changes[2]["unchanged"].as_u64()),
        (Some(0), Some(unique as u64))
    );

    // The first run wrote every product; the second only the two that changed; the third none.
    let products = lines(&dir.path().join("products.jsonl"));
    assert_eq!(products.len(), unique + 2);
    assert_eq!(skus(&products[unique..]), ["SKU-000003", "SKU-000007"]);

    let list = kumo_in(dir.path(), &["schedule", "list", "shop.toml", "--json"]).await;
    let sites: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!((sites[0]["runs"].as_str(), sites[0]["state"].as_str()), (Some("3 of 3"), Some("done")));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_midway_goes_on_when_the_daemon_restarts() {
    let cfg = SiteConfig { pages: 40, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let truth = cfg.ground_truth();
    let unique = truth.unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // One request at a time, 40 ms apart: a run takes about two seconds, half the period.
    let spider = scheduled_shop(&server, "per_host = 1\ndelay_ms = 40", "every = \"4s\"\ntimes = 3");
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let args = ["run", "shop.toml", "--summary-json", "runs.jsonl"];

    let mut daemon = Watched::spawn(dir.path(), &args);
    wait_until(Duration::from_secs(30), "the first run to end", || daemon.stderr().contains("run 1 of 3:\n"))
        .await;
    let after_first = server.hit_count();
    server.change_pages(&[2, 5, 9, 33]);
    wait_until(Duration::from_secs(30), "the second run to be under way", || {
        page_hits(&server, after_first).len() >= 8
    })
    .await;
    daemon.child.start_kill().unwrap();
    let (_, err) = daemon.finish().await;
    assert!(err.contains("run 2 of 3 starts"), "{err}");

    let list = kumo_in(dir.path(), &["schedule", "list", "shop.toml"]).await;
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("1 of 3") && text.contains("cut short"), "{text}");

    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("run 2 of 3 goes on (it was cut short)"), "{}", stderr(&out));
    let runs = lines(&dir.path().join("runs.jsonl"));
    let numbers: Vec<u64> = runs.iter().map(|r| r["run"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [1, 2, 3]);

    // Nothing lost, nothing twice: the first run's products, then the four that changed once.
    let products = lines(&dir.path().join("products.jsonl"));
    assert_eq!(products.len(), unique + 4, "{:?}", skus(&products[unique.min(products.len())..]));
    assert_eq!(skus(&products[unique..]), ["SKU-000002", "SKU-000005", "SKU-000009", "SKU-000033"]);
    // Every known page was asked for again, conditionally.
    let asked: BTreeSet<String> = page_hits(&server, after_first)
        .into_iter()
        .filter(|h| h.if_none_match.is_some())
        .map(|h| h.target)
        .collect();
    let first: BTreeSet<String> = page_hits(&server, 0)[..unique].iter().map(|h| h.target.clone()).collect();
    assert_eq!(asked, first, "every page of the first run asked for again");
    server.shutdown().await;
}

/// A site's `max_pages` counts per run: each run goes on with the round the run before left
/// at its limit and fetches as many pages again. (The limit once counted the round's pages,
/// so run 2 stopped "after 0.00s" with the rest still queued.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pages_counts_per_run() {
    let cfg = SiteConfig { pages: 60, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The command line's --max-pages holds over the file's, as crawl settings do.
    let spider = scheduled_shop(&server, "max_pages = 50\nconcurrency = 4", "every = \"1s\"\ntimes = 3");
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let out =
        kumo_in(dir.path(), &["run", "shop.toml", "--summary-json", "runs.jsonl", "--max-pages", "10"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = lines(&dir.path().join("runs.jsonl"));
    assert_eq!(runs.len(), 3, "{runs:?}");
    for r in &runs {
        let s = &r["summary"];
        assert_eq!(
            (s["stopped_by"].as_str(), s["pages_this_run"].as_u64()),
            (Some("max-pages"), Some(10)),
            "{s}"
        );
    }
    let pages = page_hits(&server, 0);
    let distinct: BTreeSet<&str> = pages.iter().map(|h| h.target.as_str()).collect();
    assert_eq!((pages.len(), distinct.len()), (30, 30), "ten new pages a run, none twice");
    assert_eq!(lines(&dir.path().join("products.jsonl")).len(), 30);
    server.shutdown().await;
}

/// A site's `max_items` counts per run too, and is exact: the items of pages in flight at a
/// run's limit are held in the state and written first by the next run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_items_counts_per_run() {
    let cfg = SiteConfig { pages: 60, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = scheduled_shop(&server, "max_items = 7\nconcurrency = 4", "every = \"1s\"\ntimes = 3");
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let out = kumo_in(dir.path(), &["run", "shop.toml", "--summary-json", "runs.jsonl"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = lines(&dir.path().join("runs.jsonl"));
    let stops: Vec<_> = runs.iter().map(|r| r["summary"]["stopped_by"].clone()).collect();
    assert_eq!(stops, ["max-items"; 3]);
    let products = lines(&dir.path().join("products.jsonl"));
    assert_eq!(products.len(), 21, "seven a run");
    let urls: BTreeSet<String> = page_hits(&server, 0).into_iter().map(|h| h.target).collect();
    assert_eq!(urls.len(), page_hits(&server, 0).len(), "no page fetched twice");
    server.shutdown().await;
}

/// The kept pages' records, by path: (interval_ms, checked_ms).
async fn kept_pages(cwd: &Path, state: &str) -> std::collections::BTreeMap<String, (u64, u64)> {
    let out = kumo_in(cwd, &["frontier", "pages", "--state", state, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let p: serde_json::Value = serde_json::from_str(l).unwrap();
            let url = url::Url::parse(p["url"].as_str().unwrap()).unwrap();
            (url.path().to_string(), (p["interval_ms"].as_u64().unwrap(), p["checked_ms"].as_u64().unwrap()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_asked_again_when_their_rule_says() {
    let cfg = SiteConfig { pages: 20, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = scheduled_shop(&server, "", "every = \"1s\"\ntimes = 4");
    let spider = format!(
        "{spider}\n[site.revisit]\nevery = \"1d\"\nrules = [{{ match = '/page/1\\.html$', every = \"1s\" }}]\n"
    );
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let out = kumo_in(dir.path(), &["run", "shop.toml", "--state", "st"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("1 pages asked for again"), "{}", stderr(&out));

    let asked = |path: &str| server.hits().iter().filter(|h| h.target == path).count();
    assert_eq!(asked("/page/1.html"), 4, "every run: its rule says every second");
    assert_eq!((asked("/page/2.html"), asked("/index.html")), (1, 1), "the others once: daily");
    let kept = kept_pages(dir.path(), "st/shop").await;
    assert_eq!(kept["/page/1.html"].0, 1_000);
    assert_eq!(kept["/page/2.html"].0, 86_400_000);
    assert!(kept["/page/1.html"].1 > kept["/page/2.html"].1, "checked again later: {kept:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_intervals_shrink_for_changed_pages_and_grow_for_the_rest() {
    let cfg = SiteConfig { pages: 20, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = scheduled_shop(&server, "", "every = \"3s\"\ntimes = 2");
    let spider = format!(
        "{spider}\n[site.revisit]\nevery = \"3s\"\nadaptive = {{ min = \"1s\", max = \"1h\", rate = 0.4 }}\n"
    );
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let daemon = Watched::spawn(dir.path(), &["run", "shop.toml", "--state", "st"]);
    wait_until(Duration::from_secs(30), "the first run to end", || daemon.stderr().contains("run 1 of 2:\n"))
        .await;
    server.change_pages(&[3]);
    let (status, err) = daemon.finish().await;
    assert!(status.success(), "{err}");

    let kept = kept_pages(dir.path(), "st/shop").await;
    assert_eq!(kept["/page/3.html"].0, 1_800, "changed: 3 s less 40 %");
    assert_eq!(kept["/page/4.html"].0, 4_200, "unchanged: 3 s and 40 %");
    assert!(kept.values().filter(|(i, _)| *i == 4_200).count() >= 19, "{kept:?}");
    server.shutdown().await;
}

/// The example file reads, and a site that never ran says when it will.
#[tokio::test]
async fn the_example_schedule_lists_as_new() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let file = root.join("examples/shop_schedule.toml");
    let out = kumo_in(dir.path(), &["schedule", "list", file.to_str().unwrap()]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("shop  every 10s  0 of 3") && text.contains("when kumo run starts"), "{text}");
    // A cron pattern on a time zone's clock: its first run is the pattern's first time from
    // `start` (a local time there), 06:30 in Paris on Thursday 2099-01-01, 05:30 UTC.
    let news = "[[site]]\nname = \"news\"\nseeds = [\"http://127.0.0.1:9/\"]\n[site.schedule]\n\
                cron = \"30 6 * * MON-FRI\"\ntz = \"Europe/Paris\"\nstart = \"2099-01-01T00:00:00\"\n";
    std::fs::write(dir.path().join("news.toml"), news).unwrap();
    let out = kumo_in(dir.path(), &["schedule", "list", "news.toml", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cron \\\"30 6 * * MON-FRI\\\" (Europe/Paris)"), "{text}");
    assert!(text.contains("2099-01-01T05:30:00Z"), "{text}");
    let out = kumo_in(dir.path(), &["schedule", "list", "missing.toml"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no spider file or folder missing.toml"), "{}", stderr(&out));
}
