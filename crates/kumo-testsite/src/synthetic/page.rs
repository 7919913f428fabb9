//! Routing and rendering of the synthetic site's pages, cheaply enough for benchmarks.

use std::fmt::Write as _;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use http::header::{CONTENT_TYPE, ETAG, HeaderValue, LAST_MODIFIED};
use http::{HeaderMap, Response, StatusCode};

use super::links::{Doc, Frag, Href, Rng, Role, Spelling, Stream, for_each_link};
use super::{SALT_SPREAD, SiteConfig};
use crate::body::Body;
use crate::fixture::not_modified;

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
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
    "laborum",
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
    "aluminium",
    "polymer",
    "ceramic",
    "durable",
    "compact",
    "portable",
    "industrial",
    "premium",
];

const ADJ: [&str; 16] = [
    "Red", "Blue", "Green", "Compact", "Heavy", "Light", "Smart", "Classic", "Pro", "Mini", "Ultra", "Eco",
    "Steel", "Turbo", "Silent", "Rugged",
];

const NOUN: [&str; 16] = [
    "Widget", "Gadget", "Sprocket", "Bracket", "Flange", "Gasket", "Valve", "Pump", "Motor", "Sensor",
    "Cable", "Hinge", "Bearing", "Spring", "Switch", "Relay",
];

const STYLE: &str = "body{font-family:sans-serif;margin:0;padding:0;color:#222}\
header,footer{background:#f4f4f4;padding:8px 16px}\
main{padding:16px}.product{border:1px solid #ddd;padding:12px}\
.price{font-weight:bold;color:#a00}ul.links{columns:3}";

const TAIL: &str = "</section></main>\n<footer id=\"top\"><p>&copy; Bench Shop</p></footer></body></html>\n";

/// Paragraphs in the padding pool; pages pick from it, so padding costs one copy per byte.
const POOL_SIZE: usize = 64;

/// Where external links go when the test runs no trap server: a loopback address on the
/// discard port, which nothing here serves, so a crawler that follows it just fails fast.
const DEFAULT_EXTERNAL_BASE: &str = "http://127.0.0.2:9";

/// A synthetic site bound to the `host` (`ip:port`) its absolute links name.
#[derive(Debug)]
pub(crate) struct Site {
    cfg: SiteConfig,
    host: String,
    external_base: String,
    pool: Vec<String>,
    /// How often each document has been changed, by [`Doc::id`]: 0 serves it as generated.
    revisions: Vec<AtomicU32>,
}

impl Site {
    pub(crate) fn new(cfg: SiteConfig, host: String) -> Self {
        let external_base =
            cfg.external_base.as_deref().unwrap_or(DEFAULT_EXTERNAL_BASE).trim_end_matches('/').to_owned();
        let pool = paragraph_pool(cfg.seed);
        let revisions = (0..=cfg.pages).map(|_| AtomicU32::new(0)).collect();
        Site { cfg, host, external_base, pool, revisions }
    }

    /// The document served at `path`, if the site has one there.
    pub(crate) fn route(&self, path: &str) -> Option<Doc> {
        if path == "/" || path == "/index.html" {
            return Some(Doc::Index);
        }
        let digits = path.strip_prefix("/page/")?.strip_suffix(".html")?;
        // Only the canonical spelling of a number: `/page/007.html` is not page 7.
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        let k: usize = if canonical {
            digits.parse().ok()?
        } else {
            return None;
        };
        (k < self.cfg.pages).then_some(Doc::Page(k))
    }

    /// Changes pages `pages` (see [`crate::TestServer::change_pages`]).
    pub(crate) fn change(&self, pages: &[usize]) {
        for &k in pages.iter().filter(|&&k| k < self.cfg.pages) {
            self.revisions[Doc::Page(k).id() as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn revision(&self, doc: Doc) -> u32 {
        self.revisions[doc.id() as usize].load(Ordering::Relaxed)
    }

    /// `doc` as the answer to a request with `asked` headers: with validators on, a `304`
    /// when they name its current `ETag` (or, without `If-None-Match`, its `Last-Modified`).
    pub(crate) fn respond(&self, doc: Doc, asked: &HeaderMap) -> Response<Body> {
        let validators = self.cfg.validators.then(|| self.validators(doc));
        if let Some((etag, modified)) = &validators
            && not_modified(asked, Some(etag.as_bytes()), Some(modified.as_bytes()))
        {
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = StatusCode::NOT_MODIFIED;
            self.add_validators(&mut resp, etag, modified);
            return resp;
        }
        let mut resp = Response::new(Body::full(self.render(doc)));
        resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        if let Some((etag, modified)) = &validators {
            self.add_validators(&mut resp, etag, modified);
        }
        resp
    }

    /// `doc`'s current `ETag` and `Last-Modified`: its revision `r` was made on day `r` after
    /// 2026-01-01.
    fn validators(&self, doc: Doc) -> (String, String) {
        let rev = self.revision(doc);
        let etag = format!("\"{:x}-{}-{rev}\"", self.cfg.seed, doc.id());
        let day = Duration::from_secs(86_400) * rev;
        let modified = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(1_767_225_600) + day);
        (etag, modified)
    }

    fn add_validators(&self, resp: &mut Response<Body>, etag: &str, modified: &str) {
        // Both are built from digits and date text only, so they are valid header values.
        if let (Ok(e), Ok(m)) = (HeaderValue::from_str(etag), HeaderValue::from_str(modified)) {
            resp.headers_mut().insert(ETAG, e);
            resp.headers_mut().insert(LAST_MODIFIED, m);
        }
    }

    /// The HTML of `doc`. One pre-sized buffer, no other allocation.
    pub(crate) fn render(&self, doc: Doc) -> String {
        let cfg = &self.cfg;
        let mut html = String::with_capacity(cfg.page_bytes + 2048 + 96 * cfg.links_per_page);
        let num = match doc {
            Doc::Index => None,
            Doc::Page(k) => Some(k),
        };
        let mut item = Rng::new(cfg.seed, doc, Stream::Item);
        let r = item.next_u64();
        // A changed page costs a dollar more per change.
        let cents = 199 + item.below(99_999 - 199 + 1) + 100 * self.revision(doc) as usize;

        html.push_str(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>",
        );
        push_title(&mut html, r, num);
        html.push_str(" | Bench Shop</title><style>");
        html.push_str(STYLE);
        html.push_str(
            "</style></head>\n<body><header><h2>Bench Shop</h2></header>\n<main>\
             <div class=\"product\" data-sku=\"",
        );
        push_sku(&mut html, num);
        html.push_str("\"><h1 class=\"product-title\">");
        push_title(&mut html, r, num);
        let _ = write!(
            html,
            "</h1><span class=\"price\">${}.{:02}</span><span class=\"sku\">",
            cents / 100,
            cents % 100
        );
        push_sku(&mut html, num);
        html.push_str("</span></div>\n<ul class=\"links\">\n");

        for_each_link(cfg, doc, |link| {
            html.push_str("<li><a href=\"");
            self.push_href(&mut html, doc, link.href);
            html.push_str("\">");
            push_text(&mut html, link.role, link.href);
            html.push_str("</a></li>\n");
        });
        for href in self.salt_of(doc) {
            html.push_str("<li><a href=\"");
            html.push_str(href);
            html.push_str("\">More</a></li>\n");
        }

        html.push_str("</ul>\n<section class=\"description\">\n");
        let mut padding = Rng::new(cfg.seed, doc, Stream::Padding);
        // Bounded: each paragraph is non-empty, so the page grows every turn.
        while html.len() + TAIL.len() < cfg.page_bytes {
            html.push_str(&self.pool[padding.below(self.pool.len())]);
        }
        html.push_str(TAIL);
        html
    }

    /// The [`SiteConfig::salt`] links `doc` carries.
    fn salt_of(&self, doc: Doc) -> impl Iterator<Item = &str> {
        let spread = self.cfg.pages.min(SALT_SPREAD);
        let slot = match doc {
            Doc::Index => (spread == 0).then_some(0),
            Doc::Page(k) => (k < spread).then_some(k),
        };
        self.cfg
            .salt
            .iter()
            .enumerate()
            .filter(move |(i, _)| slot.is_some_and(|s| i % spread.max(1) == s))
            .map(|(_, h)| h.as_str())
    }

    fn push_href(&self, out: &mut String, doc: Doc, href: Href) {
        let from_index = doc == Doc::Index;
        match href {
            Href::Page { k, spelling, frag } => {
                let prefix = match spelling {
                    Spelling::AbsPath => "/page/",
                    Spelling::AbsUrl | Spelling::ProtoRel => {
                        out.push_str(if spelling == Spelling::AbsUrl { "http://" } else { "//" });
                        out.push_str(&self.host);
                        "/page/"
                    }
                    Spelling::Rel if from_index => "page/",
                    Spelling::Rel => "",
                    Spelling::DotRel if from_index => "./page/",
                    Spelling::DotRel => "./",
                    Spelling::DotDotRel => "../page/",
                };
                let _ = write!(out, "{prefix}{k}.html");
                out.push_str(frag.map_or("", Frag::as_str));
            }
            Href::Index { absolute } => {
                if absolute {
                    out.push_str("http://");
                    out.push_str(&self.host);
                }
                out.push_str("/index.html");
            }
            Href::Print(k) => {
                let _ = write!(out, "/page/{k}.html?view=print");
            }
            Href::Fragment(frag) => out.push_str(frag.as_str()),
            Href::External(i) => {
                out.push_str(&self.external_base);
                match doc {
                    Doc::Index => out.push_str("/ext/index"),
                    Doc::Page(k) => {
                        let _ = write!(out, "/ext/{k}");
                    }
                }
                let _ = write!(out, "/{i}");
            }
            Href::Mailto => out.push_str("mailto:sales@example.com"),
            Href::Javascript => out.push_str("javascript:void(0)"),
        }
    }
}

fn push_title(out: &mut String, r: u64, num: Option<usize>) {
    match num {
        None => out.push_str("Catalogue"),
        Some(k) => {
            let adj = ADJ[(r % 16) as usize];
            let noun = NOUN[((r >> 8) % 16) as usize];
            let _ = write!(out, "{adj} {noun} {k:06}");
        }
    }
}

fn push_sku(out: &mut String, num: Option<usize>) {
    match num {
        None => out.push_str("SKU-INDEX"),
        Some(k) => {
            let _ = write!(out, "SKU-{k:06}");
        }
    }
}

fn push_text(out: &mut String, role: Role, href: Href) {
    let k = match href {
        Href::Page { k, .. } => k,
        _ => 0,
    };
    let _ = match role {
        Role::Home => write!(out, "Home"),
        Role::Contact => write!(out, "Contact us"),
        Role::AddToCart => write!(out, "Add to cart"),
        Role::Reviews => write!(out, "Reviews"),
        Role::Start => write!(out, "Start browsing"),
        Role::Featured => write!(out, "Featured {k}"),
        Role::Child => write!(out, "Related product {k}"),
        Role::Parent => write!(out, "Parent category"),
        Role::Specs => write!(out, "Specs of {k}"),
        Role::Print => write!(out, "Printable version"),
        Role::Partner => write!(out, "Partner site"),
        Role::SeeAlso => write!(out, "See also {k}"),
        Role::Again => write!(out, "Also {k}"),
    };
}

/// Lorem-ipsum paragraphs of 40–90 words, each ready to paste as `<p>…</p>\n`.
fn paragraph_pool(seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed, Doc::Index, Stream::Pool);
    (0..POOL_SIZE)
        .map(|_| {
            let words = 40 + rng.below(51);
            let mut p = String::with_capacity(words * 9 + 8);
            p.push_str("<p>");
            for w in 0..words {
                let word = WORDS[rng.below(WORDS.len())];
                if w == 0 {
                    // Capitalise the first letter; the word list is plain ASCII.
                    let (first, rest) = word.split_at(1);
                    p.push_str(&first.to_ascii_uppercase());
                    p.push_str(rest);
                } else {
                    p.push(' ');
                    p.push_str(word);
                }
            }
            p.push_str(".</p>\n");
            p
        })
        .collect()
}
