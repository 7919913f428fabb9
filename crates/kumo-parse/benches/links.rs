//! Throughput of `extract_links` on (a) a synthetic ~12 KB product page with 20 links, shaped
//! like the pages of `bench/gen_site.py`, and (b) the quotes-site front page; plus, for
//! reference, lol_html alone on page (a), the library the extractor was built on before its own
//! scan replaced it.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kumo_parse::extract_links;
use url::Url;

const HOST: &str = "127.0.0.1:8088";

const WORDS: &[&str] = &[
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "labore",
    "magna",
    "aliqua",
    "widget",
    "gadget",
    "sprocket",
    "bracket",
    "flange",
    "gasket",
    "valve",
    "pump",
    "motor",
    "sensor",
    "cable",
    "steel",
    "copper",
    "durable",
    "compact",
    "portable",
    "industrial",
    "premium",
];

/// A tiny deterministic generator (64-bit LCG), so every run benchmarks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below as u64) as usize
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.next(WORDS.len())]
    }
}

/// One spelling of a same-host link to page `k`, as the generator varies them.
fn spelling(rng: &mut Rng, k: usize) -> String {
    match rng.next(6) {
        0 => format!("/page/{k}.html"),
        1 => format!("http://{HOST}/page/{k}.html"),
        2 => format!("//{HOST}/page/{k}.html"),
        3 => format!("{k}.html"),
        4 => format!("./{k}.html"),
        _ => format!("../page/{k}.html"),
    }
}

/// A page like gen_site.py's page 41 of 20 000: head with meta, title, canonical and a style
/// sheet; nav (with a mailto:); product block; ~12 KB of paragraphs; a spec table; an aside of
/// 20 links (children, parent, a fragment, a fragment on another page, two external hosts,
/// random same-host pages in several spellings with duplicates); footer with `#top`.
fn synthetic_page() -> String {
    let mut rng = Rng(42);
    let i = 41;
    let mut links: Vec<(String, String)> = vec![
        (spelling(&mut rng, 2 * i + 1), "Related product".into()),
        (spelling(&mut rng, 2 * i + 2), "Related product".into()),
        (format!("../page/{}.html", (i - 1) / 2), "Parent category".into()),
        ("#reviews".into(), "Reviews".into()),
        (format!("/page/{}.html#specs", rng.next(20_000)), "Specs".into()),
        (format!("https://www.example.com/{}", rng.next(100_000)), "Partner site".into()),
        (format!("http://cdn.example.org/assets/{}", rng.next(100_000)), "Partner site".into()),
    ];
    while links.len() < 20 {
        let k = rng.next(20_000);
        let href = spelling(&mut rng, k);
        if rng.next(4) == 0 && links.len() < 19 {
            links.push((href.clone(), "Also".into()));
        }
        links.push((href, "See also".into()));
    }

    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Compact Sprocket 000042 | Bench Shop</title>\
         <meta name=\"description\" content=\"Compact Sprocket 000042 at $123.45\">\
         <link rel=\"canonical\" href=\"http://{HOST}/page/{i}.html\">\
         <style>body{{font-family:sans-serif;margin:0}}.product{{border:1px solid #ddd}}</style>\
         </head>\n<body><header><h2>Bench Shop</h2><nav><ul>\
         <li><a href=\"/index.html\">Home</a></li><li><a href=\"http://{HOST}/index.html\">Shop</a></li>\
         <li><a href=\"/page/0.html\">Catalogue</a></li>\
         <li><a href=\"mailto:sales@example.com\">Contact</a></li></ul></nav></header>\n\
         <main><article><div class=\"product\" data-sku=\"SKU-0000042\">\
         <h1 class=\"product-title\">Compact Sprocket 000042</h1>\
         <span class=\"price\">$123.45</span> <span class=\"sku\">SKU-0000042</span></div>\n"
    );
    while html.len() < 12 * 1024 - 2_400 {
        html.push_str("<p>");
        for _ in 0..60 {
            html.push_str(rng.word());
            html.push(' ');
        }
        html.push_str("</p>\n");
    }
    html.push_str("<table class=\"specs\"><tbody>");
    for _ in 0..8 {
        let (a, b) = (rng.word(), rng.word());
        html.push_str(&format!("<tr><th>{a}</th><td>{} mm</td><td>{b}</td></tr>", rng.next(999)));
    }
    html.push_str("</tbody></table>\n</article><aside><h3>Links</h3><ul>");
    for (href, text) in &links {
        html.push_str(&format!("<li><a href=\"{href}\">{text}</a></li>"));
    }
    html.push_str(
        "</ul></aside></main>\n<footer><p>&copy; Bench Shop. <a href=\"#top\">Back to top</a></p>\
         </footer></body></html>\n",
    );
    html
}

fn bench_links(c: &mut Criterion) {
    let mut group = c.benchmark_group("extract_links");

    let page = synthetic_page();
    let url = Url::parse(&format!("http://{HOST}/page/41.html")).expect("valid URL");
    let found = extract_links(page.as_bytes(), &url, encoding_rs::UTF_8);
    eprintln!("synthetic page: {} bytes, {} links after de-duplication", page.len(), found.links.len());
    group.throughput(Throughput::Bytes(page.len() as u64));
    group.bench_function("synthetic_12k_20_links", |b| {
        b.iter(|| extract_links(black_box(page.as_bytes()), &url, encoding_rs::UTF_8));
    });

    // For reference, lol_html alone over the same page with one no-op `a[href]` handler
    // (tokenising, selector matching and its element stack): the floor of the extractor as it
    // was before the scan replaced lol_html.
    group.bench_function("lol_html_a_href_noop", |b| {
        b.iter(|| {
            let settings = lol_html::Settings::new()
                .with_strict(false)
                .append_element_content_handler(lol_html::element!("a[href]", |_el| Ok(())));
            let mut rewriter = lol_html::HtmlRewriter::new(settings, |_: &[u8]| {});
            let _ = rewriter.write(black_box(page.as_bytes()));
            let _ = rewriter.end();
        });
    });

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/quotes-site/index.html");
    match std::fs::read(path) {
        Ok(quotes) => {
            let url = Url::parse("http://quotes.toscrape.com/").expect("valid URL");
            let found = extract_links(&quotes, &url, encoding_rs::UTF_8);
            eprintln!("quotes index: {} bytes, {} links", quotes.len(), found.links.len());
            group.throughput(Throughput::Bytes(quotes.len() as u64));
            group.bench_function("quotes_index", |b| {
                b.iter(|| extract_links(black_box(&quotes), &url, encoding_rs::UTF_8));
            });
        }
        Err(e) => eprintln!("skipping quotes_index: {path}: {e}"),
    }
    group.finish();
}

criterion_group!(benches, bench_links);
criterion_main!(benches);
