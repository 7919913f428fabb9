//! What the real binary's integration tests share: running `kumo` with a time guard.
// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

pub const KUMO: &str = env!("CARGO_BIN_EXE_kumo");

/// Runs `kumo ARGS` in `cwd` with a 60 s guard.
pub async fn kumo_in(cwd: &Path, args: &[&str]) -> Output {
    let child = tokio::process::Command::new(KUMO).args(args).current_dir(cwd).kill_on_drop(true).output();
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("kumo finished in 60 s")
        .expect("kumo ran")
}

/// Runs `kumo ARGS` with a 60 s guard, in a fresh working directory (where the default
/// crawl state goes).
pub async fn kumo(args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    kumo_in(cwd.path(), args).await
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Starts `kumo ARGS` in `cwd` in the background, its output captured.
pub fn spawn_in(cwd: &Path, args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(KUMO)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts")
}

/// Waits for a background `kumo` to end, with a 60 s guard.
pub async fn finish(child: tokio::process::Child) -> Output {
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kumo ended within 60 s")
        .expect("kumo ran")
}

/// Sends `signal` (`INT`, `TERM`) to a background `kumo`.
pub fn send_signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("still running").to_string();
    let ok = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
    assert!(ok.success(), "kill -{signal} {pid}");
}

/// Checks `cond` every 10 ms until it holds; panics after `limit`.
pub async fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "gave up after {limit:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The exit code of a finished `kumo` (`None` if a signal ended it).
pub fn code(o: &Output) -> Option<i32> {
    o.status.code()
}
