//! Workers sharing one PostgreSQL table: two `kumo crawl --redis` workers write their pages to
//! the same table (upserted by URL), one is killed with SIGKILL and started again with the
//! same command, and the table holds every page exactly once.

use crate::common;

use std::time::Duration;

use kumo_testsite::services::{Postgres, Redis};
use kumo_testsite::{ServerBuilder, SiteConfig};
use tokio_postgres::NoTls;

fn worker(cwd: &std::path::Path, seed: &str, redis: &str, pg: &str, name: &str) -> tokio::process::Child {
    let args = [
        "crawl",
        seed,
        "--redis",
        redis,
        "--worker",
        name,
        "-o",
        pg,
        "--no-progress",
        "-c",
        "4",
        // Spaced hand-outs keep the crawl going long enough for the kill to land mid-crawl.
        "--delay-ms",
        "3",
    ];
    common::spawn_in(cwd, &args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_a_table_and_a_killed_one_writes_nothing_twice() {
    let site = SiteConfig { pages: 400, page_bytes: 2_000, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.expect("site starts");
    let redis = Redis::start().await.expect("redis-server starts");
    let pg = Postgres::start().await.unwrap_or_else(|e| panic!("cannot start PostgreSQL: {e}"));
    let dir = tempfile::tempdir().expect("temp dir");
    let (seed, url) = (server.url("/index.html"), redis.unix_url());

    let a = worker(dir.path(), &seed, &url, &pg.url(), "a");
    let mut b = worker(dir.path(), &seed, &url, &pg.url(), "b");
    // Killed once it has written some pages; started again with the same command.
    common::wait_until(Duration::from_secs(30), "worker b's first pages", || server.hits().len() > 100).await;
    b.start_kill().expect("SIGKILL");
    let _ = tokio::time::timeout(Duration::from_secs(10), b.wait()).await.expect("killed worker ends");
    let b = worker(dir.path(), &seed, &url, &pg.url(), "b");
    for (name, w) in [("a", a), ("b", b)] {
        let out = common::finish(w).await;
        assert!(out.status.success(), "worker {name} exits 0: {}", common::stderr(&out));
    }

    let (client, conn) = tokio_postgres::connect(&pg.url(), NoTls).await.expect("connect");
    tokio::spawn(conn);
    let row = client
        .query_one("SELECT count(*), count(DISTINCT item ->> 'url') FROM kumo_pages", &[])
        .await
        .expect("count");
    let (rows, urls): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(urls as usize, truth.unique_urls, "every page in the shared table");
    assert_eq!(rows, urls, "no page twice, whoever wrote it and however often it was killed");
}
