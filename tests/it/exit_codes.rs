//! `kumo crawl`'s exit status says how the crawl ended (listed in `kumo crawl --help`):
//! 0 finished, 1 error, 2 bad usage, 3 stopped before finishing, 4 finished with too many
//! failures. An output that cannot be written stops the crawl with a clear message.

use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};

use crate::common;
use common::{code, kumo, kumo_in, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_that_cannot_be_written_is_an_error_that_says_so() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 30, ..Default::default() }).start().await.unwrap();
    let start = server.url("/index.html");
    for state in [&[][..], &["--memory"]] {
        let o = kumo(&[&["crawl", &start, "-o", "/dev/full", "--no-progress"][..], state].concat()).await;
        let err = stderr(&o);
        assert_eq!(code(&o), Some(1), "{state:?}: {err}");
        assert!(err.contains("crawl stopped (output-error)"), "{state:?}: the summary: {err}");
        assert!(
            err.contains(
                "error: the crawl stopped because an output could not be written: cannot write /dev/full"
            ) && err.contains("No space left on device"),
            "{state:?}: {err}"
        );
        assert!(err.contains("items were not confirmed written"), "{state:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_whose_requests_failed_is_not_a_success() {
    // Every page answers 500; robots.txt is a 404 (allow all).
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html(r#"<a href="/a">a</a> <a href="/b">b</a>"#))
        .fixture("/a", Fixture::status(500, "down"))
        .fixture("/b", Fixture::status(500, "down"))
        .start()
        .await
        .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let args =
        ["crawl", &server.url("/"), "--retries", "0", "--memory", "-O", "pages.jsonl", "--no-progress"];
    let o = kumo_in(cwd.path(), &args).await;
    let err = stderr(&o);
    assert_eq!(code(&o), Some(4), "{err}");
    assert!(err.contains("2 of 3 requests (67 %) failed for good"), "{err}");
    let o = kumo_in(cwd.path(), &[&args[..], &["--failure-threshold", "70"]].concat()).await;
    assert_eq!(code(&o), Some(0), "under the threshold: {}", stderr(&o));
    // Nothing fetched at all: an error.
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--retries", "0", "--memory", "--no-progress"]).await;
    assert_eq!(code(&o), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no page could be fetched"), "{}", stderr(&o));
}

#[tokio::test]
async fn bad_usage_is_status_2() {
    for args in [
        &["crawl", "htp:/x"][..],
        &["crawl", "http://127.0.0.1:1/", "--timeout", "-1"],
        &["crawl", "http://127.0.0.1:1/", "--deny", "re:("],
        &["crawl", "http://127.0.0.1:1/", "--failure-threshold", "120"],
        &["crawl", "http://127.0.0.1:1/", "--no-such-flag"],
        &["crawl", "http://127.0.0.1:1/", "-o", "a.jsonl", "-O", "b.jsonl"],
    ] {
        let o = kumo(args).await;
        assert_eq!(code(&o), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[tokio::test]
async fn help_lists_the_exit_statuses() {
    let o = kumo(&["crawl", "--help"]).await;
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Exit status:"), "{text}");
    for line in ["0  finished", "1  error", "2  bad usage", "3  stopped before finishing", "4  finished, but"]
    {
        assert!(text.contains(line), "{line}: {text}");
    }
}
