//! `kumo demo`, the README's one-command crawl: from the repository's root it serves the
//! quotes site in testdata/ and extracts it with examples/quotes.toml into a folder of its own,
//! on the durable store, starting over each run.

use crate::common;
use common::{kumo_in, stderr};

use std::path::Path;

/// The items of `file` by `_model`: (quotes, authors, tags).
fn counts(file: &Path) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(file).unwrap();
    let models: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["_model"].as_str().unwrap().to_owned())
        .collect();
    let n = |m: &str| models.iter().filter(|x| *x == m).count();
    (n("quote"), n("author"), n("tag"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_crawls_the_quotes_site_into_its_folder_and_starts_over_each_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    for run in 0..2 {
        let o = kumo_in(root, &["demo", out.to_str().unwrap()]).await;
        assert!(o.status.success(), "run {run}: {}", stderr(&o));
        // The site's ground truth: 100 quotes, 50 authors, 137 tags, each once.
        assert_eq!(counts(&out.join("quotes.jsonl")), (100, 50, 137), "run {run}");
        assert!(out.join("state").is_dir(), "the crawl kept its state");
    }
}
