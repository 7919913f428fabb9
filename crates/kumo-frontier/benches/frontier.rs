//! Frontier and seen-set throughput: push a batch, lease it all, complete it all.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kumo_core::{CanonicalOptions, DedupMode, Fingerprint, Request, Url};
use kumo_frontier::{
    Completion, Frontier, HostPolicy, MemoryFrontier, MemoryFrontierConfig, MemorySeenSet, Politeness,
};

fn requests(n: usize, hosts: usize) -> Vec<(Fingerprint, Request)> {
    (0..n)
        .map(|i| {
            let url = Url::parse(&format!("http://host{}.test/page/{i}.html", i % hosts)).unwrap();
            let r = Request::get(url).with_priority((i % 7) as i32);
            (r.fingerprint(&CanonicalOptions::default(), DedupMode::Strict), r)
        })
        .collect()
}

fn frontier() -> MemoryFrontier {
    MemoryFrontier::new(MemoryFrontierConfig {
        politeness: Politeness {
            default: HostPolicy { parallelism: 1_000_000, ..Default::default() },
            ..Default::default()
        },
        ..Default::default()
    })
}

fn push_lease_complete(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mut g = c.benchmark_group("frontier");
    const N: usize = 10_000;
    g.throughput(Throughput::Elements(N as u64));
    for hosts in [1usize, 100] {
        g.bench_function(format!("push+lease+ack {N} urls, {hosts} hosts"), |b| {
            b.iter_batched(
                || (frontier(), requests(N, hosts)),
                |(f, reqs)| {
                    rt.block_on(async {
                        f.push(reqs).await.unwrap();
                        let mut done = 0;
                        while done < N {
                            let leases = f.lease(64).await.unwrap();
                            done += leases.len();
                            let batch = leases
                                .into_iter()
                                .map(|l| Completion::Done { lease: l.id, discovered: vec![], page: None })
                                .collect();
                            f.complete(batch).await.unwrap();
                        }
                        black_box(f.stats().await.unwrap())
                    })
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.bench_function(format!("push {N} urls, half seen"), |b| {
        b.iter_batched(
            || {
                let f = frontier();
                let reqs = requests(N, 10);
                rt.block_on(f.push(reqs[..N / 2].to_vec())).unwrap();
                (f, reqs)
            },
            |(f, reqs)| rt.block_on(f.push(reqs)).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn seen_set(c: &mut Criterion) {
    let mut g = c.benchmark_group("seen");
    const N: usize = 100_000;
    let fps: Vec<Fingerprint> =
        (0..N).map(|i| Fingerprint::compute("GET", &format!("http://h/{i}"), b"", None)).collect();
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(format!("insert {N} new"), |b| {
        b.iter_batched(MemorySeenSet::new, |s| black_box(s.insert_sync(&fps)), BatchSize::LargeInput)
    });
    g.finish();
}

criterion_group!(benches, push_lease_complete, seen_set);
criterion_main!(benches);
