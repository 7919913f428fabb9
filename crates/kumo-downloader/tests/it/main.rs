//! The integration tests of `kumo-downloader`, one module per subject, in one binary
//! (one link instead of one per file).

mod dns;
mod fetch;
mod http_cache;
