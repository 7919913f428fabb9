//! A shop whose links and product fields are written by JavaScript: a crawler that does not
//! run scripts finds none of them, one that renders finds them all. With it, pages that test
//! a renderer's waits and limits: content fetched after a delay, a script that never ends,
//! an event stream that never closes, and images and a stylesheet to block.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Duration;

use crate::Fixture;

/// Where the scripted pages live.
pub const SCRIPTED_PREFIX: &str = "/js/";
/// The entry page.
pub const SCRIPTED_INDEX: &str = "/js/index.html";
/// Loads `/js/data.json` 200 ms after it loads, then links to [`FROM_FETCH`] and marks its
/// body `data-ready`.
pub const LATE: &str = "/js/late.html";
/// The JSON [`LATE`] fetches: `{"links": [FROM_FETCH]}`.
pub const DATA: &str = "/js/data.json";
/// A plain page linked only by what [`LATE`] fetches.
pub const FROM_FETCH: &str = "/js/from-fetch.html";
/// Linked only inside `<noscript>`: a crawl without scripts finds it, a rendering one not.
pub const NOSCRIPT_ONLY: &str = "/js/noscript-only.html";
/// A script that never ends: the page never loads.
pub const HANG: &str = "/js/hang.html";
/// Opens an event stream that sends a comment a second for minutes: never network-idle.
pub const STREAM: &str = "/js/stream.html";
/// The event stream [`STREAM`] opens: `text/event-stream`, three bytes a second.
pub const EVENTS: &str = "/js/events";
/// Three images and a stylesheet, for blocking.
pub const HEAVY: &str = "/js/heavy.html";
/// Sets a cookie in its answer (`served=1`) and another from its script (`scripted=1`).
pub const COOKIE: &str = "/js/cookie.html";

/// The scripted shop's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptedSite {
    /// Product pages, `/js/p/{i}.html`.
    pub products: usize,
    /// Products listed per category page, `/js/c/{c}.html` (0 counts as 1).
    pub per_category: usize,
}

impl Default for ScriptedSite {
    fn default() -> Self {
        ScriptedSite { products: 24, per_category: 8 }
    }
}

/// What a crawl of the scripted shop from [`SCRIPTED_INDEX`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedTruth {
    /// Paths a rendering crawl fetches as pages (the index, categories, products, [`LATE`]
    /// and [`FROM_FETCH`]).
    pub rendered_pages: BTreeSet<String>,
    /// Paths a crawl that does not run scripts fetches (the index and [`NOSCRIPT_ONLY`]).
    pub static_pages: BTreeSet<String>,
    /// Each product page's name and price, as its script writes them.
    pub products: BTreeMap<String, (String, String)>,
}

impl ScriptedSite {
    fn per_category(&self) -> usize {
        self.per_category.max(1)
    }

    fn categories(&self) -> usize {
        self.products.div_ceil(self.per_category())
    }

    fn product(i: usize) -> (String, String) {
        (format!("Scripted widget {i}"), format!("{}.{:02}", 10 + i * 7 % 90, i * 13 % 100))
    }

    /// What a crawl of this shop finds, with scripts run and without.
    pub fn truth(&self) -> ScriptedTruth {
        let mut rendered_pages: BTreeSet<String> =
            [SCRIPTED_INDEX, LATE, FROM_FETCH].iter().map(|s| s.to_string()).collect();
        rendered_pages.extend((0..self.categories()).map(|c| format!("/js/c/{c}.html")));
        let products: BTreeMap<_, _> =
            (0..self.products).map(|i| (format!("/js/p/{i}.html"), Self::product(i))).collect();
        rendered_pages.extend(products.keys().cloned());
        let static_pages = [SCRIPTED_INDEX, NOSCRIPT_ONLY].iter().map(|s| s.to_string()).collect();
        ScriptedTruth { rendered_pages, static_pages, products }
    }

    /// Every page and resource, by path.
    pub fn fixtures(&self) -> Vec<(String, Fixture)> {
        let mut out = Vec::new();
        let categories: Vec<String> = (0..self.categories()).map(|c| format!("/js/c/{c}.html")).collect();
        let mut index_links = categories.clone();
        index_links.push(LATE.into());
        out.push((
            SCRIPTED_INDEX.to_string(),
            page(
                "Scripted shop",
                &format!("<noscript><a href=\"{NOSCRIPT_ONLY}\">The shop without scripts</a></noscript>"),
                &links_script(&index_links),
            ),
        ));
        for (c, path) in categories.iter().enumerate() {
            let from = c * self.per_category();
            let to = (from + self.per_category()).min(self.products);
            let products: Vec<String> = (from..to).map(|i| format!("/js/p/{i}.html")).collect();
            out.push((path.clone(), page(&format!("Category {c}"), "", &links_script(&products))));
        }
        for i in 0..self.products {
            let (name, price) = Self::product(i);
            let script = format!(
                "const p = {{ name: {name:?}, price: {price:?} }};\n\
                 const app = document.getElementById('app');\n\
                 app.innerHTML = '<h1 class=\"name\"></h1><span class=\"price\"></span>';\n\
                 app.querySelector('.name').textContent = p.name;\n\
                 app.querySelector('.price').textContent = p.price;\n\
                 const a = document.createElement('a'); a.href = '/js/p/{next}.html'; a.textContent = 'next';\n\
                 app.appendChild(a);",
                next = (i + 1) % self.products
            );
            out.push((format!("/js/p/{i}.html"), page(&name, "", &script)));
        }
        let late = format!(
            "setTimeout(() => fetch('{DATA}').then(r => r.json()).then(d => {{\n\
               for (const href of d.links) {{ const a = document.createElement('a'); a.href = href; \
             a.textContent = href; document.getElementById('app').appendChild(a); }}\n\
               document.body.dataset.ready = '1';\n\
             }}), 200);"
        );
        out.push((LATE.into(), page("Late content", "", &late)));
        out.push((
            DATA.into(),
            Fixture {
                headers: vec![("content-type".into(), "application/json".into())],
                body: format!("{{\"links\": [\"{FROM_FETCH}\"]}}").into(),
                ..Fixture::default()
            },
        ));
        out.push((
            FROM_FETCH.into(),
            Fixture::html("<!DOCTYPE html><title>Fetched</title><p>Found late.</p>"),
        ));
        out.push((
            NOSCRIPT_ONLY.into(),
            Fixture::html("<!DOCTYPE html><title>No script</title><p>Plain.</p>"),
        ));
        out.push((HANG.into(), page("Never loads", "", "for (;;) {}")));
        out.push((
            STREAM.into(),
            page(
                "Streaming",
                "",
                &format!(
                    "new EventSource('{EVENTS}'); document.getElementById('app').textContent = 'streaming';"
                ),
            ),
        ));
        out.push((
            EVENTS.into(),
            Fixture {
                headers: vec![
                    ("content-type".into(), "text/event-stream".into()),
                    ("cache-control".into(), "no-store".into()),
                ],
                body: ":\n\n".repeat(600).into(),
                ..Fixture::default()
            }
            .trickle(3, Duration::from_secs(1)),
        ));
        out.push((
            HEAVY.into(),
            Fixture::html(
                "<!DOCTYPE html><title>Heavy</title><link rel=stylesheet href=/js/site.css>\
                 <img src=/js/img/1.png><img src=/js/img/2.png><img src=/js/img/3.png><p>Pictures.</p>",
            ),
        ));
        out.push((
            COOKIE.into(),
            page("Cookies", "", "document.cookie = 'scripted=1; path=/';")
                .with_header("set-cookie", "served=1; Path=/"),
        ));
        out.push(("/js/site.css".into(), css()));
        for n in 1..=3 {
            out.push((format!("/js/img/{n}.png"), png()));
        }
        out
    }
}

/// A page whose `#app` its script fills.
fn page(title: &str, extra: &str, script: &str) -> Fixture {
    Fixture::html(&format!(
        "<!DOCTYPE html><html><head><title>{title}</title></head><body>{extra}<div id=\"app\"></div>\
         <script>\n{script}\n</script></body></html>"
    ))
}

/// A script that adds a link for each of `hrefs` (written as data, so no `<a` is in the HTML).
fn links_script(hrefs: &[String]) -> String {
    let mut list = String::from("[");
    for h in hrefs {
        let _ = write!(list, "{h:?},");
    }
    list.push(']');
    format!(
        "for (const href of {list}) {{ const a = document.createElement('a'); a.href = href; \
         a.textContent = href; document.getElementById('app').appendChild(a); }}"
    )
}

fn css() -> Fixture {
    Fixture {
        headers: vec![("content-type".into(), "text/css".into())],
        body: "p { color: #333 }\n".into(),
        ..Fixture::default()
    }
}

/// A 1×1 PNG.
fn png() -> Fixture {
    const PNG: [u8; 67] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
        0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01,
        0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    Fixture {
        headers: vec![("content-type".into(), "image/png".into())],
        body: bytes::Bytes::from_static(&PNG),
        ..Fixture::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_link_of_the_scripted_pages_is_in_their_html() {
        let site = ScriptedSite::default();
        let truth = site.truth();
        for (path, f) in site.fixtures() {
            let body = String::from_utf8_lossy(&f.body);
            if truth.rendered_pages.contains(&path) && path != FROM_FETCH && path != SCRIPTED_INDEX {
                assert!(!body.contains("<a "), "{path} has a static link");
            }
        }
        assert_eq!(truth.products.len(), 24);
        assert_eq!(truth.rendered_pages.len(), 3 + 3 + 24);
    }

    /// Every product the truth promises is listed by a category page, whatever the shape.
    #[test]
    fn every_product_is_listed_by_a_category() {
        for per_category in [0, 1, 5, 24, 100] {
            let site = ScriptedSite { products: 7, per_category };
            let listed: String = site
                .fixtures()
                .into_iter()
                .filter(|(path, _)| path.starts_with("/js/c/"))
                .map(|(_, f)| String::from_utf8_lossy(&f.body).into_owned())
                .collect();
            for product in site.truth().products.keys() {
                assert!(
                    listed.contains(&format!("{product:?}")),
                    "{product} unlisted with {per_category} per category"
                );
            }
        }
    }
}
