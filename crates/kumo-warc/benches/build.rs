//! The cost of archiving one page: `build` on a 12 KB HTML page (response, request, metadata
//! with 20 outlinks) at gzip levels 0, 1 and 6, and its parts (SHA-1, deflate) alone.
//!
//! The crawler fetches ~10 000 such pages a second on 2 cores, ~200 µs of CPU a page; keeping
//! 0.8 of that speed with WARC on leaves ~50 µs a page for everything here.

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Version};
use kumo_warc::{Exchange, RecordOptions, build, sha1_digest};

const WORDS: &str = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor \
    incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco \
    laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse \
    cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia \
    deserunt mollit anim id est laborum widget gadget sprocket bracket flange gasket valve pump motor \
    sensor cable steel copper aluminium polymer ceramic durable compact portable industrial premium";

/// A page like the benchmark site's: a head, paragraphs of random words, a table, 20 links.
/// It deflates about 3.2 : 1, as those pages do.
fn page(size: usize) -> (Vec<u8>, Vec<String>) {
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Compact Pump 000042 | \
         Bench Shop</title><style>body{font-family:sans-serif;margin:0}.price{font-weight:bold}</style>\
         </head>\n<body><header><h2>Bench Shop</h2></header><main><article>\n",
    );
    let links: Vec<String> =
        (0..20).map(|_| format!("http://127.0.0.1:8088/page/{}.html", rng.u32(..20_000))).collect();
    let mut tail = String::from("<table class=\"specs\"><tbody>");
    for _ in 0..8 {
        tail.push_str(&format!(
            "<tr><th>{}</th><td>{} mm</td></tr>",
            words[rng.usize(..words.len())],
            rng.u32(1..999)
        ));
    }
    tail.push_str("</tbody></table></article><aside><ul>");
    for l in &links {
        tail.push_str(&format!("<li><a href=\"{l}\">{}</a></li>", words[rng.usize(..words.len())]));
    }
    tail.push_str("</ul></aside></main></body></html>\n");
    while s.len() + tail.len() < size {
        s.push_str("<p>");
        for i in 0..rng.usize(40..90) {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(words[rng.usize(..words.len())]);
        }
        s.push_str(".</p>\n");
    }
    s.push_str(&tail);
    (s.into_bytes(), links)
}

fn bench(c: &mut Criterion) {
    let (payload, outlinks) = page(12 * 1024);
    let mut request_headers = HeaderMap::new();
    request_headers.insert("user-agent", HeaderValue::from_static("kumo/0.1.0 (+https://kumo.test/bot)"));
    request_headers
        .insert("accept", HeaderValue::from_static("text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"));
    request_headers.insert("accept-encoding", HeaderValue::from_static("gzip, br, zstd"));
    let mut response_headers = HeaderMap::new();
    response_headers.insert("server", HeaderValue::from_static("nginx/1.26.0"));
    response_headers.insert("date", HeaderValue::from_static("Fri, 27 Nov 2026 05:50:31 GMT"));
    response_headers.insert("content-type", HeaderValue::from_static("text/html"));
    response_headers.insert("content-length", HeaderValue::from(payload.len()));
    response_headers.insert("last-modified", HeaderValue::from_static("Thu, 26 Nov 2026 10:00:00 GMT"));
    response_headers.insert("etag", HeaderValue::from_static("\"6746a1b0-3000\""));
    let ex = Exchange {
        target: "http://127.0.0.1:8088/page/4242.html",
        date: SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_758_631),
        method: &Method::GET,
        request_headers: &request_headers,
        request_body: b"",
        version: Version::HTTP_11,
        status: StatusCode::OK,
        response_headers: &response_headers,
        payload: &payload,
        ip: Some("127.0.0.1".parse().unwrap()),
        truncated: false,
        outlinks: &outlinks,
        revisit: None,
    };

    let mut g = c.benchmark_group("build");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    for level in [0, 1, 6] {
        let opts = RecordOptions { gzip_level: level };
        let size = build(&ex, &opts).bytes.len();
        g.bench_function(format!("12 KB page, gzip level {level} ({size} bytes out)"), |b| {
            b.iter(|| build(black_box(&ex), &opts))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("parts");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.bench_function("sha1 of 12 KB (ring)", |b| b.iter(|| sha1_digest(&[black_box(&payload)])));
    for level in [1, 6] {
        g.bench_function(format!("deflate 12 KB, level {level}, fresh GzEncoder"), |b| {
            b.iter(|| {
                use std::io::Write;
                let mut e =
                    flate2::write::GzEncoder::new(Vec::with_capacity(8192), flate2::Compression::new(level));
                e.write_all(black_box(&payload)).unwrap();
                e.finish().unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
