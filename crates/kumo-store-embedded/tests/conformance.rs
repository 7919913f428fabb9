//! The embedded store passes the same conformance suite as the in-memory frontier, with
//! spilling forced (one request in memory per level) and without, and survives reopening.

use kumo_frontier::conformance::{SuiteConfig, run_all, survives_reopen};
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};

fn open(dir: &std::path::Path, c: SuiteConfig, spill_at: usize) -> EmbeddedStore {
    let cfg =
        EmbeddedConfig { politeness: c.politeness, lease_ttl: c.lease_ttl, spill_at, ..Default::default() };
    EmbeddedStore::open(dir, cfg).expect("open")
}

#[tokio::test]
async fn embedded_store_conforms() {
    let root = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    run_all(|c| {
        open(&root.path().join(n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()), c, 256)
    })
    .await;
}

#[tokio::test]
async fn embedded_store_conforms_while_spilling() {
    let root = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    run_all(|c| {
        open(&root.path().join(n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()), c, 1)
    })
    .await;
}

#[tokio::test]
async fn embedded_store_survives_reopen() {
    let root = tempfile::tempdir().unwrap();
    let c = SuiteConfig {
        politeness: kumo_frontier::Politeness {
            default: kumo_frontier::HostPolicy { parallelism: 1000, ..Default::default() },
            rules: vec![],
        },
        lease_ttl: std::time::Duration::from_secs(600),
    };
    survives_reopen(|| open(root.path(), c.clone(), 1)).await;
}
