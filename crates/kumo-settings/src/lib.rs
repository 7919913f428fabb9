//! kumo's settings, defined once.
//!
//! Every crawl setting is one entry of a table ([`SETTINGS`]): its spider-file key (its flag is
//! the key with `-` for `_`), one line of documentation, its kind, its default, whether a
//! resumed crawl may change it, and its old spellings. The front-ends only fill [`Layer`]s —
//! the command line (`SettingArgs`, feature `clap`), a spider file's crawl-wide keys and its
//! `[[site]]` tables, a library call (`layer.set("delay", "250ms")`) — and [`Settings::resolve`]
//! stacks them (defaults < file < site < library < flags) into the `CrawlConfig` the engine
//! runs on.
//!
//! A crawl's state keeps its [`Record`]; a resumed crawl takes the changes of settings marked
//! free and refuses those of fixed ones, by name ([`Record::compare`]).
//!
//! Options that are not crawl settings (where the state lives, what the command prints) stay
//! with the command; [`COMMAND_ONLY`] says why each has no spider-file key.

#![warn(missing_docs)]

#[cfg(feature = "clap")]
mod cli;
mod entries;
mod error;
mod kind;
mod layer;
mod record;
mod resolve;
mod table;

#[cfg(feature = "clap")]
pub use cli::SettingArgs;
pub use entries::{COMMAND_ONLY, MAX_CONCURRENCY, MAX_DELAY, SETTINGS};
pub use error::SettingError;
pub use kind::{Kind, Value};
pub use layer::{Layer, Source};
pub use record::{Change, Comparison, Record, STARTS};
pub use resolve::Settings;
pub use table::{Found, Group, Old, OldUnit, Resume, Setting, by_flag, by_key, nearest, setting};
