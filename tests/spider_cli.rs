//! `kumo crawl FILE.toml` end to end: the quotes example against the quotes site, and a bad
//! spider file's error naming line and field.

use std::path::PathBuf;
use std::process::Command;

use kumo_testsite::ServerBuilder;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("../shared/testdata"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_runs_the_quotes_spider_file() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = server.base_url();
    let out = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || {
            Command::new(env!("CARGO_BIN_EXE_kumo"))
                .current_dir(dir)
                .args(["crawl", root().join("examples/quotes.toml").to_str().unwrap(), "--seed-base", &base])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.path().join("quotes.jsonl")).unwrap();
    let items: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |m: &str| items.iter().filter(|i| i["_model"] == m).count();
    assert_eq!((count("quote"), count("author"), count("tag")), (100, 50, 137));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("quote:dedup(text)"), "{stderr}");
}

#[test]
fn a_bad_spider_file_names_the_line_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[site]]\nname = \"x\"\nseeds = [\"http://127.0.0.1:1/\"]\ncolour = 1\n").unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_kumo")).args(["crawl", file.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml:4:1") && stderr.contains("unknown field `colour`"), "{stderr}");
}
