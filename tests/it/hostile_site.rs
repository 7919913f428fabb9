//! The hostile site (`kumo testsite --hostile`) crawled by the real binary, as a user would:
//! kumo ends by itself with exit 0, fetches every normal page exactly once, never asks for
//! what robots.txt (or its absence) forbids or what lies outside the crawl, stays small,
//! lists every failure with its reason, and fetches the transient ones after a requeue. Killed
//! twice with SIGKILL and resumed, it loses and duplicates nothing.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use kumo_testsite::{HostileConfig, HostileSite, HostileTruth};

use common::{KUMO, kumo_in, stderr};

/// Most memory the crawl may use, whatever the site throws at it.
const MAX_RSS: u64 = 200 * 1024 * 1024;

/// `kumo crawl` of the hostile site, with short timeouts so that silent servers cost seconds.
fn crawl_args(t: &HostileTruth) -> Vec<String> {
    [
        "crawl",
        &t.start,
        "--max-depth",
        "8",
        "--timeout",
        "2",
        "--max-host-pause",
        "2",
        "--max-retry-after",
        "2",
        "--state",
        "st",
        "-o",
        "pages.jsonl",
        "--summary-json",
        "summary.json",
        "--no-progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Peak resident memory of process `pid` so far, in bytes (Linux).
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// When to kill a run with SIGKILL: `after` the moment `begun` first says the crawl is under
/// way (timed from there, not from the start, so a busy machine's slow start cannot push every
/// kill before the crawl stored anything).
struct Kill<'a> {
    after: Duration,
    begun: &'a dyn Fn() -> bool,
}

/// Runs `kumo ARGS` in `cwd` (at most 180 s), killing it as `kill` says if given. Returns its
/// output, whether the kill landed, and its peak memory as last read from /proc (read every
/// 20 ms: the kernel keeps the peak, so the last reading before the end misses at most the
/// final 20 ms).
async fn run(args: &[String], cwd: &Path, kill: Option<Kill<'_>>) -> (Output, bool, u64) {
    let mut child = tokio::process::Command::new(KUMO)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts");
    let pid = child.id().expect("running");
    let started = Instant::now();
    let mut begun: Option<Instant> = None;
    let mut peak = 0;
    let mut killed = false;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    // Bounded by the 180 s guard.
    loop {
        tokio::select! {
            _ = child.wait() => break,
            _ = tick.tick() => {
                peak = peak.max(peak_rss(pid).unwrap_or(0));
                assert!(started.elapsed() < Duration::from_secs(180), "kumo ran past 180 s");
                let Some(k) = kill.as_ref().filter(|_| !killed) else { continue };
                if begun.is_none() && (k.begun)() {
                    begun = Some(Instant::now());
                }
                if begun.is_some_and(|b| b.elapsed() >= k.after) {
                    child.start_kill().expect("SIGKILL");
                    killed = true;
                }
            }
        }
    }
    let out = child.wait_with_output().await.expect("kumo ran");
    (out, killed, peak)
}

/// Every record of the output file, by URL. A URL written twice fails the test, unless
/// `again` allows it (a failure queued again writes its page anew).
fn records(cwd: &Path, again: impl Fn(&str) -> bool) -> HashMap<String, serde_json::Value> {
    records_of(&[cwd.join("pages.jsonl")], again)
}

/// Every record of `files` together, by URL, as [`records`] reads one file.
fn records_of(
    files: &[std::path::PathBuf],
    again: impl Fn(&str) -> bool,
) -> HashMap<String, serde_json::Value> {
    let text: String = files.iter().map(|f| std::fs::read_to_string(f).expect("output written")).collect();
    let mut by_url = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is not whole JSON: {e}", n + 1));
        let url = v["url"].as_str().expect("url").to_owned();
        assert!(by_url.insert(url.clone(), v).is_none() || again(&url), "{url} written twice");
    }
    by_url
}

/// How often each URL was requested (the hosts' own logs).
fn request_counts(site: &HostileSite) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for url in site.requests() {
        *counts.entry(url).or_insert(0) += 1;
    }
    counts
}

/// What must hold of the hosts' logs after any crawl of the site, finished or not, over `runs`
/// runs: a run killed between a fetch and its commit fetches that URL again in the next one,
/// so "at most once" is once per run.
fn check_requests(t: &HostileTruth, counts: &BTreeMap<String, usize>, runs: usize) {
    for (url, n) in counts {
        if let Some(p) = t.forbidden.iter().find(|p| url.starts_with(p.as_str())) {
            panic!("{url} was requested ({n}×), under the forbidden {p}");
        }
    }
    // A failure queued again is asked for again: the hop where the redirect chain fails is
    // one of those once a requeue has run.
    for url in t.at_most_once.iter().filter(|u| !failing(t, u)) {
        let n = counts.get(url).copied().unwrap_or(0);
        assert!(n <= runs, "{url} requested {n} times in {runs} runs");
    }
    let trapped: usize = counts.iter().filter(|(u, _)| u.starts_with(&t.traps)).map(|(_, n)| n).sum();
    assert!(trapped <= 100, "{trapped} requests went into the spider traps");
}

/// Every normal page was requested exactly once.
fn check_normal_once(t: &HostileTruth, counts: &BTreeMap<String, usize>) {
    let wrong: Vec<_> =
        t.normal.iter().filter(|u| counts.get(*u) != Some(&1)).map(|u| (u, counts.get(u))).collect();
    assert!(wrong.is_empty(), "normal pages not fetched exactly once: {wrong:?}");
}

/// Normal and flaky pages each have one successful record; odd charsets read right.
fn check_records(t: &HostileTruth, records: &HashMap<String, serde_json::Value>) {
    for url in t.normal.iter().chain(&t.flaky) {
        let r = records.get(url).unwrap_or_else(|| panic!("no record of {url}"));
        assert_eq!(r["status"], 200, "{url}: {r}");
    }
    for (url, title) in &t.titles {
        assert_eq!(records[url]["title"], title.as_str(), "{url}");
    }
}

/// `kumo failures list --json` of the crawl in `cwd`, as (url, kind, message).
async fn failures(cwd: &Path) -> Vec<(String, String, String)> {
    failures_of(cwd, &["--state", "st"]).await
}

/// `kumo failures list --json` of the crawl `place` names (`--state DIR`, or `--redis URL
/// --crawl NAME`), as (url, kind, message).
async fn failures_of(cwd: &Path, place: &[&str]) -> Vec<(String, String, String)> {
    let args: Vec<&str> = ["failures", "list", "--json"].iter().chain(place).copied().collect();
    let out = kumo_in(cwd, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    list.iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (s("url"), s("kind"), s("message"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hostile_site_is_crawled_whole_politely_and_within_memory() {
    let site = HostileSite::start(HostileConfig::default()).await.unwrap();
    let t = site.truth().clone();
    let dir = tempfile::tempdir().unwrap();
    let args = crawl_args(&t);

    let started = Instant::now();
    let (out, _, peak) = run(&args, dir.path(), None).await;
    let took = started.elapsed();
    eprintln!("hostile crawl: {:.1} s, peak RSS {:.0} MB", took.as_secs_f64(), peak as f64 / 1e6);
    assert!(out.status.success(), "kumo failed: {}", stderr(&out));
    assert!(peak < MAX_RSS, "peak RSS {peak} bytes");

    let counts = request_counts(&site);
    check_requests(&t, &counts, 1);
    check_normal_once(&t, &counts);
    check_records(&t, &records(dir.path(), |_| false));

    // Every failure is listed with its reason; nothing else failed.
    let listed = failures(dir.path()).await;
    check_failures(&t, &counts, &listed);

    // Queued again, the transient failures are fetched by a resumed crawl; nothing else is.
    let requeued = kumo_in(dir.path(), &["failures", "requeue", "--state", "st"]).await;
    assert!(requeued.status.success(), "{}", stderr(&requeued));
    let (out, _, _) = run(&args, dir.path(), None).await;
    assert!(out.status.success(), "the resumed crawl failed: {}", stderr(&out));
    let after = request_counts(&site);
    check_requests(&t, &after, 1);
    check_normal_once(&t, &after);
    check_transient_fetched(&t, &records(dir.path(), |u| failing(&t, u)));
    site.shutdown().await;
}

/// The hostile site crawled with kumo's own settings (only a depth limit, without which its
/// spider traps never end): no single URL's `Retry-After` holds its host or the crawl. Its
/// 429 with a Retry-After no clock holds and its 503 asking for a day are longer than kumo
/// believes (`--max-retry-after`, 120 s), so they retry on their back-off; every normal and
/// flaky page is written within seconds of the first (a pause of the host would take 120 s
/// or more). What is left after them is the cost of dead hosts, which have no normal page:
/// the silent server's three 30 s timeouts and the robots.txt answering 503, waited out
/// twice for 30 s as RFC 9309 asks; the crawl took 421 s when one URL could pause its host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_default_settings_no_single_url_holds_the_crawl() {
    let site = HostileSite::start(HostileConfig::default()).await.unwrap();
    let t = site.truth().clone();
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> =
        ["crawl", &t.start, "--max-depth", "8", "--state", "st", "-o", "pages.jsonl", "--no-progress"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let started = Instant::now();
    let (out, _, _) = run(&args, dir.path(), None).await;
    let took = started.elapsed();
    eprintln!("hostile crawl with default settings: {:.1} s", took.as_secs_f64());
    assert!(out.status.success(), "kumo failed: {}", stderr(&out));
    let counts = request_counts(&site);
    check_requests(&t, &counts, 1);
    check_normal_once(&t, &counts);
    let records = records(dir.path(), |_| false);
    check_records(&t, &records);
    let at = |url: &String| {
        let r = &records[url];
        humantime::parse_rfc3339(r["fetched_at"].as_str().expect("fetched_at")).expect("a time")
    };
    let pages: Vec<&String> = t.normal.iter().chain(&t.flaky).collect();
    let first = pages.iter().map(|u| at(u)).min().expect("pages");
    let last = pages.iter().map(|u| at(u)).max().expect("pages");
    let span = last.duration_since(first).expect("ordered");
    assert!(span < Duration::from_secs(60), "the pages took {span:?}: a host waited out a pause");
    // Three timeouts of 30 s, the longest a dead host costs, and room for a busy machine.
    assert!(took < Duration::from_secs(150), "the crawl took {took:?}");
    site.shutdown().await;
}

/// Whether `url` is one of the requests that fail for good (a requeue asks for them again).
fn failing(t: &HostileTruth, url: &str) -> bool {
    t.failing.iter().any(|(p, _)| url.starts_with(p.as_str()))
}

/// After a requeue and a resumed crawl, every transient page has its successful record.
fn check_transient_fetched(t: &HostileTruth, records: &HashMap<String, serde_json::Value>) {
    for url in &t.transient {
        assert_eq!(records.get(url).map(|r| &r["status"]), Some(&200.into()), "{url} after the requeue");
    }
}

/// Every expected failure is listed with its reason, the transient ones too, and no other.
fn check_failures(t: &HostileTruth, counts: &BTreeMap<String, usize>, listed: &[(String, String, String)]) {
    for (prefix, kind) in &t.failing {
        let found = listed.iter().find(|(u, _, _)| u.starts_with(prefix.as_str()));
        let (_, k, message) = found.unwrap_or_else(|| {
            let origin = &prefix[..prefix[8..].find('/').map_or(prefix.len(), |i| i + 8)];
            let asked: Vec<_> = counts.keys().filter(|u| u.starts_with(origin)).collect();
            panic!("no failure listed for {prefix} (requests there: {asked:?}): {listed:#?}")
        });
        assert!(!message.is_empty(), "{prefix}: a failure without a reason");
        if let Some(kind) = kind {
            assert_eq!(k, kind, "{prefix}: {message}");
        }
    }
    for url in &t.transient {
        assert!(listed.iter().any(|(u, _, _)| u == url), "{url} is not among the failures");
    }
    let expected = t.failing.len() + t.transient.len();
    assert_eq!(listed.len(), expected, "unexpected failures: {listed:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hostile_crawl_killed_twice_loses_and_duplicates_nothing() {
    let site = HostileSite::start(HostileConfig::default()).await.unwrap();
    let t = site.truth().clone();
    let dir = tempfile::tempdir().unwrap();
    let args = crawl_args(&t);
    let seed = fastrand::u64(..);
    eprintln!("kill schedule seed: {seed}");
    let mut rng = fastrand::Rng::with_seed(seed);

    // The crawl waits seconds on silent servers, so kills within a second and a half of its
    // first requests land mid-crawl.
    let mut kills = 0;
    for _ in 0..2 {
        let after = Duration::from_millis(rng.u64(250..1_450));
        // robots.txt and a page: each run asks for robots.txt again.
        let before = site.requests().len();
        let begun = || site.requests().len() >= before + 2;
        let (out, killed, _) = run(&args, dir.path(), Some(Kill { after, begun: &begun })).await;
        assert!(killed, "the crawl ended before the kill: {}", stderr(&out));
        kills += 1;
    }
    let (out, _, _) = run(&args, dir.path(), None).await;
    assert!(out.status.success(), "the final run failed: {}", stderr(&out));
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    assert_eq!(kills, 2);

    // `records` fails on a URL written twice; every normal and flaky page is there once.
    check_records(&t, &records(dir.path(), |_| false));
    check_requests(&t, &request_counts(&site), kills + 1);
    site.shutdown().await;
}

/// Two workers share one crawl of the hostile site over Redis: the same guarantees as one
/// process on its embedded state, and the requeue is the crawl's, for any worker to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_redis_workers_crawl_the_hostile_site_as_one() {
    let site = HostileSite::start(HostileConfig::default()).await.unwrap();
    let t = site.truth().clone();
    let redis = kumo_testsite::services::Redis::start().await.expect("redis-server starts");
    let url = redis.unix_url();
    let dir = tempfile::tempdir().unwrap();
    let worker_args = |n: usize| -> Vec<String> {
        let mut a = crawl_args(&t);
        // The state options give way to the shared crawl.
        let state = a.iter().position(|x| x == "--state").unwrap();
        a.drain(state..state + 2);
        let out = a.iter().position(|x| x == "pages.jsonl").unwrap();
        a[out] = format!("w{n}.jsonl");
        a.extend(["--redis".into(), url.clone(), "--crawl".into(), "hostile".into()]);
        a
    };
    let (a1, a2) = (worker_args(1), worker_args(2));
    let ((o1, _, peak1), (o2, _, peak2)) =
        tokio::join!(run(&a1, dir.path(), None), run(&a2, dir.path(), None));
    assert!(o1.status.success(), "worker 1: {}", stderr(&o1));
    assert!(o2.status.success(), "worker 2: {}", stderr(&o2));
    assert!(peak1.max(peak2) < MAX_RSS);

    let counts = request_counts(&site);
    check_requests(&t, &counts, 1);
    check_normal_once(&t, &counts);
    let files = [dir.path().join("w1.jsonl"), dir.path().join("w2.jsonl")];
    check_records(&t, &records_of(&files, |_| false));
    let place = ["--redis", url.as_str(), "--crawl", "hostile"];
    check_failures(&t, &counts, &failures_of(dir.path(), &place).await);

    let args: Vec<&str> = ["failures", "requeue"].iter().chain(&place).copied().collect();
    let requeued = kumo_in(dir.path(), &args).await;
    assert!(requeued.status.success(), "{}", stderr(&requeued));
    let (out, _, _) = run(&a1, dir.path(), None).await;
    assert!(out.status.success(), "worker 1 again: {}", stderr(&out));
    let after = request_counts(&site);
    check_requests(&t, &after, 1);
    check_normal_once(&t, &after);
    check_transient_fetched(&t, &records_of(&files, |u| failing(&t, u)));
    site.shutdown().await;
}
