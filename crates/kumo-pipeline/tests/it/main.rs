//! The integration tests of `kumo-pipeline`, one module per subject, in one binary
//! (one link instead of one per file).

mod csv;
mod postgres;
mod resume;
