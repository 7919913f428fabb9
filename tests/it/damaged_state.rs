//! `kumo crawl` on a damaged state directory stops with an error that names the directory and
//! `--fresh`, and leaves the directory as it was: it never silently starts over. And a full
//! disk under the state never damages it: the crawl stops, and resumes exactly once space is
//! back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};
use kumo_testsite::{ServerBuilder, SiteConfig};

use crate::common;
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

/// A tmpfs mounted for the test, unmounted when dropped. Mounting needs root.
struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    fn mount(at: &Path, bytes: u64) -> Result<Self, String> {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| e.to_string())?;
        match o.status.success() {
            true => Ok(Tmpfs { at: at.into() }),
            false => Err(String::from_utf8_lossy(&o.stderr).into_owned()),
        }
    }

    fn resize(&self, bytes: u64) {
        let o = Command::new("mount")
            .args(["-o", &format!("remount,size={bytes}")])
            .arg(&self.at)
            .output()
            .unwrap();
        assert!(o.status.success(), "remount: {}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// Every URL in the JSON Lines `file`, with how often it is there; each line must be whole.
fn url_counts(file: &Path) -> HashMap<String, u32> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut counts = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not whole JSON: {e}", n + 1));
        *counts.entry(v["url"].as_str().expect("url").to_string()).or_insert(0) += 1;
    }
    counts
}

/// A crawl whose state directory fills its filesystem stops (on its own, or killed with -9
/// while the disk is full), and once space is back it resumes to every page exactly once:
/// never a "damaged" state, at 21 different stop points (filesystem sizes from a few hundred
/// KiB to 80 % of what the whole crawl's state needs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_state_loses_nothing() {
    if !is_root() {
        // Mounting a filesystem to fill needs root, which the test command has in CI.
        eprintln!("SKIPPED: a_full_disk_under_the_state_loses_nothing mounts a tmpfs and needs root");
        return;
    }
    let (server, truth) = common::small_site(700).await;
    let start = server.url("/index.html");
    let work = tempfile::tempdir().unwrap();
    // The whole crawl's state, on a disk with room, sets the sizes to try.
    let full = work.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    let o = kumo_in(&full, &["crawl", &start, "--state", "st", "-o", "pages.jsonl", "--no-progress"]).await;
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(url_counts(&full.join("pages.jsonl")).len(), truth.unique_urls);
    let whole = du(&full.join("st"));
    const POINTS: u64 = 21;
    for i in 0..POINTS {
        // From 256 KiB to 80 % of the whole state, in even steps (the state's size on disk
        // varies by a few percent from run to run with when fjall rotates its journal).
        let size = (256 << 10) + (whole * 8 / 10).saturating_sub(256 << 10) * i / (POINTS - 1);
        let cwd = work.path().join(format!("run{i}"));
        let disk = Tmpfs::mount(&cwd.join("disk"), size).unwrap_or_else(|e| panic!("mount: {e}"));
        let args = ["crawl", &start, "--state", "disk/st", "-o", "pages.jsonl", "--no-progress"];
        let err = if i % 2 == 0 {
            let o = kumo_in(&cwd, &args).await;
            let err = common::stderr(&o);
            assert_eq!(common::code(&o), Some(1), "stop point {i} ({size} bytes): {err}");
            assert!(err.contains("bytes free") || err.contains("No space left"), "the cause is said: {err}");
            err
        } else {
            // Killed once its first write fails for want of space, wherever its stop then is.
            let mut w = common::Watched::spawn(&cwd, &args);
            common::wait_until(Duration::from_secs(60), "a full disk", || {
                let err = w.stderr();
                err.contains("No space left") || err.contains("crawl stopped")
            })
            .await;
            let _ = w.child.start_kill();
            w.finish().await.1
        };
        disk.resize(whole * 4);
        let o = kumo_in(&cwd, &args).await;
        let resumed = common::stderr(&o);
        assert!(o.status.success(), "stop point {i} ({size} bytes) resumes: {resumed}\nfirst run: {err}");
        let counts = url_counts(&cwd.join("pages.jsonl"));
        let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "stop point {i}: written twice: {twice:?}");
        assert_eq!(counts.len(), truth.unique_urls, "stop point {i}: every page");
        drop(disk);
    }
}

/// Bytes the files under `dir` take on disk (fjall's journal is a sparse 64 MiB file).
fn du(dir: &Path) -> u64 {
    let o = Command::new("du").args(["-s", "-B1"]).arg(dir).output().unwrap();
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().and_then(|n| n.parse().ok()).unwrap()
}
