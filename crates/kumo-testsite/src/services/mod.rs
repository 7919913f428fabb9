//! Real servers for tests, run from their installed binaries on random loopback ports, each in
//! a temporary directory that goes away with it (even when the test process dies).

mod postgres;
mod process;
mod redis;

pub use postgres::Postgres;
pub use redis::{Appendfsync, Redis, RedisOptions};
