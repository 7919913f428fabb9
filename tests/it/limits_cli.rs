//! `--max-items` and `--max-errors` stop a crawl gracefully: at exactly so many items written
//! (exit 0; the rest kept in the state for a resume), and by errors counted (exit 4, said on
//! standard error), each named in the summary. Limits take memory by use, not by their size,
//! and absurd or unsafe values are usage errors (exit 2).

use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};

use crate::common;
use common::{kumo, kumo_in, stderr};

fn summary(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_items_writes_exactly_that_many() {
    let site = SiteConfig { pages: 300, ..Default::default() };
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (out, sum) = (dir.path().join("pages.jsonl"), dir.path().join("summary.json"));
    let o = kumo(&[
        "crawl",
        &server.url("/index.html"),
        "--memory",
        "-c",
        "8",
        "--max-items",
        "20",
        "-o",
        out.to_str().unwrap(),
        "--summary-json",
        sum.to_str().unwrap(),
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 20);
    let s = summary(&sum);
    assert_eq!(s["stopped_by"], "max-items");
    assert_eq!(s["items"], 20, "the summary counts what was written");
}

/// The URLs of a page-record output, in file order.
fn urls(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].to_string()).collect()
}

/// A durable crawl of `start` in `dir` into `pages.jsonl`, with `--max-items limit`.
async fn crawl_in(dir: &std::path::Path, start: &str, limit: Option<&str>) -> std::process::Output {
    let mut args =
        vec!["crawl", start, "--state", "st", "-c", "8", "-o", "pages.jsonl", "--summary-json", "s.json"];
    if let Some(n) = limit {
        args.extend(["--max-items", n]);
    }
    let o = kumo_in(dir, &args).await;
    assert!(o.status.success(), "{limit:?}: {}", stderr(&o));
    o
}

/// Items of pages in flight when the limit is reached are held in the crawl's state, not
/// written and not lost: a resume with a higher limit writes them first, and one without a
/// limit writes the rest, every page once. The limit counts the crawl's items, as
/// `--max-pages` counts its pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_with_a_higher_max_items_writes_the_rest_once() {
    let site = SiteConfig { pages: 300, ..Default::default() };
    let total = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (dir, start) = (tmp.path(), server.url("/index.html"));
    let (out, sum) = (dir.join("pages.jsonl"), dir.join("s.json"));

    crawl_in(dir, &start, Some("77")).await;
    let first = urls(&out);
    assert_eq!(first.len(), 77);
    let s = summary(&sum);
    assert_eq!((s["stopped_by"].as_str(), s["items"].as_u64()), (Some("max-items"), Some(77)));
    assert!(s["items_held"].as_u64().unwrap() > 0, "pages in flight found more: {s}");

    // The same limit again: reached before anything is fetched.
    let hits = server.hit_count();
    crawl_in(dir, &start, Some("77")).await;
    assert_eq!(urls(&out), first);
    assert_eq!(server.hit_count(), hits, "nothing fetched");

    crawl_in(dir, &start, Some("150")).await;
    let second = urls(&out);
    assert_eq!(second.len(), 150);
    assert_eq!(second[..77], first[..], "the first run's items stay as they were");
    assert_eq!(summary(&sum)["items"], 150, "the crawl's items, both runs'");

    crawl_in(dir, &start, None).await;
    let all = urls(&out);
    assert_eq!(all[..150], second[..]);
    let unique: std::collections::BTreeSet<&String> = all.iter().collect();
    assert_eq!((all.len(), unique.len()), (total, total), "every page once");
    assert_eq!(summary(&sum)["items_held"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_errors_stops_the_crawl_and_exits_4() {
    let links: String = (0..40).map(|i| format!(r#"<a href="/broken/{i}">{i}</a>"#)).collect();
    let mut b = ServerBuilder::new().fixture("/", Fixture::html(&links));
    for i in 0..40 {
        // The connection is cut before the answer: a fetch error each time.
        b = b.fixture(&format!("/broken/{i}"), Fixture::html("never seen").reset_after(0));
    }
    let server = b.start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sum = dir.path().join("summary.json");
    let o = kumo(&[
        "crawl",
        &server.url("/"),
        "--memory",
        "--ignore-robots",
        "-c",
        "2",
        "--retries",
        "0",
        "--max-errors",
        "5",
        "-o",
        "-",
        "--summary-json",
        sum.to_str().unwrap(),
    ])
    .await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("--max-errors reached"), "{err}");
    let s = summary(&sum);
    assert_eq!(s["stopped_by"], "max-errors");
    let broken = server.hits().iter().filter(|h| h.target.starts_with("/broken/")).count();
    assert!((5..40).contains(&broken), "stopped soon after 5 errors: {broken} of 40 fetched");
}

/// `-c 1000000` once took 12.6 GB for a 20-page crawl: the lease channel and the download
/// tasks were made for the limit, not for the requests really in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_concurrency_takes_memory_by_use_not_by_the_limit() {
    let site = SiteConfig { pages: 20, ..Default::default() };
    let total = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (out, sum) = (dir.path().join("pages.jsonl"), dir.path().join("summary.json"));
    let (start, st) = (server.url("/index.html"), dir.path().join("st"));
    for state in [&["--memory"][..], &["--state", st.to_str().unwrap()][..]] {
        let mut args = vec!["crawl", &start, "-c", "1000000", "--per-host", "1000000"];
        args.extend_from_slice(state);
        args.extend(["-o", out.to_str().unwrap(), "--summary-json", sum.to_str().unwrap()]);
        let o = kumo(&args).await;
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), total, "{state:?}");
        let peak = summary(&sum)["peak_memory_bytes"].as_u64().unwrap();
        assert!(peak > 0, "the summary says the peak");
        assert!(peak < 300 << 20, "{state:?}: {} MiB at the peak for {total} pages", peak >> 20);
        std::fs::remove_file(&out).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_limits_are_usage_errors_that_name_the_bound() {
    let max = u64::MAX.to_string();
    for (flags, says) in [
        (vec!["-c", "1000001"], "at most 1000000"),
        (vec!["-c", "0"], "at least 1"),
        (vec!["--delay-ms", &max], "at most 3600000 ms"),
        (vec!["--random-delay-ms", &max], "at most 3600000 ms"),
    ] {
        let mut args = vec!["crawl", "http://127.0.0.1:9/", "--memory"];
        args.extend(flags.iter().copied());
        let o = kumo(&args).await;
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{flags:?}: {}", stderr(&o));
    }
}

/// A proxy of a scheme the client cannot speak used to be ignored: pages were fetched
/// directly, while the summary named the proxy. Now it is refused before anything is sent,
/// on the command line and in a spider file, and the would-be proxy hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_proxy_scheme_is_refused_never_bypassed() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 3, ..Default::default() }).start().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    for scheme in ["gopher", "ftp", "unix"] {
        let proxy = format!("{scheme}://127.0.0.1:{port}");
        let o = kumo(&["crawl", &server.url("/index.html"), "--memory", "--proxy", &proxy, "-o", "-"]).await;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{proxy}: {err}");
        assert!(err.contains(&format!("{scheme}://")) && err.contains("socks5h://"), "{proxy}: {err}");
        let spider = dir.path().join(format!("{scheme}.toml"));
        let toml = format!(
            "[[site]]\nname = \"s\"\nseeds = [\"{}\"]\n[[site.limit]]\nhost = \"*\"\nproxies = [\"{proxy}\"]\n",
            server.url("/index.html")
        );
        std::fs::write(&spider, toml).unwrap();
        let o = kumo(&["crawl", spider.to_str().unwrap(), "--memory"]).await;
        let err = stderr(&o);
        assert!(!o.status.success(), "{proxy} in a spider file: {err}");
        assert!(err.contains(&format!("{scheme}://")) && err.contains("socks5h://"), "{proxy}: {err}");
    }
    assert!(server.hits().is_empty(), "nothing was fetched directly: {:?}", server.hits());
    let accepted = tokio::time::timeout(std::time::Duration::from_millis(50), listener.accept()).await;
    assert!(accepted.is_err(), "nothing connected to the would-be proxy");
}
