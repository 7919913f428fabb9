//! Cookies survive a restart of the real `kumo` binary: run 1 fetches a page that sets
//! cookies and ends; run 2 on the same state directory fetches another page, and the test
//! site's request log shows the cookies were sent, except the one that expired in between.
//! `--fresh` forgets them with the rest of the state.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder};

const KUMO: &str = env!("CARGO_BIN_EXE_kumo");

/// Runs `kumo ARGS` in `cwd` with a 60 s guard.
async fn kumo(cwd: &Path, args: &[&str]) -> Output {
    let child = tokio::process::Command::new(KUMO).args(args).current_dir(cwd).kill_on_drop(true).output();
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("kumo finished in 60 s")
        .expect("kumo ran")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
            let o = kumo(&cwd, &args).await;
            assert!(o.status.success(), "{}", stderr(&o));
        }
    };

    run(server.url("/login"), &[]).await;
    assert_eq!(cookie_sent(&server, "/login"), "", "nothing to send at first");
    // Long enough for the one-second cookie to expire while kumo is not running.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    run(server.url("/next"), &[]).await;
    assert_eq!(
        cookie_sent(&server, "/next"),
        "pref=dark; sid=s3cr3t",
        "run 2 sent the session and the persistent cookie of run 1, not the expired one"
    );

    run(server.url("/again"), &["--fresh"]).await;
    assert_eq!(cookie_sent(&server, "/again"), "", "--fresh discards the cookies with the state");
}
