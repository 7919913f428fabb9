//! What the real binary's integration tests share: running `kumo` with a time guard.
// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;
use std::time::Duration;

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
