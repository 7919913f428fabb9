//! The control port cannot take the crawl down (QA F12): 1 100 idle TCP connections to a
//! crawl's `--listen` port, the crawl limited to 1 024 open files, and the crawl (its state
//! on disk) still ends with exit 0 and every page, its open files within the control server's
//! cap meanwhile; the API answers again once the idle connections have timed out.

use crate::common;

use std::time::{Duration, Instant};

use common::{Watched, control_request, wait_until};
use kumo_control::serve::MAX_CONNECTIONS;

/// The QA's numbers.
const IDLE: usize = 1_100;
const CRAWL_FILES: u32 = 1_024;

/// How many files process `pid` has open.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// The soft and hard open-files limits of this process, from /proc.
fn open_files_limits() -> (u64, u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("Linux /proc");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("a Max open files line");
    let mut nums = line.split_whitespace().filter_map(|w| w.parse::<u64>().ok());
    (nums.next().unwrap_or(0), nums.next().unwrap_or(u64::MAX))
}

/// Makes room in this process for `n` more open files (raising its soft limit with `prlimit`
/// when needed, within the hard one).
fn room_for(n: u64) {
    let (soft, hard) = open_files_limits();
    if soft >= n + 256 {
        return;
    }
    assert!(hard >= n + 256, "the hard open-files limit {hard} is too low for {n} connections");
    let pid = std::process::id().to_string();
    let ok = std::process::Command::new("prlimit")
        .args(["--pid", &pid, &format!("--nofile={}:{hard}", (n + 256).max(soft))])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok && open_files_limits().0 >= n + 256, "could not raise the open-files limit from {soft}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_connections_leave_the_crawl_whole() {
    room_for(IDLE as u64);
    // 400 pages, 50 ms apart: some 20 s, longer than the control port's 10 s idle timeout.
    let (site, truth) = common::small_site(400).await;
    let dir = tempfile::tempdir().unwrap();
    let url = site.url("/index.html");
    let args = common::listened_crawl(&url, &["--state", "st"], "50");
    let crawl = Watched::spawn_with_open_files(dir.path(), &args, CRAWL_FILES);
    let control = crawl.control_addr().await;
    wait_until(Duration::from_secs(20), "a few pages", || site.hit_count() >= 5).await;

    let pid = crawl.child.id().expect("running");
    let before = open_fds(pid);
    let mut idle = Vec::with_capacity(IDLE);
    for n in 0..IDLE {
        let conn =
            tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(control)).await;
        match conn {
            Ok(Ok(s)) => idle.push(s),
            other => panic!("connection {n} of {IDLE}: {other:?}"),
        }
    }
    // Held: the crawl goes on, and its open files stay within the cap (the crawl's own use
    // may grow a little meanwhile).
    let at = site.hit_count();
    let mut peak = 0;
    wait_until(Duration::from_secs(20), "pages while they are held", || {
        peak = peak.max(open_fds(pid));
        site.hit_count() >= at + 20
    })
    .await;
    let most = before + MAX_CONNECTIONS + 32;
    assert!(
        peak <= most,
        "{peak} open files while the connections are held; {before} before, at most {most}"
    );
    // The API answers again once the idle ones have timed out (10 s); until then the server
    // may close new connections at once.
    let start = Instant::now();
    loop {
        if let Ok((200, _)) = control_request(control, "GET", "/api/status", &[], "").await {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the API never answered again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(idle);

    let (status, err) = crawl.finish().await;
    assert_eq!(status.code(), Some(0), "{err}");
    let pages = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    assert_eq!(pages.lines().count(), truth.unique_urls, "every page: {err}");
    site.shutdown().await;
}
