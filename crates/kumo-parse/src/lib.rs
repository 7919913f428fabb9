//! kumo's parsers. Today: the streaming link extractor, the crawler's fast path from a fetched
//! page to the next requests: one pass over the bytes that follows the HTML tokenizer (no DOM,
//! no tokens, nothing allocated per link but the resulting [`Url`](url::Url)).
//!
//! ```
//! use kumo_parse::extract_links;
//!
//! let page = url::Url::parse("http://example.com/a/index.html").unwrap();
//! let html = br#"<title>Shop &amp; more</title><a href="b.html#top">b</a><a href="mailto:x@y">m</a>"#;
//! let found = extract_links(html, &page, encoding_rs::UTF_8);
//! assert_eq!(found.links[0].as_str(), "http://example.com/a/b.html");
//! assert_eq!(found.links.len(), 1);
//! assert_eq!(found.title.as_deref(), Some("Shop & more"));
//! ```
//!
//! The [`extract`] module adds declarative extraction models: named fields found with CSS,
//! XPath, regex or JSONPath selectors, read from spider files or built in Rust. The
//! [`sitemap`] module reads sitemaps and sitemap indexes (plain or gzipped).
//!
//! Architecture invariant: parsing never fails. Whatever the bytes, [`extract_links`] returns
//! the links it could find, and problems travel as [`PageLinks::issues`].

#![warn(missing_docs)]

mod entities;
pub mod extract;
mod issue;
mod links;
mod resolve;
mod scan;
pub mod sitemap;
pub(crate) mod title;

pub use extract::{CompiledModel, Extraction, Model, ModelError, extract_all};
pub use links::{PageLinks, extract_links};
pub use sitemap::{Sitemap, SitemapEntry, SitemapError, SitemapKind, parse_sitemap};
pub use title::TITLE_MAX_CHARS;
