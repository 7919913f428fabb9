//! The integration tests of `kumo-store-redis`, one module per subject, in one binary
//! (one link instead of one per file).

mod common;
mod conformance;
mod deadlines;
mod journal;
mod recrawl;
mod reserve;
mod state_loss;
mod workers;
