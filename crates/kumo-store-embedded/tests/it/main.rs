//! The integration tests of `kumo-store-embedded`, one module per subject, in one binary
//! (one link instead of one per file).

mod common;
mod conformance;
mod cookies;
mod corrupt;
mod inspect;
mod migrate;
