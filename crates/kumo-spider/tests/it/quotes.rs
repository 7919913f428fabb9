//! The quotes example (`examples/quotes.toml`) against the quotes site served by the test
//! site: exactly the ground truth — 100 unique quotes, 50 authors, 137 tags.

use crate::common;

use kumo_pipeline::{CollectSink, Sink};
use kumo_spider::{LoadOptions, SpiderFile, run_site};
use kumo_testsite::ServerBuilder;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotes_toml_extracts_exactly_the_ground_truth() {
    let server =
        ServerBuilder::new().directory(common::testdata().join("quotes-site")).start().await.unwrap();
    let opts = LoadOptions { base: Some(server.base_url()), ..Default::default() };
    let file = SpiderFile::load(&common::root().join("examples/quotes.toml"), &opts).unwrap();
    let site = &file.sites[0];
    let sink = CollectSink::new();
    let items = sink.items();
    let summary = run_site(site, vec![Box::new(sink) as Box<dyn Sink>]).await.unwrap();
    let items = items.lock().unwrap().clone();

    common::assert_ground_truth(&items);

    // The de-duplication really dropped the quotes repeated on tag pages, and its counts
    // are in the summary.
    let procs = &summary.modules.pipelines[0].extra["processors"];
    let dedup = procs.as_array().unwrap().iter().find(|p| p["name"] == "quote:dedup(text)").unwrap();
    assert!(dedup["dropped"].as_u64().unwrap() > 0, "{procs}");
}
