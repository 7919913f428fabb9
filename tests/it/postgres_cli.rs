//! The real binary writing to PostgreSQL: a record the server refuses is never lost in
//! silence (the crawl stops, says why and fails); what PostgreSQL cannot store (U+0000) is replaced,
//! not refused.

use kumo_testsite::services::Postgres;
use kumo_testsite::{Fixture, ServerBuilder};
use tokio_postgres::NoTls;

use crate::common;
use common::{kumo, stderr};

async fn db(pg: &Postgres) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&pg.url(), NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_fails_the_crawl_with_the_reason() {
    let server =
        ServerBuilder::new().fixture("/", Fixture::html("<title>refused</title>")).start().await.unwrap();
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let client = db(&pg).await;
    // A table made by hand, with a rule the page breaks.
    client
        .batch_execute(
            "CREATE TABLE kumo_pages (id bigserial PRIMARY KEY, \
             item jsonb NOT NULL CHECK (item ->> 'title' IS DISTINCT FROM 'refused'), \
             inserted_at timestamptz DEFAULT now())",
        )
        .await
        .unwrap();
    let o = kumo(&["crawl", &server.url("/"), "--memory", "--ignore-robots", "-o", &pg.url()]).await;
    let err = stderr(&o);
    assert!(!o.status.success(), "a lost record fails the crawl: {err}");
    assert!(err.contains("the crawl stopped because an output could not be written"), "{err}");
    assert!(err.contains("1 item was not confirmed written"), "{err}");
    assert!(err.contains("violates check constraint"), "the server's reason is shown: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_title_with_a_nul_is_written() {
    let server = ServerBuilder::new()
        .fixture("/", Fixture::html("<title>a&#0;b\u{0}c</title><a href=\"/x\">x</a>"))
        .fixture("/x", Fixture::html("<title>x</title>"))
        .start()
        .await
        .unwrap();
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let o = kumo(&["crawl", &server.url("/"), "--memory", "--ignore-robots", "-o", &pg.url()]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = db(&pg).await.query("SELECT item ->> 'title' FROM kumo_pages ORDER BY id", &[]).await.unwrap();
    let titles: Vec<Option<String>> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(titles.len(), 2, "both records written: {titles:?}");
    assert!(titles.iter().flatten().all(|t| !t.contains('\u{0}')), "{titles:?}");
}
