//! Seen-set insert and lookup throughput, and memory per URL at 10 million URLs.
//!
//! Memory is measured as the `kumo` binary pays it: under mimalloc (its global allocator, with
//! the same features), as growth of the resident set while the set fills, beside the heap
//! bytes the set counts itself. Each 10⁷ figure comes from a fresh child process, so no set
//! reuses memory another one freed.

use std::future::Future;
use std::hint::black_box;
use std::process::Command;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use kumo_core::Fingerprint;
use kumo_frontier::{ExactMemorySeenSet, ExactSeenSet, MemorySeenSet, SeenSet};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Fingerprints are uniform hashes; random ones are as good and cheaper to make. They come in
/// random order, as a crawl discovers them.
fn random_fps(n: usize, seed: u64) -> impl Iterator<Item = Fingerprint> {
    let mut rng = fastrand::Rng::with_seed(seed);
    std::iter::repeat_with(move || Fingerprint(rng.u128(..))).take(n)
}

/// The page size, from the kernel's own report (4 KiB if it cannot be read).
fn page_size() -> usize {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let kib = smaps
        .lines()
        .find_map(|l| l.strip_prefix("KernelPageSize:")?.trim().strip_suffix(" kB")?.parse().ok());
    kib.unwrap_or(4) * 1024
}

/// Resident set size: resident pages (the second field of `/proc/self/statm`) × page size.
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("statm field 2");
    pages * page_size()
}

const TEN_M: usize = 10_000_000;
/// Which 10⁷ measurement a child process runs.
const CHILD: &str = "KUMO_SEEN_BENCH_CHILD";

fn per_url(bytes: usize) -> f64 {
    bytes as f64 / TEN_M as f64
}

/// Millions per second for `TEN_M` operations since `t`.
fn rate(t: Instant) -> f64 {
    TEN_M as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// Runs a future that never waits (the memory sets' `async` methods) to completion.
fn ready<T>(f: impl Future<Output = T>) -> T {
    match std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("the memory seen sets never wait"),
    }
}

fn report(name: &str, rss: usize, heap: usize, inserts: f64, hits: f64, misses: f64) {
    eprintln!(
        "seen/10M {name}: RSS growth {:.2} B/URL (mimalloc), heap {:.2} B/URL (counted); \
         {inserts:.2} M inserts/s, contains {hits:.2} M/s (present) {misses:.2} M/s (absent)",
        per_url(rss),
        per_url(heap),
    );
}

fn exact() {
    let rss0 = rss_bytes();
    let mut s = ExactSeenSet::new();
    let t = Instant::now();
    random_fps(TEN_M, 1).for_each(|f| _ = s.insert(f));
    let inserts = rate(t);
    let rss = rss_bytes().saturating_sub(rss0);
    assert_eq!(s.len(), TEN_M);
    let t = Instant::now();
    assert!(random_fps(TEN_M, 1).all(|f| s.contains(f)));
    let hits = rate(t);
    let t = Instant::now();
    assert_eq!(random_fps(TEN_M, 2).filter(|&f| s.contains(f)).count(), 0);
    report("ExactSeenSet", rss, s.heap_bytes(), inserts, hits, rate(t));
}

/// Reopening from disk: ascending fingerprints in chunks of 2¹⁶, as the embedded store reads them.
fn exact_bulk() {
    let mut sorted: Vec<Fingerprint> = random_fps(TEN_M, 1).collect();
    sorted.sort_unstable();
    let rss0 = rss_bytes();
    let mut s = ExactSeenSet::new();
    let t = Instant::now();
    sorted.chunks(1 << 16).for_each(|c| s.extend_from_sorted(c.iter().copied()));
    let loads = rate(t);
    eprintln!(
        "seen/10M ExactSeenSet::extend_from_sorted: RSS growth {:.2} B/URL, heap {:.2} B/URL; \
         {loads:.2} M/s",
        per_url(rss_bytes().saturating_sub(rss0)),
        per_url(s.heap_bytes()),
    );
}

/// Through the `SeenSet` interface, as the memory frontier calls it: batches of 1024.
fn memory() {
    let rss0 = rss_bytes();
    let s = MemorySeenSet::new();
    let mut batch = Vec::with_capacity(1024);
    let t = Instant::now();
    let mut fps = random_fps(TEN_M, 1).peekable();
    while fps.peek().is_some() {
        batch.clear();
        batch.extend(fps.by_ref().take(1024));
        black_box(s.insert_sync(&batch));
    }
    let inserts = rate(t);
    let rss = rss_bytes().saturating_sub(rss0);
    assert_eq!(s.len_sync(), TEN_M);
    let t = Instant::now();
    assert!(random_fps(TEN_M, 1).all(|f| ready(SeenSet::contains(&s, f)).unwrap()));
    let hits = rate(t);
    let t = Instant::now();
    assert_eq!(random_fps(TEN_M, 2).filter(|&f| ready(SeenSet::contains(&s, f)).unwrap()).count(), 0);
    report("MemorySeenSet (64-bit keys)", rss, s.heap_bytes(), inserts, hits, rate(t));
}

/// Each 10⁷ measurement in its own process, so its RSS growth is its own.
fn ten_million() {
    let exe = std::env::current_exe().expect("the bench executable");
    for which in ["exact", "exact_bulk", "memory"] {
        let status = Command::new(&exe).env(CHILD, which).status().expect("run the bench child");
        assert!(status.success(), "seen/10M {which}: {status}");
    }
}

fn insert(c: &mut Criterion) {
    let mut g = c.benchmark_group("seen");
    const N: usize = 100_000;
    let fps: Vec<Fingerprint> = random_fps(N, 2).collect();
    let mut sorted = fps.clone();
    sorted.sort();
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(format!("MemorySeenSet insert {N} new"), |b| {
        b.iter_batched(MemorySeenSet::new, |s| black_box(s.insert_sync(&fps)), BatchSize::LargeInput)
    });
    g.bench_function(format!("ExactMemorySeenSet insert {N} new"), |b| {
        b.iter_batched(ExactMemorySeenSet::new, |s| black_box(s.insert_sync(&fps)), BatchSize::LargeInput)
    });
    g.bench_function(format!("ExactSeenSet insert {N} new"), |b| {
        b.iter_batched(
            ExactSeenSet::new,
            |mut s| {
                fps.iter().for_each(|&f| _ = s.insert(f));
                s
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(format!("ExactSeenSet extend_from_sorted {N}"), |b| {
        b.iter_batched(
            ExactSeenSet::new,
            |mut s| {
                s.extend_from_sorted(sorted.iter().copied());
                s
            },
            BatchSize::LargeInput,
        )
    });
    let mut full = ExactSeenSet::new();
    fps.iter().for_each(|&f| _ = full.insert(f));
    g.bench_function(format!("ExactSeenSet contains {N} present"), |b| {
        b.iter(|| fps.iter().filter(|&&f| full.contains(f)).count())
    });
    g.finish();
}

criterion_group!(benches, insert);

fn main() {
    match std::env::var(CHILD).as_deref() {
        Ok("exact") => return exact(),
        Ok("exact_bulk") => return exact_bulk(),
        Ok("memory") => return memory(),
        _ => {}
    }
    // `cargo bench` passes `--bench`; `cargo test` runs each benchmark once and skips the
    // 10⁷ figures, which take a minute. A name filter skips them unless it names them.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.iter().find(|a| !a.starts_with('-'));
    if args.iter().any(|a| a == "--bench") && filter.is_none_or(|f| "seen/10M".contains(f.as_str())) {
        ten_million();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
