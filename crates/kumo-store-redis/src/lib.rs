//! kumo's shared storage for distributed crawls: many worker processes, on one machine or
//! many, crawl as one through a Redis server.
//!
//! - [`RedisFrontier`] implements the [`kumo_frontier::Frontier`] every backend implements
//!   (the conformance suite runs against a real `redis-server`), and the
//!   [`kumo_pipeline::ItemJournal`] that makes each worker's outputs exactly-once, and the
//!   [`kumo_frontier::robots::RobotsStore`] through which the workers fetch each origin's
//!   robots.txt once between them.
//! - Everything that changes the crawl is one call of one Lua script (`frontier.lua`), atomic
//!   in Redis and idempotent under retry; times are Redis's clock, so politeness and lease
//!   expiry hold across workers whatever their clocks say.
//! - A lease stays in Redis until its completion commits. A worker that dies stops
//!   heartbeating and its leases go back after `dead_after`; a worker restarted under the same
//!   name takes them back at once; a lease nobody completes comes back after `lease_ttl`.
//! - Redis going away pauses the worker: every call is retried (the same call, so applied
//!   once) for up to `outage_wait`.
//! - A crawl has an id, written by the worker that created it, and every call of a worker
//!   carries the id it joined: a worker whose crawl's keys vanished (Redis restarted without
//!   persistence, a flush) or were cleared by `--fresh` stops with an error that says which
//!   ([`RedisStoreError::StateLost`], [`RedisStoreError::Cleared`]), never starting the crawl
//!   over on its own.

#![warn(missing_docs)]

mod call;
mod commit;
mod config;
mod error;
mod frontier;
mod heartbeat;
mod inspect;
mod journal;
mod lease;
mod member;
mod reserve;
mod revisit;
mod robots;
mod settings;

pub use config::RedisConfig;
pub use error::{RedisStoreError, StateGone};
pub use frontier::{Joined, RedisFrontier};
pub use revisit::RoundStart;
