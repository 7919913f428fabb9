//! The integration tests of `kumo-parse`, one module per subject, in one binary
//! (one link instead of one per file).

mod extract_definitions;
mod extract_hostile;
mod extract_json;
mod extract_limits;
mod extract_quotes;
mod linkextractor_fixtures;
mod links;
