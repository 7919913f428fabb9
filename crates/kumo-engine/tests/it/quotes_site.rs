//! A crawl of the quotes site snapshot (`testdata/quotes-site`) served from disk:
//! 214 pages, 51 redirects, nothing fetched from the external sites it links to.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{config, crawl, field, status};
use kumo_core::SkipReason;
use kumo_testsite::ServerBuilder;

fn testdata() -> PathBuf {
    if let Ok(p) = std::env::var("KUMO_TESTDATA") {
        return PathBuf::from(p);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotes_site_ground_truth() {
    let root = testdata();
    let server = ServerBuilder::new().directory(root.join("quotes-site")).start().await.expect("server");
    let (summary, items) = crawl(config(&server.url("/"))).await;

    let ok: Vec<_> = items.iter().filter(|i| status(i) == 200).collect();
    let redirects: Vec<_> = items.iter().filter(|i| status(i) == 301).collect();
    assert_eq!(ok.len(), 214, "HTML pages");
    assert_eq!(redirects.len(), 51, "redirects");
    assert_eq!(items.len(), 265, "nothing else was fetched");

    // Every listed URL was fetched with status 200.
    let base = server.base_url();
    let fetched: BTreeSet<String> =
        ok.iter().map(|i| field(i, "url").trim_start_matches(&base).to_string()).collect();
    let listed = std::fs::read_to_string(root.join("quotes-site.urls.txt")).expect("url list");
    for path in listed.lines().filter(|l| !l.is_empty()) {
        assert!(fetched.contains(path), "{path} was fetched");
    }
    // Redirects lead to the slash form, which was then fetched once.
    for r in &redirects {
        let target = field(r, "final_url").trim_start_matches(&base).to_string();
        assert!(target.ends_with('/') && fetched.contains(&target), "{target}");
    }
    // External links were seen and not followed: no record for another host.
    assert!(items.iter().all(|i| field(i, "url").starts_with(&base)));
    assert!(summary.skipped[&SkipReason::Domain] > 0);
    assert_eq!(common::page_hits(&server), 265);
}
