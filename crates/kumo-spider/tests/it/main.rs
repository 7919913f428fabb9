//! The integration tests of `kumo-spider`, one module per subject, in one binary
//! (one link instead of one per file).

mod callbacks;
mod common;
mod config_errors;
mod extract_limits;
mod politeness_settings;
mod quotes;
mod scope_settings;
mod script_ceiling;
mod three_sinks;
mod two_sites;
mod typed_postgres;
mod xpath_callbacks;
