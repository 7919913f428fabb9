//! `kumo crawl … --recrawl`: a crawl that is done asks for every page it fetched again with
//! the validators of its last answer; unchanged pages (304) are neither parsed nor written
//! again, changed ones are, and the summary counts both.

use crate::common;

use std::path::Path;

use common::{kumo_in, stderr};
use kumo_testsite::{Hit, ServerBuilder, SiteConfig, TestServer};

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn summary(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `kumo crawl URL -o pages.jsonl --state st` in `dir`, with `extra`.
fn crawl_in(dir: &Path, url: &str, extra: &[&str]) -> impl Future<Output = std::process::Output> + use<> {
    let mut args = vec!["crawl", url, "-o", "pages.jsonl", "--state", "st", "--no-progress"];
    args.extend(extra);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cwd = dir.to_path_buf();
    async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kumo_in(&cwd, &args).await
    }
}

/// What the site was asked for since its hit number `from`, robots.txt left out.
fn asked_since(server: &TestServer, from: usize) -> Vec<Hit> {
    server.hits()[from..].iter().filter(|h| h.target != "/robots.txt").cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_asks_every_page_again_and_writes_only_what_changed() {
    let cfg = SiteConfig { pages: 100, page_bytes: 2_000, validators: true, ..SiteConfig::default() };
    let unique = cfg.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let run = |extra: &[&str]| {
        let fixed = ["--summary-json", "summary.json", "--warc", "archive"];
        crawl_in(dir.path(), &url, &[&fixed[..], extra].concat())
    };
    let pages_asked = |from: usize| asked_since(&server, from);

    // The first run is a whole crawl that keeps each page's record.
    let out = run(&["--recrawl"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("asked for again"), "{}", stderr(&out));
    assert_eq!(lines(&dir.path().join("pages.jsonl")).len(), unique);
    let before = server.hits().len();

    // Pages 1 to 10 change (none has a print variant: only multiples of 50 do).
    server.change_pages(&(1..=10).collect::<Vec<_>>());
    let out = run(&["--recrawl"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("recrawl: {unique} pages asked for again")), "{}", stderr(&out));
    let asked = pages_asked(before);
    assert_eq!(asked.len(), unique, "every known page asked once, nothing else");
    assert!(
        asked.iter().all(|h| h.if_none_match.is_some() && h.if_modified_since.is_some()),
        "all conditional"
    );
    let records = lines(&dir.path().join("pages.jsonl"));
    let again: Vec<&str> = records[unique..].iter().map(|r| r["url"].as_str().unwrap()).collect();
    let mut expected: Vec<String> = (1..=10).map(|k| server.url(&format!("/page/{k}.html"))).collect();
    let mut got: Vec<String> = again.iter().map(|s| s.to_string()).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected, "only the changed pages are written again");
    let s = summary(&dir.path().join("summary.json"));
    let changes = &s["changes"];
    assert_eq!(changes["changed"], 10, "{changes}");
    assert_eq!(changes["unchanged"], unique as u64 - 10, "{changes}");
    assert_eq!((changes["new"].as_u64(), changes["gone"].as_u64()), (Some(0), Some(0)), "{changes}");
    assert!(changes["bytes_saved"].as_u64().unwrap() > 1_000 * (unique as u64 - 10), "{changes}");
    assert!(stderr(&out).contains("10 changed"), "{}", stderr(&out));
    // Archived, the second round after the first in the same collection: the changed pages
    // as responses, the unchanged ones as revisits of what the server did not send again.
    let mut files: Vec<_> =
        std::fs::read_dir(dir.path().join("archive")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.iter().all(|f| f.to_string_lossy().ends_with(".warc.gz")), "all closed: {files:?}");
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for file in &files {
        common::run_tool("warcio", &["check", file.to_str().unwrap()]);
        for r in common::warc_index(file, "warc-type,warc-profile") {
            let profile = r.get("warc-profile").and_then(|p| p.as_str()).unwrap_or("");
            let kind =
                format!("{} {}", r["warc-type"].as_str().unwrap(), profile.rsplit('/').next().unwrap());
            *kinds.entry(kind.trim().to_string()).or_default() += 1;
        }
    }
    // robots.txt once: the state keeps its answer for a day (RFC 9309's cache limit).
    let responses = (unique + 1) + 10;
    assert_eq!(
        kinds.get("response"),
        Some(&responses),
        "pages and robots.txt, then the changed ones: {kinds:?}"
    );
    assert_eq!(kinds.get("revisit server-not-modified"), Some(&(unique - 10)), "{kinds:?}");

    // Nothing changed since: every page answers 304, nothing is written; the changed pages
    // were asked with their new validators.
    let before = server.hits().len();
    let out = run(&["--recrawl"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pages_asked(before).len(), unique);
    assert_eq!(lines(&dir.path().join("pages.jsonl")).len(), unique + 10);
    let changes = summary(&dir.path().join("summary.json"))["changes"].clone();
    assert_eq!((changes["unchanged"].as_u64(), changes["changed"].as_u64()), (Some(unique as u64), Some(0)));
    server.shutdown().await;
}

#[tokio::test]
async fn a_recrawl_needs_a_state_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = kumo_in(dir.path(), &["crawl", "http://127.0.0.1:9/", "--memory", "--recrawl"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--recrawl needs a state directory"), "{}", stderr(&out));
}

/// A crawl run without --recrawl kept no records: a --recrawl says so, and keeps them from now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_of_a_crawl_without_records_says_so() {
    let (server, truth) = common::small_site(20).await;
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let args = ["crawl", url.as_str(), "-o", "pages.jsonl", "--state", "st", "--no-progress"];
    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let mut again = args.to_vec();
    again.push("--recrawl");
    let out = kumo_in(dir.path(), &again).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no page of this crawl has a record yet"), "{}", stderr(&out));
    assert_eq!(server.hit_count(), truth.unique_urls + 1, "the first run only: pages and robots.txt");
}

/// A spider file's sites re-crawl too: the second run writes only the changed products.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_file_recrawls_each_site() {
    let cfg = SiteConfig { pages: 40, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let truth = cfg.ground_truth();
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    std::fs::write(dir.path().join("shop.toml"), spider).unwrap();
    let args = ["crawl", "shop.toml", "--recrawl", "--summary-json", "summary.json"];
    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = lines(&dir.path().join("products.jsonl"));
    assert_eq!(first.len(), truth.unique_urls, "a product per page, print variants included");

    server.change_pages(&[3, 7]);
    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("site \"shop\": recrawl:"), "{}", stderr(&out));
    let all = lines(&dir.path().join("products.jsonl"));
    let mut again: Vec<&str> = all[first.len()..].iter().map(|p| p["sku"].as_str().unwrap()).collect();
    again.sort();
    assert_eq!(again, ["SKU-000003", "SKU-000007"], "only the changed products again");
    let changes = &summary(&dir.path().join("summary.json"))["shop"]["changes"];
    assert_eq!(
        (changes["changed"].as_u64(), changes["unchanged"].as_u64()),
        (Some(2), Some(truth.unique_urls as u64 - 2))
    );
    server.shutdown().await;
}

/// `emit = "all"`: a re-crawl asks for each page whole and writes every product again, still
/// telling the changed pages from the unchanged ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emit_all_writes_unchanged_pages_items_again() {
    let cfg = SiteConfig { pages: 30, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let unique = cfg.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price"));
    std::fs::write(dir.path().join("shop.toml"), format!("{spider}\n[site.revisit]\nemit = \"all\"\n"))
        .unwrap();
    let args = ["crawl", "shop.toml", "--recrawl", "--summary-json", "summary.json"];
    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let before = server.hits().len();

    server.change_pages(&[3]);
    let out = kumo_in(dir.path(), &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("asked for again, whole (emit = \"all\")"), "{}", stderr(&out));
    let asked: Vec<_> =
        server.hits()[before..].iter().filter(|h| h.target != "/robots.txt").cloned().collect();
    assert_eq!(asked.len(), unique);
    assert!(
        asked.iter().all(|h| h.if_none_match.is_none() && h.if_modified_since.is_none()),
        "unconditional"
    );
    let all = lines(&dir.path().join("products.jsonl"));
    assert_eq!(all.len(), 2 * unique, "every product again");
    let changes = &summary(&dir.path().join("summary.json"))["shop"]["changes"];
    assert_eq!(
        (changes["changed"].as_u64(), changes["unchanged"].as_u64()),
        (Some(1), Some(unique as u64 - 1))
    );
    server.shutdown().await;
}

/// `kumo crawl URL --recrawl` takes re-visit rules as a spider file's `[site.revisit]` does:
/// the index on every run, the rest daily, so the second run asks for the index alone; with
/// `--emit all` it asks for it whole and writes its record again. Bad values are usage errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_crawl_takes_its_revisit_rules_from_flags() {
    let cfg = SiteConfig { pages: 30, page_bytes: 1_000, validators: true, ..SiteConfig::default() };
    let unique = cfg.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(cfg).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let rules = ["--recrawl", "--revisit", r"/index\.html$=0s", "--revisit-every", "1d"];
    let run = |extra: &[&str]| crawl_in(dir.path(), &url, &[&rules[..], extra].concat());
    let asked_since = |from: usize| asked_since(&server, from);

    let out = run(&[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lines(&dir.path().join("pages.jsonl")).len(), unique);
    let before = server.hits().len();
    let out = run(&[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("recrawl: 1 pages asked for again"), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("({} not due yet", unique - 1)), "{}", stderr(&out));
    let asked = asked_since(before);
    assert_eq!(asked.iter().map(|h| h.target.as_str()).collect::<Vec<_>>(), ["/index.html"]);
    assert!(asked[0].if_none_match.is_some(), "asked with its validators");
    assert_eq!(lines(&dir.path().join("pages.jsonl")).len(), unique, "unchanged: nothing written");

    let before = server.hits().len();
    let out = run(&["--emit", "all"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = asked_since(before);
    assert_eq!(asked.iter().map(|h| h.target.as_str()).collect::<Vec<_>>(), ["/index.html"]);
    assert!(asked[0].if_none_match.is_none(), "asked whole");
    assert_eq!(lines(&dir.path().join("pages.jsonl")).len(), unique + 1, "its record written again");

    for (bad, says) in [
        (&["--revisit", "/news/"][..], "REGEX=DURATION"),
        (&["--revisit", "(=1h"][..], "bad regex"),
        (&["--revisit", "/a=soon"][..], "not a duration"),
        (&["--revisit-adaptive", "1h,30d,lots"][..], "not a rate"),
        (&["--revisit-adaptive", "1d,1h,0.2"][..], "--revisit-adaptive"),
    ] {
        let out = run(bad).await;
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{bad:?}: {}", stderr(&out));
    }
    let out = kumo_in(dir.path(), &["crawl", url.as_str(), "--revisit-every", "1d", "--memory"]).await;
    assert_eq!(out.status.code(), Some(2), "a rule without --recrawl: {}", stderr(&out));
}
