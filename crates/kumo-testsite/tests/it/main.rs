//! The integration tests of `kumo-testsite`, one module per subject, in one binary
//! (one link instead of one per file).

mod common;
mod directory;
mod dns;
mod fixtures;
mod hostile;
mod record;
mod redis_service;
mod synthetic;
mod validators;
