//! Listeners see a crawl of the synthetic site with exact counts: one `before_fetch` and one
//! `after_fetch` per page (robots.txt is the robots cache's and not reported), one `item` per
//! record, `links_found` once per analyzed page, and `finish` once.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use kumo_core::{Item, Request, Response};
use kumo_engine::{CrawlError, Listener, Summary};
use kumo_testsite::{ServerBuilder, SiteConfig};

#[derive(Default)]
struct Counting {
    before: AtomicU64,
    after: AtomicU64,
    links: AtomicU64,
    links_admitted: AtomicU64,
    targets: AtomicU64,
    items: AtomicU64,
    errors: AtomicU64,
    finish: AtomicU64,
    finish_items: AtomicU64,
}

impl Listener for Counting {
    fn before_fetch(&self, _: &Request) {
        self.before.fetch_add(1, Relaxed);
    }
    fn after_fetch(&self, _: &Response) {
        self.after.fetch_add(1, Relaxed);
    }
    fn links_found(&self, _: &Request, admitted: &[Request]) {
        self.links.fetch_add(1, Relaxed);
        self.links_admitted.fetch_add(admitted.len() as u64, Relaxed);
    }
    fn target_page(&self, _: &Response) {
        self.targets.fetch_add(1, Relaxed);
    }
    fn item(&self, _: &Item) {
        self.items.fetch_add(1, Relaxed);
    }
    fn error(&self, _: &CrawlError) {
        self.errors.fetch_add(1, Relaxed);
    }
    fn finish(&self, s: &Summary) {
        self.finish.fetch_add(1, Relaxed);
        self.finish_items.store(s.items, Relaxed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counting_listener_sees_every_stage() {
    let site = SiteConfig { pages: 50, ..SiteConfig::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.expect("site");
    let counts = Arc::new(Counting::default());
    let mut cfg = common::config(&server.url("/index.html"));
    cfg.listeners.push(counts.clone());
    let (summary, items) = common::crawl(cfg).await;

    let pages = truth.unique_urls as u64;
    assert_eq!(summary.pages, pages);
    assert_eq!(counts.before.load(Relaxed), pages, "one before_fetch per page, robots.txt not included");
    assert_eq!(counts.after.load(Relaxed), pages, "one after_fetch per response");
    assert_eq!(counts.links.load(Relaxed), pages, "links_found once per analyzed page");
    assert!(counts.links_admitted.load(Relaxed) >= pages - 1, "every page but the seed was admitted");
    assert_eq!(counts.targets.load(Relaxed), pages, "the page analyzer makes a record of every page");
    assert_eq!(counts.items.load(Relaxed), items.len() as u64, "one item call per record");
    assert_eq!(counts.items.load(Relaxed), summary.items);
    assert_eq!(counts.errors.load(Relaxed), 0);
    assert_eq!(counts.finish.load(Relaxed), 1, "finish exactly once");
    assert_eq!(counts.finish_items.load(Relaxed), summary.items, "finish gets the final summary");
}
