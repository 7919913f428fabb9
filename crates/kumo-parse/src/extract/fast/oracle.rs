//! The streaming path checked against the DOM path: wherever it answers, the extraction must be
//! the same, on hand-picked pages, on random documents (well-formed ones, where it must also
//! answer, and arbitrary ones built from the constructs that trip a stack up), and on every page
//! of the quotes site in the test data.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use url::Url;

use super::super::document::Document;
use super::super::model::{Field, Model, Selector};
use super::super::{CompiledModel, Extraction};

fn compile(model: &Model) -> CompiledModel {
    let compiled = model.compile().expect("a valid model");
    assert!(compiled.fast.is_some(), "model {} should take the streaming path", model.name);
    compiled
}

/// The streaming path's answer (if any) and the DOM's, on `html` at `url`.
fn both(model: &CompiledModel, html: &str, url: &str) -> (Option<Extraction>, Extraction) {
    let url = Url::parse(url).unwrap();
    let fast = model.fast.as_ref().unwrap().extract(model, &Document::new(html, false, &url));
    let dom = model.extract_with_dom(&Document::new(html, false, &url));
    (fast, dom)
}

/// Asserts the streaming path answers on `html` and agrees with the DOM.
fn agrees(model: &CompiledModel, html: &str) -> Extraction {
    let (fast, dom) = both(model, html, "http://shop.example/a/b.html");
    let fast = fast.unwrap_or_else(|| panic!("the streaming path declined:\n{html}"));
    assert_eq!(fast, dom, "{html}");
    fast
}

/// Asserts the streaming path declines `html`.
fn declines(model: &CompiledModel, html: &str) {
    let (fast, _) = both(model, html, "http://shop.example/");
    assert!(fast.is_none(), "the streaming path should leave this to the DOM:\n{html}");
}

fn product() -> CompiledModel {
    compile(
        &Model::new(
            "product",
            vec![
                Field::css("sku", "span.sku").required(),
                Field::css("title", "h1.product-title").required(),
                Field::css("price", "span.price"),
                Field::css("link", "a[href]").attr("href").dig(),
                Field::css("tags", "ul > li .tag").list(),
                Field::css("year", "p.note").filter(r"(\d{4})"),
            ],
        )
        .with_root(Selector::css("div.product")),
    )
}

#[test]
fn product_pages() {
    let m = product();
    let page = r#"<!DOCTYPE html><html lang="en"><head><title>x</title><base href="/shop/">
        <style>.p{}</style><script>var a = "<div class='product'>";</script></head>
        <body class="home"><div class="product" data-sku="1"><h1 class="product-title">Big  &amp;
        <b>bold</b></h1><span class="price">$1.00</span><span class="sku">SKU-1</span>
        <a href=" item/1?a=1&b=2#top ">more</a><ul><li><i class="tag">x</i></li><li><i class="tag">y&#233;</i></li></ul>
        <p class="note">since 1999 <!-- 2001 --></p></div>
        <div class="product"><span class="sku">SKU-2</span></div>
        <div class="product"><h1 class="product-title">no sku</h1><div class="product">
        <span class="sku">inner</span><h1 class="product-title">T</h1></div></div>
        </body></html>"#;
    let out = agrees(&m, page);
    // The outer third product holds the fourth's sku: both are valid; the second has no title.
    assert_eq!(out.items.len(), 3);
    assert_eq!(out.invalid.len(), 1);
    assert_eq!(out.dig[0].as_str(), "http://shop.example/shop/item/1?a=1&b=2");
}

#[test]
fn pages_a_stack_cannot_follow_go_to_the_dom() {
    let m = product();
    for page in [
        "<table><tr><td class=product><span class=sku>1</span></td></tr>x</table>",
        "<table><tr><td class=product><span class=sku>1</span><td>2</td></tr></table>",
        "<table><div class=product><span class=sku>1</span></div></table>",
        "<table><td class=product><span class=sku>1</span></td></table>",
        "<div class=product><table><tr><td><span class=sku>1</td></tr></table></div>",
        "<!DOCTYPE html><div class=product><p><span class=sku>1</div></p>",
        "<!DOCTYPE html><p>one<div class=product><span class=sku>1</span></div>",
        "<!DOCTYPE html><ul><li>one<li><span class=sku>1</span></ul>",
        "<!DOCTYPE html><a href=1><a href=2>x</a></a>",
        "<!DOCTYPE html><body class=tag><div class=product><span class=sku>1</span></div>",
        "<!DOCTYPE html><div class=product><span class=sku>&eacute;</span></div>",
        "<!DOCTYPE html><div class=product><svg><span class=sku>1</span></svg></div>",
        "<!DOCTYPE html><div class=product></br><span class=sku>1</span></div>",
        "<div class=product><h2>a<h1 class=product-title>b</h1></h2><span class=sku>1</span></div>",
        "<div class=product><ul><li>a<div><li class=sku>b</li></div></li></ul></div>",
        "<dl class=product><dt>a<dd class=sku>b</dd></dt></dl>",
        "<form class=product><form><span class=sku>1</span></form></form>",
        "<div class=product><option>a<option class=sku>b</option></option></div>",
        "<div class=product><button><button class=sku>1</button></button></div>",
        "<div class=product><nobr><nobr class=sku>1</nobr></nobr></div>",
        "<div class=product><select><span class=sku>1</span></select></div>",
        "<div class=product><template><span class=sku>1</span></template></div>",
        "<div class=product><plaintext><span class=sku>1</span></div>",
        "<div class=product><span class=sku>1\0</span></div>",
        "<div class=product></p><span class=sku>1</span></div>",
        "<div class=product><span class=sku>1</span></div></",
    ] {
        declines(&m, page);
    }
}

#[test]
fn well_formed_tables_stream() {
    let m = product();
    let out = agrees(
        &m,
        "<div class=product><table class=specs>\n <thead><tr><th>k</th></tr></thead>\n\
         <tr><td><span class=sku>1</span></td><td><ul><li><i class=tag>t</i></li></ul></td></tr>\n\
         </table><h1 class=product-title>T</h1></div><table><tbody><tr><td>x</td></tr></tbody></table>",
    );
    assert_eq!(out.items.len(), 1);
    let cells = compile(&Model::new(
        "cells",
        vec![Field::css("rows", "table > tbody > tr").list(), Field::css("bare", "table > tr").list()],
    ));
    agrees(&cells, "<table><tr><td>a</td></tr><tr><td>b</td></tr></table>");
}

#[test]
fn raw_text_and_references_as_the_tokenizer_reads_them() {
    let m = compile(&Model::new(
        "t",
        vec![
            Field::css("title", "title"),
            Field::css("script", "script"),
            Field::css("noscript", "noscript"),
            Field::css("textarea", "textarea"),
            Field::css("data", "div[data-x]").attr("data-x"),
        ],
    ));
    agrees(
        &m,
        "<!doctype html><title>A &amp; B &lt;i&gt;</title><script><!--<script></script>--></script>\
         <noscript><a href=x>&amp;</a></noscript><textarea>\n&copy=1 <b></textarea>\
         <div data-x=\"a&amp;b&c=1\r\nd\">x</div>",
    );
}

/// Tag names a well-formed random document is made of: none a stack would get wrong.
const SAFE: &[&str] = &["div", "span", "section", "em", "b", "article", "ul", "li", "p", "h1", "a", "small"];
const CLASSES: &[&str] = &["product", "sku", "price", "tag", "x", "Product"];

fn attrs() -> impl Strategy<Value = String> {
    (
        prop::option::of(prop::sample::subsequence(CLASSES.to_vec(), 1..3)),
        prop::option::of(prop::sample::select(vec!["main", "a1", "Main"])),
        prop::option::of(prop::sample::select(vec!["/x", "y?a=1&b=2", "#f", "z&amp;w", "  sp  "])),
    )
        .prop_map(|(classes, id, href)| {
            let mut out = String::new();
            if let Some(classes) = classes {
                out.push_str(&format!(" class=\"{}\"", classes.join(" ")));
            }
            if let Some(id) = id {
                out.push_str(&format!(" id={id}"));
            }
            if let Some(href) = href {
                out.push_str(&format!(" href='{href}' data-x"));
            }
            out
        })
}

/// A well-formed fragment: text, or an element of a safe kind with well-formed content (no
/// `<p>` around block elements, no `<a>` in `<a>`, no `<li>` directly in `<li>`, headings not
/// nested).
fn fragment() -> impl Strategy<Value = String> {
    let text = prop::sample::select(vec!["hello ", " 12.50 ", "a &amp; b", "x&#65;", "\n", "tom &b=c"])
        .prop_map(str::to_owned);
    text.prop_recursive(4, 48, 6, |inner| {
        let table = (attrs(), prop::collection::vec(inner.clone(), 1..3), any::<bool>(), any::<bool>())
            .prop_map(|(attrs, cells, tbody, head)| {
                let cells: String = cells.iter().map(|c| format!("<td class=x>{c}</td>")).collect();
                let head = if head { "<thead><tr><th>h</th></tr></thead>\n" } else { "" };
                let rows = format!("<tr class=tag>{cells}</tr> <tr><th>k</th></tr>");
                let body = if tbody { format!("<tbody>{rows}</tbody>") } else { rows };
                format!("<table{attrs}>{head}{body}</table>")
            });
        let element = (prop::sample::select(SAFE.to_vec()), attrs(), prop::collection::vec(inner, 0..6))
            .prop_map(|(name, attrs, children)| {
                let mut body = String::new();
                for child in children {
                    // Keep it well-formed: block content only in blocks.
                    let inline_only = matches!(name, "p" | "h1" | "em" | "b" | "span" | "small" | "a");
                    if inline_only
                        && child.starts_with('<')
                        && !child.starts_with("<em")
                        && !child.starts_with("<b")
                        && !child.starts_with("<span")
                        && !child.starts_with("<small")
                    {
                        continue;
                    }
                    if (name == "a" || name == "li") && child.contains("<a") {
                        continue;
                    }
                    if name == "li" && child.contains("<li") {
                        continue;
                    }
                    body.push_str(&child);
                }
                format!("<{name}{attrs}>{body}</{name}>")
            });
        prop_oneof![4 => element, 1 => table]
    })
}

fn selector() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "div.product",
        ".sku",
        "span.price",
        "span",
        ".product .sku",
        "div > span",
        "#main",
        "#Main .x",
        "a[href]",
        "[data-x]",
        "li > a.tag",
        "ul li",
        "em, b",
        ".Product",
        "section > div > .x",
        "[href='/x']",
        "*.tag",
        "h1.x.tag",
        "p",
        "p span",
        "li",
        "h1",
        "h2",
        "a",
        "b",
        "div div",
        "form",
        "option",
        "td",
        "title",
        "noscript b",
    ])
    .prop_map(str::to_owned)
}

fn model() -> impl Strategy<Value = CompiledModel> {
    (
        prop::option::of(selector()),
        prop::collection::vec((selector(), any::<bool>(), any::<bool>(), any::<bool>(), 0..3u8), 1..4),
    )
        .prop_map(|(root, fields)| {
            let fields = fields
                .into_iter()
                .enumerate()
                .map(|(i, (css, list, required, dig, take))| {
                    let mut f = Field::css(format!("f{i}"), css);
                    f = match take {
                        0 => f,
                        1 => f.attr("href"),
                        _ => f.attr("class"),
                    };
                    if list {
                        f = f.list();
                    }
                    if required {
                        f = f.required();
                    }
                    if dig && take == 1 {
                        f = f.dig();
                    }
                    f
                })
                .collect();
            let mut model = Model::new("m", fields);
            if let Some(root) = root {
                model = model.with_root(Selector::css(&root));
            }
            compile(&model)
        })
}

/// Pieces that a stack may get wrong, mixed into arbitrary documents.
const TRICKY: &[&str] = &[
    "<div class=product>",
    "</div>",
    "<p>",
    "</p>",
    "<li>",
    "</li>",
    "<ul>",
    "</ul>",
    "<a href=1>",
    "</a>",
    "<span class=sku>",
    "</span>",
    "<table>",
    "<tr>",
    "<td>",
    "</table>",
    "</td>",
    "</tr>",
    "<tbody>",
    "<th>",
    "<caption>",
    "<col>",
    "<colgroup>",
    "<thead>",
    "<table><tr><td>",
    "<b>",
    "</i>",
    "<br/>",
    "</br>",
    "<title>t</title>",
    "<script>s</script>",
    "<!-- c -->",
    "<h1>",
    "<h2 class=x>",
    "</h1>",
    "<form>",
    "<button>",
    "<option>",
    "<select>",
    "&eacute;",
    "&amp;",
    "&copy",
    "<",
    "</",
    "<svg>",
    "<body class=tag>",
    "<html id=main>",
    "<noscript><b>x</b></noscript>",
    "text ",
    "\r\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn well_formed_pages_stream_and_agree(model in model(), body in prop::collection::vec(fragment(), 0..6)) {
        let html = format!("<!DOCTYPE html><html><head><title>t</title></head><body>{}</body></html>", body.concat());
        agrees(&model, &html);
    }

    #[test]
    fn any_page_agrees_where_it_streams(
        model in model(),
        body in prop::collection::vec(fragment(), 1..6),
        tricks in prop::collection::vec((prop::sample::select(TRICKY.to_vec()), any::<prop::sample::Index>()), 1..4),
        doctype in any::<bool>(),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        // A well-formed page with a few tricky pieces dropped in at tag boundaries, and maybe cut
        // short, so that elements the tree builder closes on its own are still open at the end.
        let mut html = body.concat();
        let bounds = |html: &str| -> Vec<usize> { html.match_indices('<').map(|(i, _)| i).chain([html.len()]).collect() };
        for (piece, at) in tricks {
            let bounds = bounds(&html);
            html.insert_str(bounds[at.index(bounds.len())], piece);
        }
        if let Some(cut) = cut {
            let bounds = bounds(&html);
            html.truncate(bounds[cut.index(bounds.len())]);
        }
        let html = format!("{}<html><body>{html}", if doctype { "<!DOCTYPE html>" } else { "" });
        let (fast, dom) = both(&model, &html, "http://shop.example/");
        if let Some(fast) = fast {
            prop_assert_eq!(fast, dom, "{}", html);
        }
    }
}

/// The test data: `$KUMO_TESTDATA`, else the repository's `testdata/`.
fn testdata() -> PathBuf {
    match std::env::var_os("KUMO_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")),
    }
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

#[test]
fn every_quotes_page_streams_and_agrees() {
    let quote = compile(
        &Model::new(
            "quote",
            vec![
                Field::css("text", "span.text").required(),
                Field::css("author", "small.author").required(),
                Field::css("tags", "a.tag").list(),
                Field::css("about", "a[href]").attr("href").dig(),
            ],
        )
        .with_root(Selector::css("div.quote")),
    );
    let author = compile(&Model::new(
        "author",
        vec![
            Field::css("name", "h3.author-title").required(),
            Field::css("birth_place", "span.author-born-location").filter("^in (.*)$"),
            Field::css("description", "div.author-description"),
        ],
    ));
    let tag = compile(&Model::new("tag", vec![Field::css("name", "h3 > a").required()]));
    let next = compile(&Model::new("next", vec![Field::css("next", "li.next > a").attr("href").dig()]));
    let mut files = Vec::new();
    html_files(&testdata().join("quotes-site"), &mut files);
    assert!(files.len() > 200, "the quotes site has {} pages", files.len());
    for file in files {
        let html = std::fs::read_to_string(&file).unwrap();
        for model in [&quote, &author, &tag, &next] {
            let (fast, dom) = both(model, &html, "http://quotes.example/page/1/");
            let fast = fast.unwrap_or_else(|| panic!("declined {}", file.display()));
            assert_eq!(fast, dom, "{}", file.display());
        }
    }
}
