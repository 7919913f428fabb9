//! `kumo frontier stats|export|import` and `kumo failures list|export|requeue` on the state
//! of real, stopped crawls of the local test site, with the real binary.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use kumo_testsite::{Fixture, ServerBuilder, SiteConfig};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

const KUMO: &str = env!("CARGO_BIN_EXE_kumo");

/// Runs `kumo ARGS` in `cwd` with a 60 s guard, feeding it `stdin`.
async fn kumo_in(cwd: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = tokio::process::Command::new(KUMO)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kumo finished in 60 s")
        .expect("kumo ran")
}

async fn kumo(cwd: &Path, args: &[&str]) -> Output {
    kumo_in(cwd, args, b"").await
}

/// Runs `kumo ARGS` and expects success.
async fn ok(cwd: &Path, args: &[&str]) -> String {
    let o = kumo(cwd, args).await;
    assert!(o.status.success(), "kumo {args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn urls(lines: &[Value]) -> BTreeSet<String> {
    lines.iter().map(|l| l["url"].as_str().unwrap().to_string()).collect()
}

fn sum(v: &Value) -> u64 {
    v.as_array().unwrap().iter().map(|x| x["queued"].as_u64().unwrap()).sum()
}

/// Crawls `start` into the state `st` with `extra` flags; returns the summary.
async fn crawl(cwd: &Path, start: &[&str], extra: &[&str]) -> Value {
    let mut args = vec!["crawl"];
    args.extend(start);
    args.extend(["--state", "st", "-o", "pages.jsonl", "--summary-json", "summary.json", "--no-progress"]);
    args.extend(extra);
    ok(cwd, &args).await;
    serde_json::from_str(&std::fs::read_to_string(cwd.join("summary.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_and_export_show_what_a_stopped_crawl_left() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 50, ..Default::default() }).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let start = server.url("/index.html");
    let summary = crawl(cwd, &[&start], &["--max-pages", "10"]).await;
    let fetched = urls(&json_lines(&std::fs::read_to_string(cwd.join("pages.jsonl")).unwrap()));
    assert_eq!(fetched.len(), 10);

    let stats: Value =
        serde_json::from_str(&ok(cwd, &["frontier", "stats", "--state", "st", "--json"]).await).unwrap();
    let export = json_lines(&ok(cwd, &["frontier", "export", "--state", "st"]).await);
    let queued = stats["queued"].as_u64().unwrap();
    assert!(queued > 0, "{stats}");
    assert_eq!(export.len() as u64, queued);
    assert_eq!((stats["hosts"].as_u64(), stats["hosts_queued"].as_u64()), (Some(1), Some(1)));
    assert_eq!(stats["top_hosts"][0]["host"], server.addr().to_string());
    for part in ["top_hosts", "by_priority", "by_depth"] {
        assert_eq!(sum(&stats[part]), queued, "{part}: {stats}");
    }
    for d in stats["by_depth"].as_array().unwrap() {
        let n = export.iter().filter(|l| l["depth"] == d["depth"]).count() as u64;
        assert_eq!(n, d["queued"].as_u64().unwrap(), "depth {}", d["depth"]);
    }
    // What is left is exactly what was seen and not fetched.
    assert_eq!(stats["seen"].as_u64().unwrap(), 10 + queued);
    assert!(urls(&export).is_disjoint(&fetched));
    assert_eq!(stats["counters"]["pages"], summary["pages"]);
    assert_eq!((stats["failures"].as_u64(), stats["journal_pending"].as_u64()), (Some(0), Some(0)));
    for l in &export {
        assert_eq!(l["host"], server.addr().to_string());
        assert!(l["seq"].as_u64().is_some() && l["source"].is_string(), "{l}");
    }

    let text = ok(cwd, &["frontier", "stats", "--state", "st"]).await;
    assert!(text.contains(&format!("queued:   {queued} requests on 1 hosts")), "{text}");
    assert!(text.contains("counters: pages 10"), "{text}");

    // Resuming fetches every exported request.
    crawl(cwd, &[&start], &[]).await;
    let all = urls(&json_lines(&std::fs::read_to_string(cwd.join("pages.jsonl")).unwrap()));
    assert!(urls(&export).is_subset(&all));
    let stats: Value =
        serde_json::from_str(&ok(cwd, &["frontier", "stats", "--state", "st", "--json"]).await).unwrap();
    assert_eq!(stats["queued"], 0);
}

/// The exported lines without their queue sequence numbers (a new state numbers anew).
fn without_seq(lines: Vec<Value>) -> Vec<Value> {
    lines
        .into_iter()
        .map(|mut l| {
            l.as_object_mut().unwrap().remove("seq");
            l
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_import_into_a_new_state_gives_the_same_queue() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 50, ..Default::default() }).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    crawl(cwd, &[&server.url("/index.html")], &["--max-pages", "8"]).await;
    ok(cwd, &["frontier", "export", "--state", "st", "-o", "queue.jsonl"]).await;
    let exported = json_lines(&std::fs::read_to_string(cwd.join("queue.jsonl")).unwrap());
    assert!(!exported.is_empty());

    // Import never creates a state unless asked.
    let o = kumo(cwd, &["frontier", "import", "--state", "moved", "queue.jsonl"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("moved: no crawl state here"), "{}", stderr(&o));
    assert!(!cwd.join("moved").exists(), "inspection never creates state");

    let out = ok(cwd, &["frontier", "import", "--state", "moved", "--create", "queue.jsonl"]).await;
    assert!(out.contains(&format!("queued {} requests (0 already seen)", exported.len())), "{out}");
    let moved = json_lines(&ok(cwd, &["frontier", "export", "--state", "moved"]).await);
    assert_eq!(without_seq(moved), without_seq(exported.clone()));

    // Again, from standard input: every request is seen already.
    let o = kumo_in(
        cwd,
        &["frontier", "import", "--state", "moved", "-"],
        &std::fs::read(cwd.join("queue.jsonl")).unwrap(),
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("queued 0 requests ({} already seen)", exported.len())), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_with_a_bad_line_queues_nothing_and_names_the_line() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 50, ..Default::default() }).start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    crawl(cwd, &[&server.url("/index.html")], &["--max-pages", "5"]).await;
    let before = ok(cwd, &["frontier", "export", "--state", "st"]).await;
    let file = format!(
        "{}\n{{\"url\": \"{}\", \"priority\": 5}}\n\n{{\"url\": 42}}\n{}\n",
        server.url("/new/a.html"),
        server.url("/new/b.html"),
        server.url("/new/c.html"),
    );
    std::fs::write(cwd.join("bad.jsonl"), file).unwrap();
    let o = kumo(cwd, &["frontier", "import", "--state", "st", "bad.jsonl"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.jsonl: line 4:"), "{}", stderr(&o));
    assert_eq!(ok(cwd, &["frontier", "export", "--state", "st"]).await, before, "nothing queued");

    // Without the bad line: three new requests, the one with priority 5 first in the queue.
    let good = std::fs::read_to_string(cwd.join("bad.jsonl")).unwrap().replace("{\"url\": 42}\n", "");
    std::fs::write(cwd.join("good.jsonl"), good).unwrap();
    let out = ok(cwd, &["frontier", "import", "--state", "st", "good.jsonl"]).await;
    assert!(out.contains("queued 3 requests (0 already seen)"), "{out}");
    let after = json_lines(&ok(cwd, &["frontier", "export", "--state", "st"]).await);
    assert_eq!(after.len(), before.lines().count() + 3);
    assert_eq!(after[0]["url"], server.url("/new/b.html"));
    assert_eq!(after[0]["priority"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_listed_requeued_and_fetched_by_the_next_crawl() {
    // /flaky answers 500 twice, then 200: with --retries 1 the first crawl gives up on it.
    let ok_page = Fixture::html("<html><title>now fine</title><body>ok</body></html>");
    let server = ServerBuilder::new()
        .synthetic(SiteConfig { pages: 20, ..Default::default() })
        .fixture_sequence("/flaky", vec![Fixture::status(500, "down"), Fixture::status(500, "down"), ok_page])
        .start()
        .await
        .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let cwd = cwd.path();
    let (start, flaky) = (server.url("/index.html"), server.url("/flaky"));
    let summary = crawl(cwd, &[&start, &flaky], &["--retries", "1"]).await;
    assert_eq!(summary["failed"], 1, "{summary}");

    let list: Value =
        serde_json::from_str(&ok(cwd, &["failures", "list", "--state", "st", "--json"]).await).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["url"], flaky.as_str());
    assert_eq!((list[0]["kind"].as_str(), list[0]["last_status"].as_u64()), (Some("status"), Some(500)));
    assert_eq!(list[0]["attempts"], 2);
    let text = ok(cwd, &["failures", "list", "--state", "st"]).await;
    assert!(
        text.contains("1 failures in st") && text.contains(&format!("status (2 attempts, HTTP 500) {flaky}")),
        "{text}"
    );
    let exported = json_lines(&ok(cwd, &["failures", "export", "--state", "st"]).await);
    assert_eq!(exported.len(), 1);
    assert_eq!(exported[0]["record"]["url"], flaky.as_str());
    assert_eq!(
        (exported[0]["request"]["url"].as_str(), exported[0]["request"]["retries"].as_u64()),
        (Some(flaky.as_str()), Some(1))
    );

    // Other kinds are left alone; an unknown kind is refused by name.
    let out =
        ok(cwd, &["failures", "requeue", "--state", "st", "--kind", "timeout", "--kind", "connect"]).await;
    assert!(out.contains("requeued 0 failures; 1 left"), "{out}");
    let o = kumo(cwd, &["failures", "requeue", "--state", "st", "--kind", "flaky"]).await;
    assert!(!o.status.success() && stderr(&o).contains("--kind \"flaky\""), "{}", stderr(&o));

    let out = ok(cwd, &["failures", "requeue", "--state", "st", "--kind", "status"]).await;
    assert!(out.contains("requeued 1 failures; 0 left"), "{out}");
    let stats: Value =
        serde_json::from_str(&ok(cwd, &["frontier", "stats", "--state", "st", "--json"]).await).unwrap();
    assert_eq!((stats["queued"].as_u64(), stats["failures"].as_u64()), (Some(1), Some(0)));
    let queued = json_lines(&ok(cwd, &["frontier", "export", "--state", "st"]).await);
    assert_eq!(queued[0]["url"], flaky.as_str());
    assert!(queued[0].get("retries").is_none(), "retry count reset: {}", queued[0]);

    // The next crawl resumes, fetches it (now 200) and nothing has failed.
    let summary = crawl(cwd, &[&start, &flaky], &["--retries", "1"]).await;
    assert_eq!(summary["failed"], 0, "{summary}");
    let list = ok(cwd, &["failures", "list", "--state", "st", "--json"]).await;
    assert_eq!(serde_json::from_str::<Value>(&list).unwrap(), serde_json::json!([]));
    let pages = urls(&json_lines(&std::fs::read_to_string(cwd.join("pages.jsonl")).unwrap()));
    assert!(pages.contains(&flaky));
    assert_eq!(server.hits().iter().filter(|h| h.target == "/flaky").count(), 3);
}
