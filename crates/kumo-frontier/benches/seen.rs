//! Seen-set insert throughput, and bytes per URL at 10 million URLs.

use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kumo_core::Fingerprint;
use kumo_frontier::{ExactMemorySeenSet, ExactSeenSet, MemorySeenSet};

/// Fingerprints are uniform hashes; random ones are as good and cheaper to make.
fn random_fps(n: usize, seed: u64) -> impl Iterator<Item = Fingerprint> {
    let mut rng = fastrand::Rng::with_seed(seed);
    std::iter::repeat_with(move || Fingerprint(rng.u128(..))).take(n)
}

/// Resident set size (Linux), to show what the allocator adds on top of the counted capacity.
fn rss_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    Some(statm.split_whitespace().nth(1)?.parse::<usize>().ok()? * 4096)
}

fn per_url(bytes: usize) -> f64 {
    bytes as f64 / TEN_M as f64
}

fn rate(t: Instant) -> f64 {
    TEN_M as f64 / t.elapsed().as_secs_f64() / 1e6
}

const TEN_M: usize = 10_000_000;

/// Run once, not in a criterion loop: inserting 10⁷ takes seconds and the figure is a size.
/// The exact set goes first, in a fresh process, so its RSS growth is not blurred by memory
/// another set freed; the later sets report heap only.
fn ten_million(_: &mut Criterion) {
    let (rss0, t) = (rss_bytes(), Instant::now());
    let mut exact = ExactSeenSet::new();
    random_fps(TEN_M, 1).for_each(|f| _ = exact.insert(f));
    let rate_exact = rate(t);
    let rss = rss0.zip(rss_bytes()).map_or("n/a".into(), |(a, b)| format!("{:.2}", per_url(b - a)));
    eprintln!(
        "seen/10M ExactSeenSet: {:.2} bytes/URL (heap by capacity), RSS growth {rss} bytes/URL, \
         {rate_exact:.2} M inserts/s",
        per_url(exact.heap_bytes()),
    );
    let sorted: Vec<Fingerprint> = exact.iter().collect();
    drop(exact);

    let t = Instant::now();
    let mut bulk = ExactSeenSet::new();
    bulk.extend_from_sorted(sorted.iter().copied());
    let rate_bulk = rate(t);
    eprintln!(
        "seen/10M ExactSeenSet::extend_from_sorted: {:.2} bytes/URL, {rate_bulk:.2} M inserts/s",
        per_url(bulk.heap_bytes()),
    );
    drop((bulk, sorted));

    let fps: Vec<Fingerprint> = random_fps(TEN_M, 1).collect();
    let t = Instant::now();
    let memory = MemorySeenSet::new();
    fps.chunks(1024).for_each(|c| _ = memory.insert_sync(c));
    eprintln!(
        "seen/10M MemorySeenSet (64-bit keys): {:.2} bytes/URL, {:.2} M inserts/s",
        per_url(memory.heap_bytes()),
        rate(t),
    );
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
    g.finish();
}

criterion_group!(benches, ten_million, insert);
criterion_main!(benches);
