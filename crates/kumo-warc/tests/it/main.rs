//! The integration tests of `kumo-warc`, one module per subject, in one binary
//! (one link instead of one per file).

mod build;
mod common;
mod sample;
mod writer;
