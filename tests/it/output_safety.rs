//! kumo cuts back or replaces only files it provably wrote: a resumed crawl whose output file
//! was replaced by another program refuses and leaves it alone, and a new crawl does not
//! replace an existing file unless told to (`-O FILE`, `overwrite = true` in a spider file).

use std::path::Path;

use kumo_testsite::ServerBuilder;

use crate::common;
use crate::common::{root, testdata};
use common::{kumo_in, small_site, stderr};

/// What another program writes: JSON lines that are not page records, `len` bytes or more.
fn foreign_lines(len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = 0;
    while out.len() < len {
        out.extend(format!("{{\"_model\":\"quote\",\"n\":{n},\"text\":\"someone else's item\"}}\n").bytes());
        n += 1;
    }
    out
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).unwrap().lines().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_leaves_alone_an_output_another_program_replaced() {
    let (server, truth) = small_site(60).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    let crawl = ["crawl", &start, "--state", "st", "-o", "out.jsonl", "--no-progress"];
    let o = kumo_in(cwd, &crawl).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = std::fs::read(cwd.join("out.jsonl")).unwrap();
    assert_eq!(lines(&cwd.join("out.jsonl")), truth.unique_urls);

    // Longer and shorter than what the crawl committed: neither is its file.
    for len in [ours.len() * 2, ours.len() - 10] {
        let theirs = foreign_lines(len);
        let theirs = &theirs[..len.min(theirs.len())];
        std::fs::write(cwd.join("out.jsonl"), theirs).unwrap();
        let o = kumo_in(cwd, &crawl).await;
        let err = stderr(&o);
        assert!(!o.status.success(), "refused: {err}");
        assert!(
            err.contains("out.jsonl") && err.contains("--fresh"),
            "says which file and what to do: {err}"
        );
        assert_eq!(std::fs::read(cwd.join("out.jsonl")).unwrap(), theirs, "left exactly as it was");
    }

    // The crawl's own file back in place: it resumes.
    std::fs::write(cwd.join("out.jsonl"), &ours).unwrap();
    let o = kumo_in(cwd, &crawl).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(cwd.join("out.jsonl")).unwrap(), ours);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_crawl_replaces_an_existing_file_only_when_told_to() {
    let (server, truth) = small_site(20).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    std::fs::write(cwd.join("out.jsonl"), "{\"mine\":1}\n").unwrap();
    for state in [&["--memory"][..], &["--state", "new"], &["--state", "new", "--fresh"]] {
        let o =
            kumo_in(cwd, &[&["crawl", &start, "-o", "out.jsonl", "--no-progress"][..], state].concat()).await;
        let err = stderr(&o);
        assert!(!o.status.success(), "{state:?}: refused: {err}");
        assert!(err.contains("out.jsonl") && err.contains("-O"), "{state:?}: says what to do: {err}");
        assert_eq!(std::fs::read_to_string(cwd.join("out.jsonl")).unwrap(), "{\"mine\":1}\n", "{state:?}");
    }
    let o = kumo_in(cwd, &["crawl", &start, "-O", "out.jsonl", "--state", "new", "--no-progress"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&cwd.join("out.jsonl")), truth.unique_urls);
    // An empty file holds nothing to lose.
    std::fs::write(cwd.join("empty.jsonl"), "").unwrap();
    let o = kumo_in(cwd, &["crawl", &start, "-o", "empty.jsonl", "--memory", "--no-progress"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&cwd.join("empty.jsonl")), truth.unique_urls);
}

/// The issue's steps: the quick start, then the quotes spider writing the same file, then the
/// quick start again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_start_and_the_spider_do_not_destroy_each_others_file() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let base = server.base_url();
    let quick = ["crawl", &format!("{base}/"), "-o", "quotes.jsonl", "--no-progress"];
    let o = kumo_in(cwd, &quick).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = std::fs::read(cwd.join("quotes.jsonl")).unwrap();

    let spider = root().join("examples/quotes.toml");
    let spider = spider.to_str().unwrap();
    let o = kumo_in(cwd, &["crawl", spider, "--seed-base", &base]).await;
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("overwrite = true"), "{err}");
    assert_eq!(std::fs::read(cwd.join("quotes.jsonl")).unwrap(), pages, "the page records are kept");

    // Told to replace it, the spider does.
    let text = std::fs::read_to_string(root().join("examples/quotes.toml")).unwrap();
    let text = text.replace(
        r#"output = { jsonl = "quotes.jsonl" }"#,
        r#"output = { jsonl = "quotes.jsonl", overwrite = true }"#,
    );
    std::fs::write(cwd.join("quotes.toml"), text).unwrap();
    let o = kumo_in(cwd, &["crawl", "quotes.toml", "--seed-base", &base]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let items = std::fs::read(cwd.join("quotes.jsonl")).unwrap();
    assert_eq!(lines(&cwd.join("quotes.jsonl")), 287);

    // The quick start again: it resumes its state, finds another file, and leaves it alone.
    let o = kumo_in(cwd, &quick).await;
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("not the file this crawl wrote"), "{err}");
    assert_eq!(std::fs::read(cwd.join("quotes.jsonl")).unwrap(), items, "the spider's items are kept");
}

/// `-o`/`-O` write the format the file's extension names: `.csv` CSV, `.json` one JSON array
/// (whole after a run cut short by a page limit, and after the run that resumes it), and an
/// extension kumo writes no format for is a usage error that creates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_output_format_follows_the_extension() {
    let (server, truth) = small_site(60).await;
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");

    let o = kumo_in(cwd, &["crawl", &start, "-O", "x.csv", "--no-progress", "--state", "csv"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(cwd.join("x.csv")).unwrap();
    assert!(csv.starts_with("url,final_url,status,"), "a header row: {csv:.200}");
    assert_eq!(csv.lines().count(), truth.unique_urls + 1);

    let json = ["crawl", &start, "-O", "x.json", "--no-progress", "--state", "json"];
    let o = kumo_in(cwd, &[&json[..], &["--max-pages", "20"]].concat()).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let tool = |cwd: &Path| {
        std::process::Command::new("python3")
            .args(["-m", "json.tool", "x.json"])
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    let checked = tool(cwd);
    assert!(checked.status.success(), "json.tool: {}", String::from_utf8_lossy(&checked.stderr));
    let o = kumo_in(cwd, &json).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(tool(cwd).status.success(), "whole after the resume too");
    let pages: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(cwd.join("x.json")).unwrap()).expect("one JSON array");
    let mut urls: Vec<&str> = pages.iter().map(|p| p["url"].as_str().expect("url")).collect();
    urls.sort_unstable();
    urls.dedup();
    assert_eq!((pages.len(), urls.len()), (truth.unique_urls, truth.unique_urls), "every page once");

    let o = kumo_in(cwd, &["crawl", &start, "-O", "x.xyz", "--no-progress", "--state", "xyz"]).await;
    assert_eq!(common::code(&o), Some(2), "a usage error: {}", stderr(&o));
    assert!(stderr(&o).contains(".jsonl (JSON Lines), .json (one JSON array) or .csv"), "{}", stderr(&o));
    assert!(!cwd.join("x.xyz").exists() && !cwd.join("xyz").exists(), "nothing created");
}
