//! kumo: a fast, lean, resumable web crawler and scraping framework.
//!
//! This crate is the front door: [`Crawler`] puts a crawl together (settings by name, a
//! [`Store`] for its state, outputs, a spider); the stage crates are re-exported under short
//! names so a user depends on `kumo` alone; and it holds the `kumo` command (`src/main.rs`).
//!
//! Cargo features, all on by default (the command needs every one): `redis`, `postgres`,
//! `script`, `browser`, `control` and `testsite`. With `default-features = false` the library
//! builds without their dependencies; the table says what needs which (`browser` and `control`
//! serve only the command).
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`core`] | kumo-core | Request, Response, Item, canonical URLs, fingerprints |
//! | [`frontier`] | kumo-frontier | Frontier and SeenSet traits, scope, politeness, memory backend |
//! | [`downloader`] | kumo-downloader | the HTTP client |
//! | [`parse`] | kumo-parse | the streaming link extractor, extraction models (CSS, XPath, regex, JSON) |
//! | [`pipeline`] | kumo-pipeline | the pipeline and its sinks (JSON Lines, CSV, PostgreSQL: feature `postgres`) |
//! | [`engine`] | kumo-engine | the engine, status machine, summary |
//! | [`settings`] | kumo-settings | every crawl setting, once: flags, spider-file keys, layers |
//! | [`spider`] | kumo-spider | the Collector (callbacks on elements), spiders and spider files (their `script`: feature `script`; `output.postgres`: feature `postgres`) |
//! | [`store_embedded`] | kumo-store-embedded | the default storage: a crawl state directory |
//! | [`store_redis`] | kumo-store-redis | shared storage in Redis for distributed crawls (feature `redis`) |
//! | [`testsite`] | kumo-testsite | the local test server (feature `testsite`) |

#![warn(missing_docs)]

pub use kumo_core as core;
pub use kumo_downloader as downloader;
pub use kumo_engine as engine;
pub use kumo_frontier as frontier;
pub use kumo_parse as parse;
pub use kumo_pipeline as pipeline;
pub use kumo_settings as settings;
pub use kumo_spider as spider;
pub use kumo_store_embedded as store_embedded;
#[cfg(feature = "redis")]
pub use kumo_store_redis as store_redis;
#[cfg(feature = "testsite")]
pub use kumo_testsite as testsite;

pub mod crawler;
pub mod store;
#[cfg(test)]
mod tidy;

// What most programs start from, at the top.
pub use crawler::{Crawl, Crawler, CrawlerError, Plan};
pub use kumo_engine::{CrawlConfig, Engine, Summary};
pub use kumo_spider::{Collector, Spider};
pub use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};
pub use store::Store;
