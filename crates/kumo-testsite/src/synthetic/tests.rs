//! Checks that rendered pages and the ground truth agree, by crawling the rendered HTML.

use std::collections::{HashMap, HashSet, VecDeque};

use url::Url;

use super::links::Doc;
use super::{GroundTruth, Site, SiteConfig};

const HOST: &str = "127.0.0.1:5555";

/// Every `href` of an `<a …>` tag, found by plain scanning (independent of the renderer).
fn hrefs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<a ") {
        let tag_and_after = &rest[start..];
        let end = tag_and_after.find('>').expect("unclosed <a> tag");
        let tag = &tag_and_after[..end];
        if let Some(h) = tag.find("href=\"") {
            let value = &tag[h + 6..];
            let close = value.find('"').expect("unclosed href");
            out.push(&value[..close]);
        }
        rest = &tag_and_after[end..];
    }
    out
}

fn sku(html: &str) -> &str {
    let at = html.find("data-sku=\"").expect("page has an item") + 10;
    let len = html[at..].find('"').expect("closed attribute");
    &html[at..at + len]
}

/// A reference crawler over rendered pages: the same-host BFS a real crawler would do.
fn crawl(site: &Site) -> (GroundTruth, HashSet<String>) {
    let start = Url::parse(&format!("http://{HOST}/index.html")).unwrap();
    let mut depth: HashMap<String, usize> = HashMap::from([(start.to_string(), 0)]);
    let mut queue = VecDeque::from([start]);
    let mut skus = HashSet::new();
    while let Some(url) = queue.pop_front() {
        let doc = site.route(url.path()).unwrap_or_else(|| panic!("{url} is linked but not served"));
        let html = site.render(doc);
        skus.insert(sku(&html).to_owned());
        let d = depth[url.as_str()];
        for href in hrefs(&html) {
            let mut next = url.join(href).unwrap();
            if next.scheme() != "http" || next.authority() != HOST {
                continue;
            }
            next.set_fragment(None);
            if !depth.contains_key(next.as_str()) {
                depth.insert(next.to_string(), d + 1);
                queue.push_back(next);
            }
        }
    }
    let mut depth_counts = vec![0; depth.values().max().unwrap() + 1];
    for &d in depth.values() {
        depth_counts[d] += 1;
    }
    let query_variants = depth.keys().filter(|u| u.contains('?')).count();
    let truth = GroundTruth { documents: skus.len(), query_variants, unique_urls: depth.len(), depth_counts };
    (truth, skus)
}

#[test]
fn ground_truth_matches_a_crawl_of_the_rendered_pages() {
    let configs = [
        SiteConfig { pages: 300, page_bytes: 2_000, ..SiteConfig::default() },
        SiteConfig { pages: 1, ..SiteConfig::default() },
        SiteConfig { pages: 0, ..SiteConfig::default() },
        SiteConfig {
            pages: 777,
            links_per_page: 0,
            page_bytes: 0,
            seed: 99,
            external_base: Some("http://127.0.0.2:4000/".into()),
            salt: Vec::new(),
            validators: false,
        },
        SiteConfig { pages: 120, links_per_page: 60, page_bytes: 0, seed: 7, ..SiteConfig::default() },
    ];
    for cfg in configs {
        let site = Site::new(cfg.clone(), HOST.into());
        let (crawled, _) = crawl(&site);
        let truth = cfg.ground_truth();
        assert_eq!(crawled, truth, "{cfg:?}");
        assert_eq!(truth.documents, cfg.pages + 1);
        assert_eq!(truth.query_variants, cfg.pages.div_ceil(50));
        assert_eq!(truth.unique_urls, cfg.pages + 1 + truth.query_variants);
        assert_eq!(truth.depth_counts.iter().sum::<usize>(), truth.unique_urls);
        assert_eq!(truth.urls_within_depth(0), 1);
        assert_eq!(truth.urls_within_depth(usize::MAX), truth.unique_urls);
    }
}

#[test]
fn pages_use_every_spelling_and_the_odd_links() {
    let cfg = SiteConfig::default();
    let site = Site::new(cfg.clone(), HOST.into());
    let all: Vec<String> = (0..cfg.pages)
        .flat_map(|k| {
            let html = site.render(Doc::Page(k));
            hrefs(&html).into_iter().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect();
    let has = |pred: &dyn Fn(&str) -> bool| all.iter().any(|h| pred(h));
    assert!(has(&|h| h.starts_with("/page/") && h.ends_with(".html")));
    assert!(has(&|h| h.starts_with(&format!("http://{HOST}/page/"))));
    assert!(has(&|h| h.starts_with(&format!("//{HOST}/page/"))));
    assert!(has(&|h| h.starts_with("./") && !h.starts_with("./page/")));
    assert!(has(&|h| h.starts_with("../page/")));
    assert!(has(&|h| h.as_bytes()[0].is_ascii_digit()));
    assert!(has(&|h| h.contains(".html#")));
    assert!(has(&|h| h.starts_with('#')));
    assert!(has(&|h| h == "/page/50.html?view=print"));
    assert!(has(&|h| h.starts_with("http://127.0.0.2:9/ext/")));
    assert!(has(&|h| h.starts_with("mailto:")));
    assert!(has(&|h| h == "javascript:void(0)"));

    // About `links_per_page` links, and duplicates on some pages.
    let per_page = all.len() / cfg.pages;
    assert!((18..=22).contains(&per_page), "{per_page} links per page");
    let html = site.render(Doc::Page(7));
    let links = hrefs(&html);
    let externals = links.iter().filter(|h| h.contains("/ext/")).count();
    assert!((2..=3).contains(&externals));
}

#[test]
fn pages_are_about_page_bytes_and_carry_their_item() {
    for page_bytes in [4_000, 12_000, 50_000] {
        let cfg = SiteConfig { page_bytes, ..SiteConfig::default() };
        let site = Site::new(cfg, HOST.into());
        for doc in [Doc::Index, Doc::Page(0), Doc::Page(42), Doc::Page(99)] {
            let html = site.render(doc);
            let len = html.len();
            assert!(len >= page_bytes && len <= page_bytes + 800, "{doc:?}: {len} bytes");
            assert!(html.starts_with("<!DOCTYPE html>"));
            assert!(html.contains("<meta charset=\"utf-8\">"));
            assert!(html.contains(" | Bench Shop</title>"));
            assert!(html.ends_with("</html>\n"));
        }
    }
    let site = Site::new(SiteConfig::default(), HOST.into());
    let html = site.render(Doc::Page(42));
    assert!(html.contains("<div class=\"product\" data-sku=\"SKU-000042\"><h1 class=\"product-title\">"));
    assert!(html.contains(" 000042</h1><span class=\"price\">$"));
    assert!(html.contains("</span><span class=\"sku\">SKU-000042</span></div>"));
    assert_eq!(sku(&site.render(Doc::Index)), "SKU-INDEX");
}

#[test]
fn rendering_is_deterministic_and_seeded() {
    let cfg = SiteConfig::default();
    let a = Site::new(cfg.clone(), HOST.into());
    let b = Site::new(cfg.clone(), HOST.into());
    let c = Site::new(SiteConfig { seed: 2, ..cfg.clone() }, HOST.into());
    for doc in [Doc::Index, Doc::Page(0), Doc::Page(57)] {
        assert_eq!(a.render(doc), b.render(doc));
        assert_ne!(a.render(doc), c.render(doc));
    }
    assert_eq!(cfg.ground_truth(), cfg.clone().ground_truth());
}

#[test]
fn routes_only_canonical_page_paths() {
    let site = Site::new(SiteConfig::default(), HOST.into());
    assert_eq!(site.route("/"), Some(Doc::Index));
    assert_eq!(site.route("/index.html"), Some(Doc::Index));
    assert_eq!(site.route("/page/0.html"), Some(Doc::Page(0)));
    assert_eq!(site.route("/page/99.html"), Some(Doc::Page(99)));
    for path in [
        "/page/100.html",
        "/page/007.html",
        "/page/.html",
        "/page/-1.html",
        "/page/1.htm",
        "/page/",
        "/page/1.html/",
        "/robots.txt",
        "/index.htm",
        "/page/99999999999999999999999.html",
    ] {
        assert_eq!(site.route(path), None, "{path}");
    }
}
