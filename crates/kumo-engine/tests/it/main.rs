//! The integration tests of `kumo-engine`, one module per subject, in one binary
//! (one link instead of one per file).

mod auto_throttle;
mod common;
mod cookies;
mod lifecycle;
mod listeners;
mod outputs;
mod parser_errors;
mod politeness;
mod quotes_site;
mod redirect_failures;
mod registrar;
mod retries;
mod sitemaps;
mod steer_links;
mod synthetic_site;
mod traps;
