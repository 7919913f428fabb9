//! `--max-items` and `--max-errors` stop a crawl gracefully: by items written (exit 0), and by
//! errors counted (exit 4, said on standard error), each named in the summary.

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
