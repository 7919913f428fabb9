//! Decompression bombs cost no more memory than the body cap: each of the test vectors expands
//! to 11.5 MB, and peak resident memory grows by far less while all four are refused.
//! (Alone in its test binary, so no other test's allocations blur the peak.)

use std::path::PathBuf;

use bytes::Bytes;
use kumo_core::{ErrorKind, Request, Url};
use kumo_downloader::{Downloader, DownloaderConfig};
use kumo_testsite::{Fixture, ServerBuilder};

/// Peak resident memory of this process, in bytes (Linux).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[tokio::test]
async fn bombs_stay_within_the_cap() {
    let dir = std::env::var("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")));
    let bombs = [
        ("bomb-gzip.bin", "gzip"),
        ("bomb-deflate.bin", "deflate"),
        ("bomb-br.bin", "br"),
        ("bomb-zstd.bin", "zstd"),
    ];
    let mut b = ServerBuilder::new();
    for (name, enc) in bombs {
        let body = Bytes::from(std::fs::read(dir.join("compressed").join(name)).unwrap());
        let f =
            Fixture { headers: vec![("content-encoding".into(), enc.into())], body, ..Fixture::default() };
        b = b.fixture(&format!("/{enc}"), f);
    }
    let server = b.start().await.unwrap();
    let cap = 1 << 20;
    let d = Downloader::new(1, DownloaderConfig { max_body_bytes: cap, ..Default::default() }).unwrap();
    let before = peak_rss();
    for (_, enc) in bombs {
        let e =
            d.fetch(Request::get(Url::parse(&server.url(&format!("/{enc}"))).unwrap())).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooLarge, "{enc}: {e}");
    }
    let growth = peak_rss().saturating_sub(before);
    assert!(growth < 6 * cap as u64, "peak grew by {growth} bytes; one bomb expands to 11,511,612");
}
