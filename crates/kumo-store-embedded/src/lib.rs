//! kumo's default storage: the whole crawl state in an embedded database (fjall) in a state
//! directory, so a crawl killed at any moment resumes with nothing lost or duplicated.
//!
//! - [`EmbeddedStore`] is a [`Frontier`](kumo_frontier::Frontier): per-host queues that spill
//!   to disk, leases, the seen set (all 128 fingerprint bits, exact, in memory at under 16
//!   bytes a URL and on disk), the failure queue, per-host politeness state and the crawl's
//!   counters. Each scheduler commit is one atomic write batch.
//! - It is also the [`ItemJournal`](kumo_pipeline::ItemJournal) the pipeline resumes from,
//!   and the [`CookieStorage`](kumo_core::CookieStorage) the crawl's cookie jar writes
//!   through to (`cookies.rs`), so cookies survive a restart.
//! - Inspection and surgery on a stopped crawl's state (`inspect.rs`): queue statistics, the
//!   queue and the failures as JSON lines, requests imported ([`read_requests`]), failures
//!   put back in the queue; [`check_state`] checks a state without changing it.
//! - [`dir`] guards the state directory: its format marker, and clear errors for foreign,
//!   damaged or incompatible directories (kumo never silently starts over); [`StateLock`]
//!   keeps every other process out of it, taken before anything in it is read or deleted.

#![warn(missing_docs)]

mod check;
mod cookies;
pub mod dir;
mod dns;
mod error;
mod frontier;
mod halt;
mod hosts;
mod import;
mod inspect;
mod item_log;
mod journal;
mod keys;
mod lock;
mod migrate;
mod outputs;
mod part;
mod preflight;
mod robots;
mod store;
mod wal_check;

pub use check::{StateReport, check_state};
pub use error::StoreError;
pub use import::{ImportError, parse_line, read_requests};
pub use inspect::{DepthCount, HostCount, PausedHost, PriorityCount, QueueStats};
pub use kumo_frontier::Revisits;
pub use kumo_frontier::{RequeueReport, StoredFailure};
pub use lock::StateLock;
pub use store::{Durability, EmbeddedConfig, EmbeddedStore};
