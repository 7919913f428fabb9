//! Real servers for tests, run from their installed binaries on random loopback ports, each in
//! a temporary directory that goes away with it (even when the test process dies).

mod postgres;
mod process;

pub use postgres::Postgres;
