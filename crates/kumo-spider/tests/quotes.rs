//! The quotes example (`examples/quotes.toml`) against the quotes site served by the test
//! site: exactly the ground truth — 100 unique quotes, 50 authors, 137 tags.

use std::collections::BTreeSet;
use std::path::PathBuf;

use kumo_core::Item;
use kumo_pipeline::{CollectSink, Sink};
use kumo_spider::{LoadOptions, SpiderFile, run_site};
use kumo_testsite::ServerBuilder;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("../shared/testdata"))
}

fn of(items: &[Item], model: &str) -> Vec<Item> {
    items.iter().filter(|i| i.get("_model") == Some(&Value::from(model))).cloned().collect()
}

fn s<'a>(i: &'a Item, f: &str) -> &'a str {
    i.get(f).and_then(Value::as_str).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotes_toml_extracts_exactly_the_ground_truth() {
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let opts = LoadOptions { base: Some(server.base_url()) };
    let file = SpiderFile::load(&root().join("examples/quotes.toml"), &opts).unwrap();
    let site = &file.sites[0];
    let sink = CollectSink::new();
    let items = sink.items();
    let summary = run_site(site, vec![Box::new(sink) as Box<dyn Sink>]).await.unwrap();
    let items = items.lock().unwrap().clone();

    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("quotes-site.ground-truth.json")).unwrap(),
    )
    .unwrap();
    let quotes = of(&items, "quote");
    let authors = of(&items, "author");
    let tags = of(&items, "tag");
    assert_eq!(quotes.len() as u64, truth["quotes_unique_text"].as_u64().unwrap());
    assert_eq!(quotes.iter().map(|q| s(q, "text")).collect::<BTreeSet<_>>().len(), 100);
    assert!(quotes.iter().all(|q| !s(q, "author").is_empty()));
    let no_tags = quotes.iter().filter(|q| q.get("tags").and_then(Value::as_array).is_none_or(Vec::is_empty));
    assert_eq!(no_tags.count() as u64, truth["quotes_without_tags"].as_u64().unwrap());
    let quote_tags: BTreeSet<&str> = quotes
        .iter()
        .flat_map(|q| q.get("tags").and_then(Value::as_array).unwrap().iter().filter_map(Value::as_str))
        .collect();
    assert_eq!(quote_tags.len() as u64, truth["tags_unique"].as_u64().unwrap());
    assert_eq!(tags.len(), 137);
    assert_eq!(tags.iter().map(|t| s(t, "name")).collect::<BTreeSet<_>>(), quote_tags);

    assert_eq!(authors.len() as u64, truth["authors"].as_u64().unwrap());
    let einstein = authors.iter().find(|a| s(a, "name") == "Albert Einstein").expect("Einstein");
    assert_eq!(s(einstein, "birth_date"), "March 14, 1879");
    assert_eq!(s(einstein, "birth_place"), "Ulm, Germany");
    assert!(s(einstein, "description").starts_with("In 1879, Albert Einstein was born"));
    assert!(authors.iter().all(|a| !s(a, "birth_date").is_empty() && !s(a, "birth_place").is_empty()));
    // 50 distinct names on both sides (the site spells a few differently on author pages:
    // "Alexandre Dumas fils" on quotes, "Alexandre Dumas-fils" on his page).
    assert_eq!(authors.iter().map(|a| s(a, "name")).collect::<BTreeSet<_>>().len(), 50);
    assert_eq!(quotes.iter().map(|q| s(q, "author")).collect::<BTreeSet<_>>().len(), 50);

    // The de-duplication really dropped the quotes repeated on tag pages, and its counts
    // are in the summary.
    let procs = &summary.modules.pipelines[0].extra["processors"];
    let dedup = procs.as_array().unwrap().iter().find(|p| p["name"] == "quote:dedup(text)").unwrap();
    assert!(dedup["dropped"].as_u64().unwrap() > 0, "{procs}");
}
