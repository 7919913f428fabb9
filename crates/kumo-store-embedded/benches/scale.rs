//! Scale: pushes N synthetic URLs (default 10 million, over 1,000 hosts) through the embedded
//! store's seen set and frontier, as discoveries arrive in a crawl (batches of 20), then
//! leases and completes a share of them, and reopens the state. Prints resident memory and
//! bytes per URL at each step. Runs once (not a criterion loop), under the binary's allocator:
//!
//!   cargo bench -p kumo-store-embedded --bench scale -- [URLS] [--hosts H]
//!
//! Targets (issue 5): the seen set at most 16 bytes of RAM per URL, the whole frontier under
//! 2 GB resident at 10 M URLs. With `--hosts` (say 1 000 000 URLs over 1 000 000 hosts, a broad
//! crawl's shape) it also prints the resident bytes per known host, each host's queued URL and
//! seen-set entry included (the broad-crawl issue's target: at most 300 B).

use std::time::Instant;

use kumo_core::{CanonicalOptions, DedupMode, Request, Url};
use kumo_frontier::{Completion, Frontier, HostPolicy, Politeness};
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCH: u64 = 20;

/// Resident memory of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
    pages * 4096
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn request(i: u64, hosts: u64) -> (kumo_core::Fingerprint, Request) {
    // Scatter URLs over hosts and paths the way links arrive: not in order.
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // A prime multiplier: over `hosts` consecutive URLs, every host once.
    let host = i.wrapping_mul(2_654_435_761) % hosts.max(1);
    let url = format!("http://host{host}.test/section/{}/page-{}.html", (x >> 20) % 500, i);
    let r = Request::get(Url::parse(&url).expect("url"));
    (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
}

fn report(what: &str, urls: u64, base: u64, started: Instant) {
    let now = rss();
    println!(
        "{what:<34} {urls:>11} URLs  rss {:>8.1} MiB  ({:>5.1} B/URL over the empty store)  {:>6.1} s",
        mib(now),
        now.saturating_sub(base) as f64 / urls.max(1) as f64,
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let hosts_at = args.iter().position(|a| a == "--hosts");
    let hosts: u64 = hosts_at.and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(1_000);
    let n: u64 = args
        .iter()
        .enumerate()
        .filter(|(i, _)| hosts_at.is_none_or(|h| *i != h + 1))
        .find_map(|(_, a)| a.parse().ok())
        .unwrap_or(10_000_000);
    let request = |i| request(i, hosts);
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = || EmbeddedConfig {
        politeness: Politeness {
            default: HostPolicy { parallelism: 1_000, ..Default::default() },
            ..Default::default()
        },
        ..Default::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let started = Instant::now();
        let store = EmbeddedStore::open(dir.path(), cfg()).expect("open");
        let base = rss();
        println!("empty store: rss {:.1} MiB", mib(base));
        let mut i = 0;
        while i < n {
            let batch: Vec<_> = (i..(i + BATCH).min(n)).map(request).collect();
            store.push(batch).await.expect("push");
            i += BATCH;
            if i % (n / 5).max(1) == 0 {
                report("pushed", i, base, started);
            }
        }
        let per_host = rss().saturating_sub(base) as f64 / hosts.min(n).max(1) as f64;
        let known = store.stats().await.expect("stats").hosts;
        println!("{known} hosts known: {per_host:.0} B resident per host, its queued URLs and seen entries included");
        // Every URL again: all seen, nothing queued twice.
        let t = Instant::now();
        let mut seen = 0;
        for j in (0..n).step_by(BATCH as usize) {
            let batch: Vec<_> = (j..(j + BATCH).min(n)).map(request).collect();
            seen += store.push(batch).await.expect("push").seen;
        }
        assert_eq!(seen as u64, n, "every repeat is recognised");
        println!(
            "re-pushed {n} URLs: all seen, {:.2} µs per URL",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
        report("after re-push", n, base, started);
        // Lease and complete a tenth, as a crawl would.
        let t = Instant::now();
        let mut done = 0u64;
        while done < n / 10 {
            let leases = store.lease(256).await.expect("lease");
            if leases.is_empty() {
                break;
            }
            done += leases.len() as u64;
            let batch = leases
                .into_iter()
                .map(|l| Completion::Done { lease: l.id, discovered: vec![], page: None })
                .collect();
            store.complete(batch).await.expect("complete");
        }
        println!(
            "leased and completed {done}: {:.2} µs each",
            t.elapsed().as_secs_f64() * 1e6 / done.max(1) as f64
        );
        report("after leasing a tenth", n, base, started);
        let stats = store.stats().await.expect("stats");
        drop(store);
        let t = Instant::now();
        let store = EmbeddedStore::open(dir.path(), cfg()).expect("reopen");
        let again = store.stats().await.expect("stats");
        assert_eq!(again.queued, stats.queued, "everything queued is back after a reopen");
        println!("reopened {} queued in {:.1} s", again.queued, t.elapsed().as_secs_f64());
        report("after reopen", n, base, started);
        println!("peak rss {:.1} MiB", mib(peak()));
    });
}

fn peak() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok());
    kb.unwrap_or(0) * 1024
}
