//! The integration tests of `kumo-script`, one module per subject, in one binary
//! (one link instead of one per file).

mod aborts;
mod fuzz;
mod huge_arrays;
mod isolation;
mod sandbox;
