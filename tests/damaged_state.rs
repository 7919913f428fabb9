//! `kumo crawl` on a damaged state directory stops with an error that names the directory and
//! `--fresh`, and leaves the directory as it was: it never silently starts over.

use std::path::{Path, PathBuf};

use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};
use kumo_testsite::{ServerBuilder, SiteConfig};

mod common;
use common::kumo_in;

/// The largest table file under `dir`.
fn largest_table(dir: &Path) -> PathBuf {
    let mut best: Option<(u64, PathBuf)> = None;
    for ks in std::fs::read_dir(dir.join("db/keyspaces")).unwrap() {
        let tables = ks.unwrap().path().join("tables");
        for t in std::fs::read_dir(tables).into_iter().flatten() {
            let p = t.unwrap().path();
            let len = std::fs::metadata(&p).unwrap().len();
            if best.as_ref().is_none_or(|(n, _)| len > *n) {
                best = Some((len, p));
            }
        }
    }
    best.expect("the state has table files").1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_on_a_damaged_state_stops_and_keeps_the_directory() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 50, ..Default::default() }).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    let args = ["crawl", &start, "--state", "st", "--no-progress"];
    let o = kumo_in(cwd, &[&args[..], &["-o", "pages.jsonl", "--max-pages", "10"]].concat()).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Move what the crawl committed into table files, then cut the largest one in half.
    let st = cwd.join("st");
    EmbeddedStore::open_existing(&st, EmbeddedConfig::default()).unwrap().flush_tables().unwrap();
    let table = largest_table(&st);
    let len = std::fs::metadata(&table).unwrap().len() / 2;
    std::fs::OpenOptions::new().write(true).open(&table).unwrap().set_len(len).unwrap();

    let o = kumo_in(cwd, &[&args[..], &["-o", "pages.jsonl"]].concat()).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "refused: {err}");
    assert!(err.contains("st: the state directory is damaged"), "{err}");
    assert!(err.contains("--fresh"), "{err}");
    assert_eq!(std::fs::metadata(&table).map(|m| m.len()).ok(), Some(len), "the damaged table is kept");
    assert!(st.join("KUMO_STATE").is_file());

    // --fresh is how to start over (-O: the new crawl replaces the old one's output).
    let o = kumo_in(cwd, &[&args[..], &["-O", "pages.jsonl", "--fresh", "--max-pages", "3"]].concat()).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("resuming"), "{err}");
    assert_eq!(std::fs::read_to_string(cwd.join("pages.jsonl")).unwrap().lines().count(), 3);
}
