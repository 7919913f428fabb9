//! PostgresSink against a real server: one throwaway server for the whole file, one table per
//! test, rows read back with tokio-postgres.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kumo_core::Item;
use kumo_pipeline::{ColumnSpec, PgSinkConfig, PgType, PostgresSink, Sink, SinkError};
use kumo_testsite::services::Postgres;
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use tokio_postgres::{Client, NoTls};

static PG: OnceCell<Postgres> = OnceCell::const_new();

/// The file's server, started by the first test that needs it.
async fn pg() -> &'static Postgres {
    PG.get_or_init(|| async {
        Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL for the tests: {e}"))
    })
    .await
}

/// Every test is bounded: a hung server fails it instead of hanging the suite.
async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.expect("test took over 60 s")
}

async fn client(pg: &Postgres) -> Client {
    let (client, connection) = tokio_postgres::connect(&pg.url(), NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

fn product(url: &str, price: Value, name: &str) -> Item {
    Item::new().with("url", url).with("price", price).with("name", name)
}

fn typed_columns() -> Vec<ColumnSpec> {
    vec![
        ColumnSpec::new("url", PgType::Text),
        ColumnSpec::new("count", PgType::BigInt),
        ColumnSpec::new("price", PgType::Double),
        ColumnSpec::new("in stock", PgType::Bool),
        ColumnSpec::new("tags", PgType::Jsonb),
        ColumnSpec::new("seen", PgType::TimestampTz),
    ]
}

type TypedRow = (Option<String>, Option<i64>, Option<f64>, Option<bool>, Option<Value>, Option<SystemTime>);

async fn typed_rows(db: &Client, table: &str) -> Vec<TypedRow> {
    let sql = format!("SELECT url, count, price, \"in stock\", tags, seen FROM \"{table}\" ORDER BY url");
    let rows = db.query(&sql, &[]).await.unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))).collect()
}

#[tokio::test]
async fn typed_columns_round_trip() {
    within(async {
        let pg = pg().await;
        let mut sink =
            PostgresSink::connect(&pg.url(), PgSinkConfig::columns("typed", typed_columns())).await.unwrap();
        assert_eq!(sink.name(), "postgres:typed");
        let a = Item::new()
            .with("url", "http://h/a")
            .with("count", 3)
            .with("price", 9.5)
            .with("in stock", true)
            .with("tags", json!(["x", {"y": 1}]))
            .with("seen", "2026-11-22T07:01:57+01:00")
            .with("not a column", "ignored");
        // Strings that are numbers and booleans convert; missing and null fields are NULL.
        let b = Item::new()
            .with("count", "42")
            .with("url", "http://h/b")
            .with("price", "0.25")
            .with("in stock", "false");
        let c =
            Item::new().with("url", "http://h/c").with("seen", 0).with("tags", json!(null)).with("price", 7);
        sink.write(&[a, b]).await.unwrap();
        sink.write(&[c]).await.unwrap();
        sink.flush().await.unwrap();

        let seen = UNIX_EPOCH + Duration::from_secs(1_795_327_317);
        let tags = json!(["x", {"y": 1}]);
        assert_eq!(
            typed_rows(&client(pg).await, "typed").await,
            vec![
                (Some("http://h/a".into()), Some(3), Some(9.5), Some(true), Some(tags), Some(seen)),
                (Some("http://h/b".into()), Some(42), Some(0.25), Some(false), None, None),
                (Some("http://h/c".into()), None, Some(7.0), None, None, Some(UNIX_EPOCH)),
            ]
        );
    })
    .await
}

#[tokio::test]
async fn jsonb_round_trip() {
    within(async {
        let pg = pg().await;
        let mut sink = PostgresSink::connect(&pg.url(), PgSinkConfig::jsonb("whole")).await.unwrap();
        let items = vec![
            product("http://h/1", json!(1.5), "one"),
            Item::new().with("nested", json!({"a": [1, 2, {"b": null}]})).with("quote", "it's \"x\""),
        ];
        sink.write(&items).await.unwrap();
        sink.write(&items[..1]).await.unwrap();

        let db = client(pg).await;
        let rows = db.query("SELECT id, item, inserted_at FROM whole ORDER BY id", &[]).await.unwrap();
        let got: Vec<Value> = rows.iter().map(|r| r.get(1)).collect();
        let want: Vec<Value> =
            [&items[0], &items[1], &items[0]].iter().map(|i| Value::Object(i.0.clone())).collect();
        assert_eq!(got, want);
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert!(rows.iter().all(|r| r.get::<_, Option<SystemTime>>(2).is_some()));
    })
    .await
}

#[tokio::test]
async fn a_key_makes_writes_upserts_in_typed_tables() {
    within(async {
        let pg = pg().await;
        let cols = vec![
            ColumnSpec::new("url", PgType::Text),
            ColumnSpec::new("price", PgType::Double),
            ColumnSpec::new("name", PgType::Text),
        ];
        let cfg = PgSinkConfig::columns("upsert_typed", cols).with_key(["url"]);
        let mut sink = PostgresSink::connect(&pg.url(), cfg.clone()).await.unwrap();
        let first = [product("http://h/1", json!(1), "one"), product("http://h/2", json!(2), "two")];
        sink.write(&first).await.unwrap();
        // Resent after a "crash" through a new sink, with new values; and one key twice in a batch.
        let mut sink = PostgresSink::connect(&pg.url(), cfg).await.unwrap();
        let again = [
            product("http://h/2", json!(20), "two"),
            product("http://h/1", json!(10), "ONE"),
            product("http://h/3", json!(3), "three"),
            product("http://h/1", json!(11), "One"),
        ];
        sink.write(&again).await.unwrap();
        sink.write(&again).await.unwrap();

        let db = client(pg).await;
        let rows = db.query("SELECT url, price, name FROM upsert_typed ORDER BY url", &[]).await.unwrap();
        let got: Vec<(String, f64, String)> = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
        assert_eq!(
            got,
            vec![
                ("http://h/1".into(), 11.0, "One".into()),
                ("http://h/2".into(), 20.0, "two".into()),
                ("http://h/3".into(), 3.0, "three".into()),
            ]
        );
    })
    .await
}

#[tokio::test]
async fn a_key_makes_writes_upserts_in_jsonb_tables() {
    within(async {
        let pg = pg().await;
        let cfg = PgSinkConfig::jsonb("upsert_jsonb").with_key(["site", "url"]);
        let mut sink = PostgresSink::connect(&pg.url(), cfg).await.unwrap();
        let item =
            |site: &str, url: &str, v: i64| Item::new().with("site", site).with("url", url).with("v", v);
        sink.write(&[item("a", "/1", 1), item("a", "/2", 1), item("b", "/1", 1)]).await.unwrap();
        sink.write(&[item("a", "/1", 2), item("b", "/1", 2), item("a", "/1", 3)]).await.unwrap();

        let db = client(pg).await;
        let sql = "SELECT item->>'site', item->>'url', (item->>'v')::int FROM upsert_jsonb ORDER BY 1, 2";
        let rows = db.query(sql, &[]).await.unwrap();
        let got: Vec<(String, String, i32)> = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
        let want = [("a", "/1", 3), ("a", "/2", 1), ("b", "/1", 2)]
            .map(|(s, u, v)| (s.to_string(), u.to_string(), v));
        assert_eq!(got, want);
    })
    .await
}

#[tokio::test]
async fn a_large_batch_goes_in_several_statements_of_one_transaction() {
    within(async {
        let pg = pg().await;
        let cfg = PgSinkConfig::columns("large", vec![ColumnSpec::new("n", PgType::BigInt)]).with_key(["n"]);
        let mut sink = PostgresSink::connect(&pg.url(), cfg).await.unwrap();
        let items: Vec<Item> = (0..2500).map(|n| Item::new().with("n", n)).collect();
        sink.write(&items).await.unwrap();
        // A bad item at the end fails the whole batch: the 2 000 good ones before it are not
        // written either.
        let mut bad: Vec<Item> = (2500..4500).map(|n| Item::new().with("n", n)).collect();
        bad.push(Item::new().with("n", "x"));
        assert!(sink.write(&bad).await.is_err());

        let db = client(pg).await;
        let row = db.query_one("SELECT count(*), min(n), max(n) FROM large", &[]).await.unwrap();
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1), row.get::<_, i64>(2)), (2500, 0, 2499));
    })
    .await
}

#[tokio::test]
async fn a_value_that_cannot_convert_names_the_item_and_field() {
    within(async {
        let pg = pg().await;
        let cols = vec![ColumnSpec::new("url", PgType::Text), ColumnSpec::new("count", PgType::BigInt)];
        let mut sink =
            PostgresSink::connect(&pg.url(), PgSinkConfig::columns("convert", cols)).await.unwrap();
        let items = [
            Item::new().with("url", "/ok").with("count", 1),
            Item::new().with("url", "/bad").with("count", "many"),
        ];
        let err = sink.write(&items).await.err().unwrap().to_string();
        assert_eq!(
            err,
            "table convert: item 1 of the batch ({\"url\":\"/bad\",\"count\":\"many\"}): field `count`: \
             cannot convert string \"many\" to bigint"
        );
        let db = client(pg).await;
        assert_eq!(db.query_one("SELECT count(*) FROM convert", &[]).await.unwrap().get::<_, i64>(0), 0);
    })
    .await
}

#[tokio::test]
async fn odd_names_are_quoted() {
    within(async {
        let pg = pg().await;
        let table = "my \"items\"; DROP TABLE x; --";
        let cols = vec![ColumnSpec::new("a \"b\" c", PgType::Text), ColumnSpec::new("select", PgType::Text)];
        let mut sink =
            PostgresSink::connect(&pg.url(), PgSinkConfig::columns(table, cols).with_key(["select"]))
                .await
                .unwrap();
        sink.write(&[Item::new().with("a \"b\" c", "v").with("select", "k")]).await.unwrap();
        let db = client(pg).await;
        let row = db
            .query_one(
                "SELECT \"a \"\"b\"\" c\", \"select\" FROM \"my \"\"items\"\"; DROP TABLE x; --\"",
                &[],
            )
            .await
            .unwrap();
        assert_eq!((row.get::<_, String>(0), row.get::<_, String>(1)), ("v".into(), "k".into()));
        // A jsonb key with a quote and a backslash in its name.
        let cfg = PgSinkConfig::jsonb("odd_key").with_key(["it's \\"]);
        let mut sink = PostgresSink::connect(&pg.url(), cfg).await.unwrap();
        let item = |v: i64| Item::new().with("it's \\", "k").with("v", v);
        sink.write(&[item(1)]).await.unwrap();
        sink.write(&[item(2)]).await.unwrap();
        let row = db.query_one("SELECT count(*), max((item->>'v')::int) FROM odd_key", &[]).await.unwrap();
        assert_eq!((row.get::<_, i64>(0), row.get::<_, i32>(1)), (1, 2));
    })
    .await
}

#[tokio::test]
async fn a_lost_connection_fails_the_write_with_the_reason() {
    within(async {
        let pg = pg().await;
        let url = format!("{}?application_name=kumo_lost", pg.url());
        let mut sink = PostgresSink::connect(&url, PgSinkConfig::jsonb("lost")).await.unwrap();
        sink.write(&[Item::new().with("n", 1)]).await.unwrap();
        let kill =
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'kumo_lost'";
        let db = client(pg).await;
        db.batch_execute(kill).await.unwrap();
        // Once the backend is gone its goodbye is in our socket, so the reason is there to read
        // (sent into a closed socket, the write would get a reset that can drop it).
        let gone = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kumo_lost'";
        while db.query_one(gone, &[]).await.unwrap().get::<_, i64>(0) > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let err = sink.write(&[Item::new().with("n", 2)]).await.err().unwrap().to_string();
        assert!(err.starts_with("cannot write 1 items to table lost: "), "{err}");
        assert!(err.contains("terminating connection due to administrator command"), "{err}");
    })
    .await
}

#[tokio::test]
async fn an_existing_table_without_the_columns_is_refused() {
    within(async {
        let pg = pg().await;
        client(pg).await.batch_execute("CREATE TABLE other_shape (url text, body text)").await.unwrap();
        let cols = vec![ColumnSpec::new("url", PgType::Text), ColumnSpec::new("price", PgType::Double)];
        let err =
            PostgresSink::connect(&pg.url(), PgSinkConfig::columns("other_shape", cols)).await.err().unwrap();
        assert_eq!(err.to_string(), "table other_shape exists but lacks the columns [\"price\"]");
    })
    .await
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error_without_the_password() {
    within(async {
        // A port nothing listens on: bind one, then let it go.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("postgres://kumo:s3cret@127.0.0.1:{port}/db");
        let err = PostgresSink::connect(&url, PgSinkConfig::jsonb("t")).await.err().unwrap().to_string();
        let want = format!("cannot connect to PostgreSQL at postgres://kumo:***@127.0.0.1:{port}/db: ");
        assert!(err.starts_with(&want), "{err}");
        assert!(err.contains("refused") && !err.contains("s3cret"), "{err}");
    })
    .await
}

#[tokio::test]
async fn a_silent_server_times_out() {
    within(async {
        // Accepts the connection, never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = tokio::spawn(async move {
            let conn = listener.accept().await;
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(conn);
        });
        let url = format!("postgres://kumo@127.0.0.1:{port}/db?connect_timeout=1");
        let err = PostgresSink::connect(&url, PgSinkConfig::jsonb("t")).await.err().unwrap();
        held.abort();
        let err = err.to_string();
        assert!(err.starts_with(&format!("cannot connect to PostgreSQL at {url}")), "{err}");
        assert!(err.contains("within 1s") || err.contains("timeout"), "{err}");
    })
    .await
}

#[tokio::test]
async fn a_bad_url_is_a_clear_error() {
    let err =
        PostgresSink::connect("postgres://u:pw@h:notaport/db", PgSinkConfig::jsonb("t")).await.err().unwrap();
    assert!(matches!(err, SinkError::Postgres(_)));
    let err = err.to_string();
    assert!(err.starts_with("invalid PostgreSQL URL postgres://u:***@h:notaport/db: "), "{err}");
}

#[tokio::test]
async fn the_harness_stops_its_server_and_removes_its_files() {
    within(async {
        let started = std::time::Instant::now();
        let pg = Postgres::start().await.unwrap();
        let start_time = started.elapsed();
        let (dir, port) = (pg.dir().to_path_buf(), pg.port());
        assert!(dir.join("data/PG_VERSION").exists());
        client(&pg).await.batch_execute("SELECT 1").await.unwrap();
        let stopping = std::time::Instant::now();
        drop(pg);
        eprintln!("server start {start_time:?}, stop {:?}", stopping.elapsed());
        assert!(!dir.exists(), "{} is left", dir.display());
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "port {port} still answers");
    })
    .await
}

/// PostgreSQL stores no U+0000, in `text` nor in `jsonb` (keys included): the sink writes
/// U+FFFD in its place rather than losing the row (and with it the whole batch).
#[tokio::test]
async fn nul_characters_are_replaced_not_a_lost_batch() {
    within(async {
        let pg = pg().await;
        let db = client(pg).await;
        let nul = "a\u{0}b";
        let clean = "a\u{FFFD}b";
        let item = || {
            Item::new()
                .with("url", "http://h/nul")
                .with("title", nul)
                .with("tags", json!([nul, {nul: nul}]))
                .with(nul, 1)
        };
        let fine = Item::new().with("url", "http://h/fine").with("title", "fine");

        let mut sink = PostgresSink::connect(&pg.url(), PgSinkConfig::jsonb("nul_jsonb").with_key(["url"]))
            .await
            .unwrap();
        sink.write(&[fine.clone(), item()]).await.unwrap();
        let rows = db.query("SELECT item FROM nul_jsonb ORDER BY id", &[]).await.unwrap();
        let got: Vec<Value> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(got.len(), 2, "the batch was written whole");
        assert_eq!(got[1]["title"], clean);
        assert_eq!(got[1]["tags"], json!([clean, {clean: clean}]));
        assert_eq!(got[1][clean], 1);

        let cols = vec![
            ColumnSpec::new("url", PgType::Text),
            ColumnSpec::new("title", PgType::Text),
            ColumnSpec::new("tags", PgType::Jsonb),
        ];
        let mut sink =
            PostgresSink::connect(&pg.url(), PgSinkConfig::columns("nul_typed", cols)).await.unwrap();
        sink.write(&[fine, item()]).await.unwrap();
        let rows = db.query("SELECT title, tags FROM nul_typed ORDER BY url", &[]).await.unwrap();
        let got: Vec<(String, Option<Value>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(got, [("fine".into(), None), (clean.into(), Some(json!([clean, {clean: clean}])))]);
    })
    .await
}
