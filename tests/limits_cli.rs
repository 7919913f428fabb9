//! `--max-items` and `--max-errors` stop a crawl gracefully: by items written (exit 0), and by
//! errors counted (exit 4, said on standard error), each named in the summary. Limits take
//! memory by use, not by their size, and absurd or unsafe values are usage errors (exit 2).

use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};

mod common;
use common::{kumo, stderr};

fn summary(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_items_stops_the_crawl_once_that_many_are_written() {
    let site = SiteConfig { pages: 300, ..Default::default() };
    let total = site.ground_truth().unique_urls;
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (out, sum) = (dir.path().join("pages.jsonl"), dir.path().join("summary.json"));
    let o = kumo(&[
        "crawl",
        &server.url("/index.html"),
        "--memory",
        "-c",
        "4",
        "--max-items",
        "20",
        "-o",
        out.to_str().unwrap(),
        "--summary-json",
        sum.to_str().unwrap(),
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(&out).unwrap().lines().count();
    assert!((20..total).contains(&written), "stopped soon after 20 items: {written} of {total}");
    let s = summary(&sum);
    assert_eq!(s["stopped_by"], "max-items");
    assert_eq!(s["items"].as_u64().unwrap() as usize, written, "every item counted was written");
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
