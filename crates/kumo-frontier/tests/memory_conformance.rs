//! The in-memory frontier passes the backend conformance suite.

use kumo_frontier::conformance::{SuiteConfig, run_all, run_budgets, run_per_ip};
use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig};

#[tokio::test]
async fn memory_frontier_conforms() {
    run_all(|c: SuiteConfig| {
        MemoryFrontier::new(MemoryFrontierConfig { politeness: c.politeness, lease_ttl: c.lease_ttl })
    })
    .await;
}

#[tokio::test]
async fn memory_frontier_keeps_politeness_per_ip() {
    run_per_ip(|c: SuiteConfig| {
        MemoryFrontier::new(MemoryFrontierConfig { politeness: c.politeness, lease_ttl: c.lease_ttl })
    })
    .await;
}

#[tokio::test]
async fn memory_frontier_keeps_page_budgets() {
    run_budgets(|c: SuiteConfig| {
        MemoryFrontier::new(MemoryFrontierConfig { politeness: c.politeness, lease_ttl: c.lease_ttl })
    })
    .await;
}
