//! A small crawl's worth of varied exchanges written through the writer to real files: the
//! set that `warcio check` and `cdxj-indexer` are run on by hand. Set KUMO_WARC_SAMPLE_DIR to
//! an empty or new folder to keep the files there.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Fetch, gzip, html};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Version};
use kumo_warc::{RecordOptions, Revisit, WarcConfig, WarcWriter, build, index_lines, read_records};

fn sample() -> Vec<Fetch> {
    let site = "http://127.0.0.1:18765";
    let mut all = Vec::new();

    all.push(Fetch::page(&format!("{site}/index.html"), 9_000));

    let mut f = Fetch::page(&format!("{site}/robots.txt"), 0);
    f.payload = b"User-agent: *\nDisallow: /private/\n".to_vec();
    f.response_headers.insert("content-type", HeaderValue::from_static("text/plain"));
    f.response_headers.insert("content-length", HeaderValue::from(f.payload.len()));
    f.outlinks.clear();
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/gzip.html"), 0);
    f.payload = gzip(&html(30_000));
    f.response_headers.insert("content-encoding", HeaderValue::from_static("gzip"));
    f.response_headers.insert("content-length", HeaderValue::from(f.payload.len()));
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/trickle.html"), 7_000);
    f.response_headers.remove("content-length");
    f.response_headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/old"), 0);
    f.status = StatusCode::MOVED_PERMANENTLY;
    f.response_headers = HeaderMap::new();
    f.response_headers.insert("location", HeaderValue::from_static("/index.html"));
    f.response_headers.insert("content-length", HeaderValue::from_static("0"));
    f.outlinks = vec![format!("{site}/index.html")];
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/missing.html"), 500);
    f.status = StatusCode::NOT_FOUND;
    f.outlinks.clear();
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/img/logo.png"), 0);
    let mut rng = fastrand::Rng::with_seed(1);
    f.payload = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain(std::iter::repeat_with(|| rng.u8(..)).take(5_000))
        .collect();
    f.response_headers.insert("content-type", HeaderValue::from_static("image/png"));
    f.response_headers.insert("content-length", HeaderValue::from(f.payload.len()));
    f.outlinks.clear();
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/big.html"), 20_000);
    f.response_headers.insert("content-length", HeaderValue::from_static("100000"));
    f.truncated = true;
    all.push(f);

    let mut f = Fetch::page("https://www.Example.com:443/a/?b=2&a=1", 4_000);
    f.version = Version::HTTP_2;
    f.ip = Some("::1".parse().unwrap());
    all.push(f);

    // A head longer than one read of the indexer's.
    let mut f = Fetch::page(&format!("{site}/big-head"), 2_000);
    f.response_headers.insert("x-filler", HeaderValue::from_str(&"x".repeat(9_000)).unwrap());
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/form"), 300);
    f.method = Method::POST;
    f.request_body = b"q=kumo&page=2".to_vec();
    f.request_headers.insert("content-type", HeaderValue::from_static("application/x-www-form-urlencoded"));
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/odd-status"), 10);
    f.status = StatusCode::from_u16(599).unwrap();
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/index.html"), 0);
    f.status = StatusCode::NOT_MODIFIED;
    f.response_headers = HeaderMap::new();
    f.response_headers.insert("etag", HeaderValue::from_static("\"abc\""));
    f.revisit = Some(Revisit::NotModified);
    f.outlinks.clear();
    all.push(f);

    let mut f = Fetch::page(&format!("{site}/copy.html"), 9_000);
    f.revisit =
        Some(Revisit::IdenticalPayload { refers_to_date: Some(common::date() - Duration::from_secs(3600)) });
    all.push(f);

    all
}

#[test]
fn a_varied_crawl_writes_clean_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        std::env::var_os("KUMO_WARC_SAMPLE_DIR").map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    let mut cfg = WarcConfig::new(&dir, "sample");
    cfg.max_file_bytes = 30_000;
    cfg.info = vec![("robots".into(), "obey".into()), ("crawl".into(), "sample".into())];
    let mut w = WarcWriter::open(cfg, None).unwrap();
    let fetches = sample();
    for f in &fetches {
        w.append(&[build(&f.exchange(), &RecordOptions::default())]).unwrap();
    }
    w.close().unwrap();

    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let warcs: Vec<&String> = names.iter().filter(|n| n.ends_with(".warc.gz")).collect();
    assert!(warcs.len() >= 2, "{names:?}");
    let mut indexed = 0;
    let mut responses = 0;
    for name in &warcs {
        let infos = read_records(dir.join(name)).unwrap();
        responses += infos.iter().filter(|r| matches!(r.warc_type.as_str(), "response" | "revisit")).count();
        let index = std::fs::read_to_string(dir.join(name.replace(".warc.gz", ".cdxj"))).unwrap();
        indexed += index.lines().count();
        // Written from the heads of the members at close; the same as reading the file whole.
        assert_eq!(index, index_lines(&dir.join(name), name).unwrap().concat());
    }
    assert_eq!(responses, fetches.len());
    assert_eq!(indexed, fetches.len());
}
