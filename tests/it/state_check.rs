//! `kumo state check` on a real crawl's state: sound; damaged in the middle of its journal
//! (refused, as a crawl refuses it, and left exactly as it was); torn at the journal's end
//! (what a crash leaves: sound, and the crawl resumes with every page once).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common;
use common::{code, kumo_in, small_site, stderr};

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(contents(&e.path()));
        } else {
            out.insert(e.path(), std::fs::read(e.path()).unwrap());
        }
    }
    out
}

/// The database journal holding commits, and where its last commit ends (after its
/// trailer, `FJL\x03`; fjall preallocates the rest with zeros).
fn journal(state: &Path) -> (PathBuf, usize) {
    let mut best = None;
    for e in std::fs::read_dir(state.join("db")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "jnl") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        if let Some(at) = bytes.windows(4).rposition(|w| w == b"FJL\x03")
            && best.as_ref().is_none_or(|(_, end)| at + 4 > *end)
        {
            best = Some((p, at + 4));
        }
    }
    best.expect("a journal holding commits")
}

/// The files that differ between two snapshots of a directory, with their sizes.
fn changed(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let paths: BTreeSet<&PathBuf> = a.keys().chain(b.keys()).collect();
    paths
        .into_iter()
        .filter(|p| a.get(*p) != b.get(*p))
        .map(|p| {
            format!("{} ({:?} -> {:?} bytes)", p.display(), a.get(p).map(Vec::len), b.get(p).map(Vec::len))
        })
        .collect()
}

fn urls_once(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut urls = BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(urls.insert(v["url"].as_str().unwrap().to_string()), "{line} written twice");
    }
    urls.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_tells_a_sound_state_from_a_damaged_one_and_changes_neither() {
    let (server, truth) = small_site(100).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    let crawl =
        |state: &'static str| ["crawl", &start, "--state", state, "-o", "pages.jsonl", "--no-progress"];
    let o = kumo_in(cwd, &[&crawl("st")[..], &["--max-pages", "40"]].concat()).await;
    assert!(o.status.success(), "{}", stderr(&o));

    let before = contents(&cwd.join("st"));
    let o = kumo_in(cwd, &["state", "check", "--state", "st"]).await;
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("st: sound: ") && out.contains("queued"), "{out}");
    assert_eq!(
        changed(&before, &contents(&cwd.join("st"))),
        Vec::<String>::new(),
        "checking changed nothing"
    );

    // Bytes flipped inside the journal, commits after them: refused. (Where the flip lands,
    // kumo's walk of the journal or fjall's checksum finds it.)
    for (i, at) in [10, 50, 90].into_iter().enumerate() {
        let name = format!("mid{i}");
        copy_tree(&cwd.join("st"), &cwd.join(&name));
        let (jnl, end) = journal(&cwd.join(&name));
        let at = end * at / 100;
        let mut bytes = std::fs::read(&jnl).unwrap();
        for b in &mut bytes[at..at + 8] {
            *b ^= 0xff;
        }
        std::fs::write(&jnl, bytes).unwrap();
        let before = contents(&cwd.join(&name));
        let o = kumo_in(cwd, &["state", "check", "--state", &name]).await;
        let err = stderr(&o);
        assert_eq!(code(&o), Some(1), "{name}: {err}");
        assert!(err.contains(&format!("{name}: the state directory is damaged")), "{err}");
        let after = contents(&cwd.join(&name));
        assert_eq!(changed(&before, &after), Vec::<String>::new(), "{name}: left as it was");

        let args = ["crawl", &start, "--state", &name, "-o", "pages.jsonl", "--no-progress"];
        let o = kumo_in(cwd, &args).await;
        assert_eq!(code(&o), Some(1), "{name}: a crawl refuses it too: {}", stderr(&o));
        assert!(stderr(&o).contains("kumo state check"), "{}", stderr(&o));
        // fjall deletes its superseded manifest versions (`keyspaces/N/vM`) when it opens,
        // before its own checksum finds the damage; everything else is left as it was.
        let mut after = contents(&cwd.join(&name));
        for (p, bytes) in &before {
            let superseded = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.strip_prefix('v').is_some_and(|v| v.parse::<u64>().is_ok()));
            if superseded && !after.contains_key(p) {
                after.insert(p.clone(), bytes.clone());
            }
        }
        assert_eq!(changed(&before, &after), Vec::<String>::new(), "{name}: the crawl left the data alone");
    }

    // Torn inside the last commit, as a crash mid-write leaves it: crash recovery.
    copy_tree(&cwd.join("st"), &cwd.join("tail"));
    let (jnl, end) = journal(&cwd.join("tail"));
    std::fs::OpenOptions::new().write(true).open(&jnl).unwrap().set_len(end as u64 - 5).unwrap();
    let o = kumo_in(cwd, &["state", "check", "--state", "tail"]).await;
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let o = kumo_in(cwd, &crawl("tail")).await;
    assert_eq!(code(&o), Some(0), "resumes: {}", stderr(&o));
    assert_eq!(urls_once(&cwd.join("pages.jsonl")), truth.unique_urls, "every page once");

    let o = kumo_in(cwd, &["state", "check", "--state", "nowhere"]).await;
    assert_eq!(code(&o), Some(1));
    assert!(stderr(&o).contains("no crawl state here"), "{}", stderr(&o));
    assert!(!cwd.join("nowhere").exists());
}
