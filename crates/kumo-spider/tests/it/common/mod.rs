//! Shared by the quotes-site tests: where the test data is, and the check that a crawl's
//! items are exactly the site's ground truth (`quotes-site.ground-truth.json` and the URL list
//! `quotes-site.urls.txt` next to it).

use std::collections::BTreeSet;
use std::path::PathBuf;

use kumo_core::Item;
use serde_json::Value;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("testdata"))
}

/// The items of one `_model`.
pub fn of(items: &[Item], model: &str) -> Vec<Item> {
    items.iter().filter(|i| i.get("_model") == Some(&Value::from(model))).cloned().collect()
}

/// A string field, `""` when missing.
pub fn s<'a>(i: &'a Item, f: &str) -> &'a str {
    i.get(f).and_then(Value::as_str).unwrap_or_default()
}

fn number(truth: &Value, key: &str) -> usize {
    truth[key].as_u64().unwrap_or_else(|| panic!("no {key} in the ground truth")) as usize
}

/// The distinct second path segments of the listed URLs under `/{section}/`: tag names or
/// author slugs.
fn listed(urls: &str, section: &str) -> BTreeSet<String> {
    urls.lines()
        .filter_map(|u| u.strip_prefix(&format!("/{section}/")))
        .filter_map(|rest| rest.split('/').next())
        .map(str::to_string)
        .collect()
}

/// Checks the `quote`, `author` and `tag` items of a crawl of the quotes site against the
/// ground truth: 100 unique quotes (three without tags), 50 authors with every detail,
/// exactly the 137 tags the site has pages for, used by the quotes and named by tag items.
pub fn assert_ground_truth(items: &[Item]) {
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("quotes-site.ground-truth.json")).unwrap(),
    )
    .unwrap();
    let urls = std::fs::read_to_string(testdata().join("quotes-site.urls.txt")).unwrap();
    let (quotes, authors, tags) = (of(items, "quote"), of(items, "author"), of(items, "tag"));

    assert_eq!(quotes.len(), number(&truth, "quotes_unique_text"), "quotes");
    assert_eq!(quotes.iter().map(|q| s(q, "text")).collect::<BTreeSet<_>>().len(), quotes.len(), "unique");
    assert!(quotes.iter().all(|q| !s(q, "text").is_empty() && !s(q, "author").is_empty()));
    let no_tags = quotes.iter().filter(|q| q.get("tags").and_then(Value::as_array).is_none_or(Vec::is_empty));
    assert_eq!(no_tags.count(), number(&truth, "quotes_without_tags"), "quotes without tags");
    let quote_tags: BTreeSet<String> = quotes
        .iter()
        .flat_map(|q| q.get("tags").and_then(Value::as_array).unwrap().iter().filter_map(Value::as_str))
        .map(str::to_string)
        .collect();
    assert_eq!(quote_tags.len(), number(&truth, "tags_unique"), "distinct tags on quotes");
    // The site's tag pages are named after the tags themselves (`/tag/love/`).
    assert_eq!(quote_tags, listed(&urls, "tag"), "the tags the site has pages for");
    let tag_names: BTreeSet<String> = tags.iter().map(|t| s(t, "name").to_string()).collect();
    assert_eq!(tags.len(), tag_names.len(), "one item per tag");
    assert_eq!(tag_names, quote_tags, "tag items name exactly the quotes' tags");

    assert_eq!(authors.len(), number(&truth, "authors"), "authors");
    assert_eq!(authors.len(), listed(&urls, "author").len(), "one author per author page");
    for field in ["name", "birth_date", "birth_place", "description"] {
        assert!(authors.iter().all(|a| !s(a, field).is_empty()), "every author has a {field}");
    }
    let einstein = authors.iter().find(|a| s(a, "name") == "Albert Einstein").expect("Einstein");
    assert_eq!(s(einstein, "birth_date"), "March 14, 1879");
    assert_eq!(s(einstein, "birth_place"), "Ulm, Germany");
    assert!(s(einstein, "description").starts_with("In 1879, Albert Einstein was born"));
    // 50 distinct names on both sides (the site spells a few differently on author pages:
    // "Alexandre Dumas fils" on quotes, "Alexandre Dumas-fils" on his page).
    assert_eq!(authors.iter().map(|a| s(a, "name")).collect::<BTreeSet<_>>().len(), authors.len());
    assert_eq!(quotes.iter().map(|q| s(q, "author")).collect::<BTreeSet<_>>().len(), authors.len());
}
