//! Extraction of the benchmark site's product model (root `div.product`; sku, title, price by
//! CSS) from a ~12 KB page shaped like `bench/gen_site.py`'s (header, navigation, the product,
//! paragraphs, a specs table, links): the streaming path beside the DOM path. The DOM path is
//! forced by a root selector outside the streaming subset (`:not(.none)`), which matches the
//! same elements.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kumo_parse::extract::{Document, Field, Model, Selector};
use url::Url;

fn page() -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Compact Cable 000001 | Bench Shop</title>\
         <style>body{margin:0}.product{padding:12px}</style></head>\n<body><header><h2>Bench Shop</h2><nav><ul>\
         <li><a href=\"/index.html\">Home</a></li><li><a href=\"/page/0.html\">Catalogue</a></li></ul></nav></header>\n\
         <main><article><div class=\"product\" data-sku=\"SKU-0000001\"><h1 class=\"product-title\">Compact Cable 000001</h1>\
         <span class=\"price\">$343.45</span> <span class=\"sku\">SKU-0000001</span></div>\n",
    );
    for p in 0..12 {
        html.push_str("<p>");
        for w in 0..110 {
            html.push_str(["lorem ", "ipsum ", "valve ", "copper ", "sensor "][(p * 7 + w) % 5]);
        }
        html.push_str("</p>\n");
    }
    html.push_str("<table class=\"specs\"><thead><tr><th>Property</th><th>Value</th></tr></thead><tbody>");
    for r in 0..8 {
        html.push_str(&format!("<tr><th>Prop {r}</th><td>{r}00 W</td></tr>"));
    }
    html.push_str("</tbody></table>\n</article><aside><h3>Links</h3><ul>");
    for l in 0..20 {
        html.push_str(&format!("<li><a href=\"/page/{l}.html\">Related product {l}</a></li>"));
    }
    html.push_str("</ul></aside></main>\n<footer>&copy; Bench Shop</footer></body></html>\n");
    html
}

fn model(root: &str) -> kumo_parse::CompiledModel {
    Model::new(
        "product",
        vec![
            Field::css("sku", "span.sku").required(),
            Field::css("title", "h1.product-title").required(),
            Field::css("price", "span.price").required(),
        ],
    )
    .with_root(Selector::css(root))
    .compile()
    .expect("a valid model")
}

fn bench(c: &mut Criterion) {
    let html = page();
    let url = Url::parse("http://127.0.0.1:8088/page/1.html").expect("valid URL");
    let streaming = model("div.product");
    let dom = model("div.product:not(.none)");
    assert_eq!(
        streaming.extract_from(&Document::new(&html, false, &url)),
        dom.extract_from(&Document::new(&html, false, &url))
    );
    let mut group = c.benchmark_group("extract_product");
    group.throughput(Throughput::Bytes(html.len() as u64));
    group.bench_function("streaming", |b| {
        b.iter(|| streaming.extract_from(&Document::new(black_box(&html), false, &url)))
    });
    group.bench_function("dom", |b| {
        b.iter(|| dom.extract_from(&Document::new(black_box(&html), false, &url)))
    });
    group.finish();
}

/// The hostile page of the QA report: `<div>` × n, the target, `</div>` × n (11 bytes a level).
/// Past `MAX_DEPTH` every model refuses the page (`too-deep`) after one linear scan; just under
/// it, extraction runs in full. Was quadratic: 100 000 levels took 11.5 s (streaming CSS),
/// 87 s (DOM CSS), over 120 s (XPath).
fn deep(c: &mut Criterion) {
    let url = Url::parse("http://127.0.0.1:8088/deep.html").expect("valid URL");
    let one = |field: Field| Model::new("deep", vec![field]).compile().expect("a valid model");
    let models = [
        ("css_streaming", one(Field::css("v", "span.x"))),
        ("css_dom", one(Field::css("v", "span.x:not(.none)"))),
        ("xpath", one(Field::xpath("v", "//span[@class='x']"))),
        ("regex", one(Field::regex("v", r#"class="x">(\w+)<"#))),
    ];
    let mut group = c.benchmark_group("extract_deep");
    group.sample_size(10);
    for levels in [500, 10_000, 40_000, 100_000, 400_000] {
        let html = format!("{}<span class=\"x\">t</span>{}", "<div>".repeat(levels), "</div>".repeat(levels));
        group.throughput(Throughput::Bytes(html.len() as u64));
        for (kind, model) in &models {
            group.bench_function(format!("{kind}/{levels}"), |b| {
                b.iter(|| model.extract_from(&Document::new(black_box(&html), false, &url)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, deep);
criterion_main!(benches);
