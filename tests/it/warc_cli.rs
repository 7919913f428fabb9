//! `kumo crawl --warc`: a crawl of pages the test site serves gzip- and brotli-encoded,
//! chunked, redirected, missing, failing, binary and too large, archived, then checked with the
//! archivists' own tools (Python's warcio and cdxj-indexer, which `scripts/test.sh` installs
//! in `.venv`): every record valid and its digests right, one response per URL fetched, the
//! bodies as the server sent them, and kumo's CDXJ index the one cdxj-indexer makes.

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use kumo_testsite::{Fixture, ServerBuilder};

/// One record as `warcio index` lists it.
type Indexed = serde_json::Map<String, serde_json::Value>;

/// `warcio index` of `file`, with the fields the checks need.
fn index(file: &Path) -> Vec<Indexed> {
    let fields = "warc-type,warc-target-uri,warc-record-id,warc-concurrent-to,warc-payload-digest,\
                  warc-truncated,http:status,offset";
    common::warc_index(file, fields)
}

fn field<'a>(r: &'a Indexed, name: &str) -> &'a str {
    r.get(name).and_then(|v| v.as_str()).unwrap_or("")
}

fn testdata(name: &str) -> Bytes {
    let dir = std::env::var("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"));
    Bytes::from(std::fs::read(dir.join("compressed").join(name)).expect("test vector"))
}

fn coded(body: Bytes, coding: &str) -> Fixture {
    Fixture {
        status: 200,
        headers: vec![
            ("content-type".into(), "text/html".into()),
            ("content-encoding".into(), coding.into()),
        ],
        body,
        ..Default::default()
    }
}

/// The WARC files and other files of `dir`, by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    all.sort();
    all
}

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\0IEND\xaeB`\x82";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_exchange_is_archived_as_warcio_and_cdxj_indexer_expect() {
    let gzip = testdata("html-gzip.bin");
    let chunked = format!("<html><body>{}</body></html>", "<p>chunk</p>".repeat(500));
    let links =
        ["gzip.html", "br.html", "chunked.html", "moved", "missing.html", "down", "big.html", "image.png"];
    let index_html = format!(
        "<html><body>{}</body></html>",
        links.iter().map(|l| format!("<a href=\"{l}\">{l}</a>")).collect::<String>()
    );
    let server = ServerBuilder::new()
        .fixture("/robots.txt", Fixture::status(200, "User-agent: *\nDisallow: /private\n"))
        .fixture("/index.html", Fixture::html(&index_html))
        .fixture("/gzip.html", coded(gzip.clone(), "gzip"))
        .fixture("/br.html", coded(testdata("html-br.bin"), "br"))
        .fixture("/chunked.html", Fixture::html(&chunked).trickle(1000, std::time::Duration::ZERO))
        .fixture("/moved", Fixture::redirect(301, "/target.html"))
        .fixture("/target.html", Fixture::html("<p>moved here</p>"))
        .fixture("/down", Fixture::status(500, "down for maintenance"))
        .fixture("/big.html", Fixture::html(&"x".repeat(300_000)))
        .fixture(
            "/image.png",
            Fixture {
                status: 200,
                headers: vec![("content-type".into(), "image/png".into())],
                body: Bytes::from_static(PNG),
                ..Default::default()
            },
        )
        .start()
        .await
        .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let seed = server.url("/index.html");
    let args = [
        "crawl",
        &seed,
        "-o",
        "items.jsonl",
        "--warc",
        "archive",
        "--warc-cdxj",
        "--max-depth",
        "1",
        "--max-body",
        "100000",
        "--retries",
        "0",
        "--no-progress",
        "--summary-json",
        "summary.json",
    ];
    let out = common::kumo_in(cwd.path(), &args).await;
    // The 500 and the page over the cap fail for good: exit status 4 (too many failures).
    assert!(matches!(out.status.code(), Some(0 | 4)), "{}", common::stderr(&out));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.path().join("summary.json")).unwrap()).unwrap();

    let archive = cwd.path().join("archive");
    let all = files(&archive);
    let warcs: Vec<&PathBuf> = all.iter().filter(|p| p.to_string_lossy().ends_with(".warc.gz")).collect();
    assert_eq!(warcs.len(), 1, "one file, closed: {all:?}");
    let warc = warcs[0];
    let name = warc.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("127.0.0.1-") && name.ends_with("-00000.warc.gz"), "{name}");
    assert!(summary["warc_bytes"].as_u64().unwrap() == std::fs::metadata(warc).unwrap().len());

    // Every record valid, every digest right.
    let check =
        String::from_utf8(common::run_tool("warcio", &["check", "-v", warc.to_str().unwrap()])).unwrap();
    assert!(check.contains("digest pass") && !check.contains("fail"), "{check}");

    let records = index(warc);
    assert_eq!(field(&records[0], "warc-type"), "warcinfo");
    let by_id: BTreeMap<&str, &Indexed> = records.iter().map(|r| (field(r, "warc-record-id"), r)).collect();
    let mut responses: BTreeMap<String, &Indexed> = BTreeMap::new();
    for r in records.iter().filter(|r| field(r, "warc-type") == "response") {
        let path = field(r, "warc-target-uri").trim_start_matches(&server.base_url()).to_string();
        assert!(responses.insert(path.clone(), r).is_none(), "{path}: two responses");
    }
    let want = [
        "/robots.txt",
        "/index.html",
        "/gzip.html",
        "/br.html",
        "/chunked.html",
        "/moved",
        "/target.html",
        "/missing.html",
        "/down",
        "/big.html",
        "/image.png",
    ];
    assert_eq!(
        responses.keys().map(String::as_str).collect::<Vec<_>>().len(),
        want.len(),
        "{:?}",
        responses.keys()
    );
    for path in want {
        assert!(responses.contains_key(path), "no response for {path}: {:?}", responses.keys());
    }
    let status = |p: &str| {
        responses[p].get("http:status").and_then(|s| s.as_str().map(str::to_owned).or(Some(s.to_string())))
    };
    assert_eq!(status("/moved").as_deref(), Some("301"));
    assert_eq!(status("/missing.html").as_deref(), Some("404"));
    assert_eq!(status("/down").as_deref(), Some("500"));
    assert_eq!(field(responses["/big.html"], "warc-truncated"), "length", "cut at --max-body");
    assert_eq!(
        responses.len() as u64,
        summary["pages"].as_u64().unwrap() + 3,
        "pages, robots.txt, the 500 and the cut page"
    );

    // Each request names its response, which holds its pair.
    let requests: Vec<&Indexed> = records.iter().filter(|r| field(r, "warc-type") == "request").collect();
    assert_eq!(requests.len(), responses.len(), "a request per response");
    for q in &requests {
        let to = field(q, "warc-concurrent-to");
        let r = by_id.get(to).unwrap_or_else(|| panic!("request {q:?} names no record"));
        assert_eq!(field(r, "warc-type"), "response");
        assert_eq!(field(r, "warc-target-uri"), field(q, "warc-target-uri"));
    }
    let outlinks = records.iter().filter(|r| field(r, "warc-type") == "metadata").count();
    assert!(outlinks >= 1, "the index page's links as metadata");

    // The payload digest is of the body as it came: the gzip bytes, not the page.
    assert_eq!(field(responses["/gzip.html"], "warc-payload-digest"), kumo_warc::sha1_digest(&[&gzip]));
    // What a replay serves (warcio decodes the content coding): the page, as sent.
    let payload = |path: &str| {
        let offset = field(responses[path], "offset").to_string();
        common::run_tool("warcio", &["extract", "--payload", warc.to_str().unwrap(), &offset])
    };
    let mut page = Vec::new();
    flate2::read::GzDecoder::new(&gzip[..]).read_to_end(&mut page).unwrap();
    let same = |path: &str, want: &[u8]| {
        let got = payload(path);
        assert!(got == want, "{path}: {} bytes replayed, {} sent", got.len(), want.len());
    };
    same("/gzip.html", &page);
    // warcio decodes brotli only with a Python brotli module: without one it gives the
    // bytes as stored, which must then be the server's.
    let br = payload("/br.html");
    assert!(br == page || br == testdata("html-br.bin"), "/br.html: {} bytes replayed", br.len());
    same("/chunked.html", chunked.as_bytes());
    same("/image.png", PNG);
    same("/target.html", b"<p>moved here</p>");
    same("/big.html", &[b'x'; 100_000]);

    // kumo's index is the one cdxj-indexer makes of the file.
    let cdxj = all.iter().find(|p| p.to_string_lossy().ends_with(".cdxj")).expect("a CDXJ index");
    let ours = std::fs::read_to_string(cdxj).unwrap();
    let theirs =
        String::from_utf8(common::run_tool("cdxj-indexer", &["-s", warc.to_str().unwrap()])).unwrap();
    assert_eq!(ours, theirs.replace(warc.to_str().unwrap(), &name), "CDXJ as cdxj-indexer writes it");
}

/// A slow crawl of a 200-page site archiving into `archive`, killed (SIGKILL) once it has an
/// `.open` WARC file and the site has answered 20 requests: the site, its ground truth, the
/// working directory and the command.
async fn killed_mid_crawl()
-> (kumo_testsite::TestServer, kumo_testsite::GroundTruth, tempfile::TempDir, Vec<String>) {
    let (server, truth) = common::small_site(200).await;
    let cwd = tempfile::tempdir().unwrap();
    let seed = server.url("/index.html");
    let args: Vec<String> = [
        "crawl",
        &seed,
        "-o",
        "p.jsonl",
        "--warc",
        "archive",
        "--per-host",
        "1",
        "--delay-ms",
        "5",
        "--no-progress",
    ]
    .map(String::from)
    .to_vec();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = common::spawn_in(cwd.path(), &argv);
    let archive = cwd.path().join("archive");
    let open = || {
        std::fs::read_dir(&archive)
            .map(|d| {
                d.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().ends_with(".warc.gz.open"))
            })
            .unwrap_or(false)
    };
    common::wait_until(std::time::Duration::from_secs(30), "an open WARC file", || {
        open() && server.hit_count() > 20
    })
    .await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    (server, truth, cwd, args)
}

/// The responses of the WARC files of `dir`, by target, after `warcio check` passes on each.
fn responses(dir: &Path) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for f in files(dir) {
        assert!(f.to_string_lossy().ends_with(".warc.gz"), "closed: {f:?}");
        common::run_tool("warcio", &["check", f.to_str().unwrap()]);
        for r in common::warc_index(&f, "warc-type,warc-target-uri") {
            if r["warc-type"] == "response" {
                *seen.entry(r["warc-target-uri"].as_str().unwrap().to_string()).or_default() += 1;
            }
        }
    }
    seen
}

/// A crawl killed mid-way leaves its last file `.open`: run again, it goes on in that file,
/// cut back to its last commit, and archives each page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_crawl_resumes_its_unfinished_archive() {
    let (server, truth, cwd, args) = killed_mid_crawl().await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::kumo_in(cwd.path(), &args).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut seen = responses(&cwd.path().join("archive"));
    seen.remove(&server.url("/robots.txt")).expect("robots.txt archived (once per run)");
    assert_eq!(seen.len(), truth.unique_urls, "every page");
    assert!(seen.values().all(|n| *n == 1), "each page once");
}

/// Started afresh (`--fresh`: its state gone), a crawl is refused an archive folder holding
/// an unfinished file of its name: only the old state knew what of that file was committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_crawl_is_never_mixed_into_an_unfinished_archive() {
    // The site serves the runs that follow: held to the end.
    let (_server, truth, cwd, args) = killed_mid_crawl().await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut fresh = args.to_vec();
    fresh.push("--fresh");
    let out = common::kumo_in(cwd.path(), &fresh).await;
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("a WARC file of an unfinished crawl"), "{}", common::stderr(&out));
    // Another folder archives the new crawl.
    fresh[5] = "archive2";
    let out = common::kumo_in(cwd.path(), &fresh).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let seen = responses(&cwd.path().join("archive2"));
    assert_eq!(seen.len(), truth.unique_urls + 1, "every page and robots.txt");
}

/// A spider file's site archives through `output = { warc = "DIR" }`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spider_file_site_archives_to_its_warc_folder() {
    let (server, truth) = common::small_site(30).await;
    let cwd = tempfile::tempdir().unwrap();
    let spider = common::shop_spider(&server.url("/index.html"), ("price", "span.price")).replace(
        "output = { jsonl = \"products.jsonl\" }",
        "output = { jsonl = \"products.jsonl\", warc = \"shop-archive\" }",
    );
    assert!(spider.contains("warc ="), "{spider}");
    std::fs::write(cwd.path().join("shop.toml"), spider).unwrap();
    let out = common::kumo_in(cwd.path(), &["crawl", "shop.toml", "--no-progress"]).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let warcs: Vec<_> =
        std::fs::read_dir(cwd.path().join("shop-archive")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(warcs.len(), 1, "{warcs:?}");
    common::run_tool("warcio", &["check", warcs[0].to_str().unwrap()]);
    let records = common::warc_index(&warcs[0], "warc-type");
    let responses = records.iter().filter(|r| r["warc-type"] == "response").count();
    assert_eq!(responses, truth.unique_urls + 1, "every page and robots.txt");
}

/// Two workers share a crawl through Redis, each archiving into the same folder under a name
/// of its own; one is killed (SIGKILL) mid-crawl and started again with the same command: it
/// cuts its own file back, and across both workers' files each page's response is there once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_sharing_a_crawl_through_redis_archive_each_page_once() {
    let (server, truth) = common::small_site(600).await;
    let redis = kumo_testsite::services::Redis::start().await.expect("redis-server starts");
    let url = redis.unix_url();
    let cwd = tempfile::tempdir().unwrap();
    let seed = server.url("/index.html");
    let worker = |n: usize| {
        let out = format!("w{n}.jsonl");
        let args = [
            "crawl",
            &seed,
            "--redis",
            &url,
            "--crawl",
            "archived",
            "-o",
            &out,
            "--warc",
            "archive",
            "--no-progress",
            "-c",
            "4",
            "--per-host",
            "4",
            "--delay-ms",
            "2",
            "--dead-after",
            "1",
        ];
        common::spawn_in(cwd.path(), &args)
    };
    let mut first = worker(0);
    let second = worker(1);
    let before = server.hit_count();
    common::wait_until(std::time::Duration::from_secs(30), "both workers crawling", || {
        server.hit_count() > before + 100
    })
    .await;
    first.start_kill().unwrap();
    first.wait().await.unwrap();
    let first = worker(0);
    for (n, w) in [first, second].into_iter().enumerate() {
        let out = common::finish(w).await;
        assert!(out.status.success(), "worker {n}: {}", common::stderr(&out));
    }
    let all = files(&cwd.path().join("archive"));
    let prefixes: std::collections::BTreeSet<String> = all
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().split('-').take(2).collect::<Vec<_>>().join("-"))
        .collect();
    assert_eq!(prefixes.len(), 2, "a name per worker: {all:?}");
    let mut seen = responses(&cwd.path().join("archive"));
    seen.remove(&server.url("/robots.txt"));
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "archived twice: {twice:?}");
    assert_eq!(seen.len(), truth.unique_urls, "every page archived by one worker or the other");
}
