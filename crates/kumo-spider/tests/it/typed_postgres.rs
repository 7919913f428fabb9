//! A spider file's PostgreSQL output with typed columns and a key: the quotes of the quotes
//! site land in a real PostgreSQL as `text`, `jsonb`, `bigint` and `boolean` columns, and the
//! key makes the quotes repeated on tag pages (no dedup processor here) update their row
//! instead of adding one. The rows are read back and checked against the ground truth.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use kumo_spider::{LoadOptions, SpiderFile, open_sinks, run_site};
use kumo_testsite::ServerBuilder;
use kumo_testsite::services::Postgres;
use serde_json::Value;
use tokio_postgres::NoTls;

/// The quotes on listing and tag pages, read with XPath (numbers and booleans included),
/// written to typed columns with `text` as the key. `{url}` is the database.
const SPIDER: &str = r#"
[[site]]
name = "quotes"
seeds = ["{base}/"]
targets = ['^https?://[^/]+/$', '/page/\d+/$', '/tag/']
follow = { deny = ['/login', '/author/'] }
next_page = "li.next > a"

[site.output.postgres]
url = "{url}"
table = "quotes"
key = ["text"]
columns = [
  { name = "text", type = "text" },
  { name = "author", type = "text" },
  { name = "tags", type = "jsonb" },
  { name = "tag_count", type = "bigint" },
  { name = "tagged", type = "boolean" },
]

[[site.model]]
name = "quote"
root = { xpath = "//div[@class='quote']" }
fields = [
  { name = "text", xpath = ".//span[@class='text']", required = true },
  { name = "author", xpath = ".//small[@class='author']", required = true },
  { name = "tags", xpath = ".//a[@class='tag']", list = true },
  { name = "tag_count", xpath = "count(.//a[@class='tag'])" },
  { name = "tagged", xpath = "boolean(.//a[@class='tag'])" },
]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_columns_and_a_key_from_a_spider_file() {
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL for the test: {e}"));
    let server =
        ServerBuilder::new().directory(common::testdata().join("quotes-site")).start().await.unwrap();
    let text = SPIDER.replace("{url}", &pg.url());
    let opts = LoadOptions { base: Some(server.base_url()), ..Default::default() };
    let file = SpiderFile::parse(&text, "typed.toml", &opts).unwrap();
    let site = &file.sites[0];
    let sinks = open_sinks(site).await.unwrap();
    assert_eq!(sinks.len(), 1, "PostgreSQL only");
    let summary = tokio::time::timeout(Duration::from_secs(120), run_site(site, sinks))
        .await
        .expect("crawl within 120 s")
        .unwrap();
    assert_eq!(summary.errors.len(), 0, "{:?}", summary.errors);
    assert!(summary.items > 100, "quotes repeat on tag pages: {} items written", summary.items);

    let (db, conn) = tokio_postgres::connect(&pg.url(), NoTls).await.unwrap();
    tokio::spawn(conn);
    let types: Vec<(String, String)> = db
        .query(
            "SELECT column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_name = 'quotes' ORDER BY ordinal_position",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let expected = [
        ("text", "text"),
        ("author", "text"),
        ("tags", "jsonb"),
        ("tag_count", "bigint"),
        ("tagged", "boolean"),
    ];
    assert_eq!(types, expected.map(|(n, t)| (n.to_string(), t.to_string())));

    let rows = db.query("SELECT text, author, tags, tag_count, tagged FROM quotes", &[]).await.unwrap();
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(common::testdata().join("quotes-site.ground-truth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rows.len() as u64,
        truth["quotes_unique_text"].as_u64().unwrap(),
        "one row per quote: the key upserts"
    );
    let mut texts = BTreeSet::new();
    let mut authors = BTreeSet::new();
    let mut tags = BTreeSet::new();
    let mut untagged = 0;
    for row in &rows {
        let (text, author): (String, String) = (row.get(0), row.get(1));
        let quote_tags: Value = row.get(2);
        let (count, tagged): (i64, bool) = (row.get(3), row.get(4));
        let quote_tags = quote_tags.as_array().expect("tags as a JSON array");
        assert_eq!(count as usize, quote_tags.len(), "{text}");
        assert_eq!(tagged, count > 0, "{text}");
        untagged += usize::from(!tagged);
        texts.insert(text);
        authors.insert(author);
        tags.extend(quote_tags.iter().filter_map(Value::as_str).map(str::to_string));
    }
    assert_eq!(texts.len(), rows.len());
    assert_eq!(authors.len() as u64, truth["authors"].as_u64().unwrap());
    assert_eq!(tags.len() as u64, truth["tags_unique"].as_u64().unwrap());
    assert_eq!(untagged as u64, truth["quotes_without_tags"].as_u64().unwrap());
}
