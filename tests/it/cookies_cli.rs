//! Cookies survive a restart of the real `kumo` binary: run 1 fetches a page that sets
//! cookies and ends; run 2 on the same state directory fetches another page, and the test
//! site's request log shows the cookies were sent, except the one that expired in between.
//! `--fresh` forgets them with the rest of the state.

use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

use crate::common;
use common::{kumo_in, stderr};

/// The `Cookie` header of the request for `target`, its pairs sorted.
fn cookie_sent(server: &kumo_testsite::TestServer, target: &str) -> String {
    let hit = server.hits().into_iter().find(|h| h.target == target).expect("requested");
    let mut pairs: Vec<String> =
        hit.cookie.unwrap_or_default().split("; ").filter(|p| !p.is_empty()).map(str::to_string).collect();
    pairs.sort();
    pairs.join("; ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_set_in_one_run_are_sent_in_the_next() {
    let login = Fixture::html("welcome")
        .with_header("set-cookie", "sid=s3cr3t; Path=/; HttpOnly")
        .with_header("set-cookie", "pref=dark; Max-Age=3600; Path=/")
        .with_header("set-cookie", "brief=1; Max-Age=1; Path=/");
    let server = ServerBuilder::new()
        .fixture("/login", login)
        .fixture("/next", Fixture::html("next"))
        .fixture("/again", Fixture::html("again"))
        .start()
        .await
        .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let state = cwd.path().join("state");
    let state = state.to_str().unwrap();
    let run = |url: String, extra: &'static [&'static str]| {
        let cwd = cwd.path().to_path_buf();
        async move {
            let mut args = vec!["crawl", &url, "--state", state, "--ignore-robots", "--no-progress"];
            args.extend_from_slice(extra);
            let o = kumo_in(&cwd, &args).await;
            assert!(o.status.success(), "{}", stderr(&o));
        }
    };

    run(server.url("/login"), &[]).await;
    assert_eq!(cookie_sent(&server, "/login"), "", "nothing to send at first");
    // Long enough for the one-second cookie to expire while kumo is not running.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    // A state resumes only its own crawl: more URLs go in through the queue.
    std::fs::write(cwd.path().join("more.txt"), server.url("/next") + "\n").unwrap();
    let o = kumo_in(cwd.path(), &["frontier", "import", "--state", state, "more.txt"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    run(server.url("/login"), &[]).await;
    assert_eq!(
        cookie_sent(&server, "/next"),
        "pref=dark; sid=s3cr3t",
        "run 2 sent the session and the persistent cookie of run 1, not the expired one"
    );

    run(server.url("/again"), &["--fresh"]).await;
    assert_eq!(cookie_sent(&server, "/again"), "", "--fresh discards the cookies with the state");
}
