//! Sitemaps (sitemaps.org): `<urlset>` pages and `<sitemapindex>` indexes, plain or gzipped.
//!
//! Streaming with quick-xml's `Reader` (no DOM, no namespace resolution: element names are
//! matched on their local part). The protocol's limits are enforced: 50,000 entries and
//! 50 MiB uncompressed; what lies beyond is dropped and reported, never buffered.

use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;
use url::Url;

/// The most entries one sitemap may list.
pub const MAX_ENTRIES: usize = 50_000;
/// The most bytes one (uncompressed) sitemap may have.
pub const MAX_BYTES: usize = 50 * 1024 * 1024;

/// What a sitemap file lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SitemapKind {
    /// Pages.
    UrlSet,
    /// Other sitemaps.
    Index,
}

/// One `<url>` or `<sitemap>` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct SitemapEntry {
    /// `<loc>`, resolved against the sitemap's URL, without its fragment.
    pub loc: Url,
    /// `<lastmod>` as written (a W3C date or datetime; not checked).
    pub lastmod: Option<String>,
    /// 0.0–1.0 (urlset only).
    pub priority: Option<f32>,
    /// `<changefreq>` as written (`daily`, `weekly`, ...; not checked).
    pub changefreq: Option<String>,
}

/// A parsed sitemap.
#[derive(Debug, Clone, PartialEq)]
pub struct Sitemap {
    /// Whether it lists pages or other sitemaps.
    pub kind: SitemapKind,
    /// The entries with a usable `<loc>`, in document order, at most [`MAX_ENTRIES`].
    pub entries: Vec<SitemapEntry>,
    /// Entries skipped (bad `loc`, over the limit) and other problems that did not stop parsing.
    pub issues: Vec<String>,
}

/// A body that is not a usable sitemap.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    /// The body starts as gzip does, but does not inflate.
    #[error("gzip sitemap does not decompress: {0}")]
    Gzip(std::io::Error),
    /// Over [`MAX_BYTES`] once inflated.
    #[error("sitemap is larger than {MAX_BYTES} bytes uncompressed")]
    TooLarge,
    /// The XML does not parse (quick-xml's message).
    #[error("sitemap XML is malformed: {0}")]
    Xml(String),
    /// The root element (its local name, or `nothing` when there is none) is neither
    /// `<urlset>` nor `<sitemapindex>`.
    #[error("not a sitemap (the root element is <{0}>, not <urlset> or <sitemapindex>)")]
    NotASitemap(String),
}

/// Parses a sitemap body (gzip is recognised by its magic bytes), resolving `loc`s against
/// `base` (they should be absolute already).
pub fn parse_sitemap(body: &[u8], base: &Url) -> Result<Sitemap, SitemapError> {
    let inflated;
    let xml: &[u8] = if body.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let mut dec = flate2::read::GzDecoder::new(body).take(MAX_BYTES as u64 + 1);
        dec.read_to_end(&mut out).map_err(SitemapError::Gzip)?;
        inflated = out;
        &inflated
    } else {
        body
    };
    if xml.len() > MAX_BYTES {
        return Err(SitemapError::TooLarge);
    }
    parse_xml(xml, base)
}

#[derive(Default)]
struct Current {
    loc: Option<String>,
    lastmod: Option<String>,
    priority: Option<String>,
    changefreq: Option<String>,
}

fn parse_xml(xml: &[u8], base: &Url) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(true);
    let mut buf = Vec::new();
    let mut kind = None;
    let mut entries = Vec::new();
    let mut issues = Vec::new();
    let mut current: Option<Current> = None;
    let mut field: Option<&'static str> = None;
    // How deep inside the current entry: its fields are its children (depth 1), so an
    // extension's `<image:loc>` in `<image:image>` is not taken for the page's `<loc>`.
    let mut depth = 0usize;
    let mut dropped = 0usize;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| SitemapError::Xml(e.to_string()))?;
        match event {
            Event::Start(e) => {
                let local = e.local_name();
                let name: &str = local.into_inner();
                if kind.is_none() {
                    kind = Some(match name {
                        "urlset" => SitemapKind::UrlSet,
                        "sitemapindex" => SitemapKind::Index,
                        other => return Err(SitemapError::NotASitemap(other.to_string())),
                    });
                    continue;
                }
                if current.is_none() {
                    if matches!(name, "url" | "sitemap") {
                        (current, depth) = (Some(Current::default()), 0);
                    }
                } else {
                    depth += 1;
                    field = match name {
                        "loc" if depth == 1 => Some("loc"),
                        "lastmod" if depth == 1 => Some("lastmod"),
                        "priority" if depth == 1 => Some("priority"),
                        "changefreq" if depth == 1 => Some("changefreq"),
                        _ => None,
                    };
                }
            }
            Event::Text(t) => {
                if let (Some(c), Some(f)) = (current.as_mut(), field) {
                    set(c, f, t.xml10_content().trim());
                }
            }
            Event::CData(t) => {
                if let (Some(c), Some(f)) = (current.as_mut(), field) {
                    set(c, f, t.xml10_content().trim());
                }
            }
            // `&amp;` and friends arrive as their own events, between text pieces.
            Event::GeneralRef(r) => {
                if let (Some(c), Some(f)) = (current.as_mut(), field) {
                    let resolved = match r.resolve_char_ref() {
                        Ok(Some(ch)) => ch.to_string(),
                        _ => quick_xml::escape::resolve_predefined_entity(&r.xml10_content())
                            .map(str::to_string)
                            .unwrap_or_default(),
                    };
                    set(c, f, &resolved);
                }
            }
            Event::End(_) => {
                field = None;
                if current.is_some() && depth > 0 {
                    depth -= 1;
                } else if let Some(c) = current.take() {
                    // The entry's own end tag (`url` or `sitemap`).
                    if entries.len() >= MAX_ENTRIES {
                        dropped += 1;
                    } else {
                        push_entry(c, base, &mut entries, &mut issues);
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if dropped > 0 {
        issues.push(format!("{dropped} entries beyond the {MAX_ENTRIES}-entry limit were dropped"));
    }
    let kind = kind.ok_or_else(|| SitemapError::NotASitemap("nothing".into()))?;
    Ok(Sitemap { kind, entries, issues })
}

fn set(c: &mut Current, field: &str, text: &str) {
    let slot = match field {
        "loc" => &mut c.loc,
        "lastmod" => &mut c.lastmod,
        "priority" => &mut c.priority,
        _ => &mut c.changefreq,
    };
    slot.get_or_insert_with(String::new).push_str(text);
}

fn push_entry(c: Current, base: &Url, entries: &mut Vec<SitemapEntry>, issues: &mut Vec<String>) {
    let Some(raw) = c.loc else {
        issues.push("an entry without <loc> was skipped".into());
        return;
    };
    let loc = match base.join(&raw) {
        Ok(mut u) => {
            u.set_fragment(None);
            u
        }
        Err(e) => {
            issues.push(format!("bad <loc> {raw:?}: {e}"));
            return;
        }
    };
    let priority = c.priority.and_then(|p| p.parse::<f32>().ok()).filter(|p| (0.0..=1.0).contains(p));
    entries.push(SitemapEntry { loc, lastmod: c.lastmod, priority, changefreq: c.changefreq });
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn base() -> Url {
        Url::parse("http://h/sitemap.xml").unwrap()
    }

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://h/a?x=1&amp;y=2</loc><lastmod>2026-01-02</lastmod><priority>0.8</priority><changefreq>daily</changefreq></url>
  <url><loc><![CDATA[http://h/b]]></loc><priority>7</priority></url>
  <url><lastmod>2026-01-01</lastmod></url>
</urlset>"#;

    #[test]
    fn urlset_entries_with_lastmod_and_priority() {
        let s = parse_sitemap(URLSET.as_bytes(), &base()).unwrap();
        assert_eq!(s.kind, SitemapKind::UrlSet);
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.entries[0].loc.as_str(), "http://h/a?x=1&y=2");
        assert_eq!(s.entries[0].lastmod.as_deref(), Some("2026-01-02"));
        assert_eq!(s.entries[0].priority, Some(0.8));
        assert_eq!(s.entries[0].changefreq.as_deref(), Some("daily"));
        assert_eq!(s.entries[1].loc.as_str(), "http://h/b");
        assert_eq!(s.entries[1].priority, None, "out-of-range priority ignored");
        assert_eq!(s.issues.len(), 1, "the entry without loc");
    }

    #[test]
    fn an_extension_inside_an_entry_is_not_read_as_its_fields() {
        let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
            xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
          <url><loc>http://h/p</loc>
            <image:image><image:loc>http://h/p.jpg</image:loc></image:image>
            <lastmod>2026-01-02</lastmod></url>
          <url><image:image><image:loc>http://h/q.jpg</image:loc></image:image></url>
        </urlset>"#;
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        let locs: Vec<&str> = s.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(locs, ["http://h/p"], "the image's loc is neither appended nor an entry's");
        assert_eq!(s.entries[0].lastmod.as_deref(), Some("2026-01-02"), "fields after it are read");
        assert_eq!(s.issues, ["an entry without <loc> was skipped"]);
    }

    #[test]
    fn index_and_gzip() {
        let index = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <sitemap><loc>http://h/s1.xml.gz</loc><lastmod>2026-02-03</lastmod></sitemap>
            <sitemap><loc>/s2.xml</loc></sitemap></sitemapindex>"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(index.as_bytes()).unwrap();
        let s = parse_sitemap(&gz.finish().unwrap(), &base()).unwrap();
        assert_eq!(s.kind, SitemapKind::Index);
        let locs: Vec<&str> = s.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(locs, ["http://h/s1.xml.gz", "http://h/s2.xml"]);
    }

    #[test]
    fn bad_bodies_are_typed_errors() {
        assert!(
            matches!(parse_sitemap(b"<html><body>hi</body></html>", &base()), Err(SitemapError::NotASitemap(n)) if n == "html")
        );
        assert!(matches!(parse_sitemap(b"<urlset><url><loc>x</url>", &base()), Err(SitemapError::Xml(_))));
        assert!(matches!(parse_sitemap(&[0x1f, 0x8b, 0, 1, 2], &base()), Err(SitemapError::Gzip(_))));
        assert!(matches!(parse_sitemap(b"", &base()), Err(SitemapError::NotASitemap(_))));
    }

    #[test]
    fn the_entry_limit_holds() {
        let mut xml = String::from("<urlset>");
        for i in 0..(MAX_ENTRIES + 3) {
            xml.push_str(&format!("<url><loc>http://h/{i}</loc></url>"));
        }
        xml.push_str("</urlset>");
        let s = parse_sitemap(xml.as_bytes(), &base()).unwrap();
        assert_eq!(s.entries.len(), MAX_ENTRIES);
        assert!(s.issues[0].contains("3 entries beyond"));
    }
}
