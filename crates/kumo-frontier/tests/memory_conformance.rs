//! The in-memory frontier passes the backend conformance suite.

use kumo_frontier::conformance::{SuiteConfig, run_all};
use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig};

#[tokio::test]
async fn memory_frontier_conforms() {
    run_all(|c: SuiteConfig| {
        MemoryFrontier::new(MemoryFrontierConfig { politeness: c.politeness, lease_ttl: c.lease_ttl })
    })
    .await;
}
