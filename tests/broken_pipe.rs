//! A reader that stops early (`kumo frontier export --state S | head -1`) ends the command
//! quietly with success: no panic, no error message.

mod common;
use common::{kumo_in, spawn_in};

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_early_is_no_failure() {
    let cwd = tempfile::tempdir().unwrap();
    // Far more than a pipe holds, so the writer meets the closed pipe.
    let urls: String = (0..20_000).map(|i| format!("http://127.0.0.1:9/page/{i}\n")).collect();
    std::fs::write(cwd.path().join("urls.txt"), urls).unwrap();
    let o = kumo_in(cwd.path(), &["frontier", "import", "--state", "s", "--create", "urls.txt"]).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for args in
        [&["frontier", "export", "--state", "s"][..], &["frontier", "stats", "--state", "s", "--json"]]
    {
        let mut child = spawn_in(cwd.path(), args);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(lines.next_line().await.unwrap().is_some(), "{args:?} wrote a first line");
        drop(lines); // `head -1` exits here
        let out =
            tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(!err.contains("panicked") && !err.contains("error"), "{args:?}: {err}");
    }
}
