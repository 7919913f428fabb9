//! Spider traps the scope cannot tell from a site: a URL shape that keeps growing is named in
//! the summary (and a warning) once it passes `trap_warn_pages`.

use crate::common;

use common::{config, crawl};
use kumo_testsite::{Fixture, ServerBuilder, TestServer};

/// `/` links to `/about` and to `/cal/1`, a calendar whose every page links to the next, up to
/// `/cal/6`.
async fn calendar() -> TestServer {
    let mut b = ServerBuilder::new()
        .fixture("/", Fixture::html("<a href=\"/about\">about</a> <a href=\"/cal/1\">calendar</a>"))
        .fixture("/about", Fixture::html("about"));
    for n in 1..=6 {
        let body = if n < 6 { format!("<a href=\"/cal/{}\">next</a>", n + 1) } else { "the end".into() };
        b = b.fixture(&format!("/cal/{n}"), Fixture::html(&body));
    }
    b.start().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_growing_url_shape_is_named_in_the_summary() {
    let server = calendar().await;
    let mut cfg = config(&server.url("/"));
    cfg.trap_warn_pages = 5;
    cfg.trap_warn_depth = 0;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 8, "a warning only: every page is still fetched");
    let base = server.url("/");
    let shape = format!("{}cal/#", base);
    assert_eq!(summary.trap_warnings.len(), 1, "only the calendar: {:?}", summary.trap_warnings);
    assert_eq!(summary.trap_warnings.get(&shape), Some(&6), "{:?}", summary.trap_warnings);
    assert!(summary.to_string().contains(&format!("trap?:     6 pages of {shape}")), "{summary}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["trap_warnings"][&shape], 6, "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_threshold_or_off_nothing_is_named() {
    let server = calendar().await;
    let mut cfg = config(&server.url("/"));
    cfg.trap_warn_pages = 7;
    cfg.trap_warn_depth = 0;
    let (summary, _) = crawl(cfg).await;
    assert!(summary.trap_warnings.is_empty(), "6 pages of the shape: {:?}", summary.trap_warnings);

    let mut cfg = config(&server.url("/"));
    cfg.trap_warn_pages = 0;
    let (summary, items) = crawl(cfg).await;
    assert_eq!(items.len(), 8);
    assert!(summary.trap_warnings.is_empty(), "off: {:?}", summary.trap_warnings);
    assert!(!summary.to_string().contains("trap?"), "{summary}");
}

/// Only pages deeper than `trap_warn_depth` count: the calendar's first three are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_deep_pages_count() {
    let server = calendar().await;
    let shape = format!("{}cal/#", server.url("/"));
    let mut cfg = config(&server.url("/"));
    (cfg.trap_warn_pages, cfg.trap_warn_depth) = (3, 3);
    let (summary, _) = crawl(cfg).await;
    assert_eq!(summary.trap_warnings.get(&shape), Some(&3), "/cal/4 to /cal/6: {:?}", summary.trap_warnings);
    let mut cfg = config(&server.url("/"));
    (cfg.trap_warn_pages, cfg.trap_warn_depth) = (4, 3);
    let (summary, _) = crawl(cfg).await;
    assert!(summary.trap_warnings.is_empty(), "three deep pages only: {:?}", summary.trap_warnings);
}
