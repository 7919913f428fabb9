//! The same items reach JSON Lines, CSV, a JSON array and PostgreSQL: the quotes spider, its
//! `output` naming all four, against the quotes site and a real PostgreSQL; the rows are read
//! back from each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kumo_spider::{LoadOptions, SpiderFile, open_sinks, run_site};
use kumo_testsite::ServerBuilder;
use kumo_testsite::services::Postgres;
use serde_json::Value;
use tokio_postgres::NoTls;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("testdata"))
}

/// (text, author, tags) of one quote, tags as compact JSON.
type Quote = (String, String, String);

fn quote_of(v: &Value) -> Quote {
    let s = |f: &str| v[f].as_str().unwrap_or_default().to_string();
    (s("text"), s("author"), v["tags"].to_string())
}

fn from_jsonl(path: &Path) -> Vec<Quote> {
    let text = std::fs::read_to_string(path).unwrap();
    let items: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    items.iter().filter(|i| i["_model"] == "quote").map(quote_of).collect()
}

fn from_json(path: &Path) -> Vec<Quote> {
    let items: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).expect("one JSON array");
    items.iter().filter(|i| i["_model"] == "quote").map(quote_of).collect()
}

fn from_csv(path: &Path) -> Vec<Quote> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let head = r.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} column"));
    let (m, t, a, g) = (col("_model"), col("text"), col("author"), col("tags"));
    r.records()
        .map(Result::unwrap)
        .filter(|row| &row[m] == "quote")
        .map(|row| {
            let tags: Value = serde_json::from_str(&row[g]).unwrap();
            (row[t].to_string(), row[a].to_string(), tags.to_string())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotes_reach_jsonl_csv_and_postgres_alike() {
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL for the test: {e}"));
    let server = ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, csv) = (dir.path().join("quotes.jsonl"), dir.path().join("quotes.csv"));
    let json = dir.path().join("quotes.json");

    // examples/quotes.toml with its output pointed at all four sinks.
    let text = std::fs::read_to_string(root().join("examples/quotes.toml")).unwrap();
    let output = format!(
        "output = {{ jsonl = {:?}, csv = {:?}, json = {:?}, postgres = {{ url = {:?}, table = \"items\" }} }}",
        jsonl.display().to_string(),
        csv.display().to_string(),
        json.display().to_string(),
        pg.url()
    );
    let line = text.lines().find(|l| l.starts_with("output =")).expect("an output line");
    let text = text.replace(line, &output);
    let opts = LoadOptions { base: Some(server.base_url()), ..Default::default() };
    let file = SpiderFile::parse(&text, "quotes.toml", &opts).unwrap();
    let site = &file.sites[0];
    let sinks = open_sinks(site).await.unwrap();
    assert_eq!(sinks.len(), 4, "jsonl, csv, json and postgres; no stdout");
    let summary = tokio::time::timeout(Duration::from_secs(120), run_site(site, sinks))
        .await
        .expect("crawl within 120 s")
        .unwrap();
    assert_eq!(summary.errors.len(), 0, "{:?}", summary.errors);

    let from_jsonl = from_jsonl(&jsonl);
    let from_csv = from_csv(&csv);
    let from_json = from_json(&json);
    let (db, conn) = tokio_postgres::connect(&pg.url(), NoTls).await.unwrap();
    tokio::spawn(conn);
    let rows = db.query("SELECT * FROM items", &[]).await.unwrap();
    let column = rows[0].columns().iter().position(|c| c.type_().name() == "jsonb").expect("a jsonb column");
    let all: Vec<Value> = rows.iter().map(|r| r.get(column)).collect();
    let from_pg: Vec<Quote> = all.iter().filter(|i| i["_model"] == "quote").map(quote_of).collect();

    assert_eq!(from_jsonl.len(), 100);
    assert_eq!(from_csv.len(), 100);
    assert_eq!(from_pg.len(), 100);
    let set = |v: &[Quote]| v.iter().cloned().collect::<BTreeSet<_>>();
    assert_eq!(set(&from_jsonl).len(), 100, "100 distinct quotes");
    assert_eq!(set(&from_jsonl), set(&from_csv), "CSV holds the same quotes");
    assert_eq!((from_json.len(), set(&from_jsonl)), (100, set(&from_json)), "so does the JSON array");
    assert_eq!(set(&from_jsonl), set(&from_pg), "PostgreSQL holds the same quotes");
    assert_eq!(all.len(), 100 + 50 + 137, "every item reached PostgreSQL");
}
