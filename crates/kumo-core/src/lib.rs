//! kumo's vocabulary: the types every stage speaks, and nothing that does I/O.
//!
//! A [`Request`] travels from the frontier to the downloader, which turns it into a [`Response`];
//! parsers turn responses into more requests and [`Item`]s. De-duplication works on
//! [`Fingerprint`]s of the canonical ([`canonical`]) form of a request, never on raw strings.
//! Module identity and counters ([`module`]) follow the gopcp webcrawler seeds.

#![warn(missing_docs)]

pub mod canonical;
pub mod charset;
pub mod cookies;
pub mod dns;
pub mod fingerprint;
pub mod item;
pub mod module;
pub mod outcome;
pub mod request;
pub mod response;
pub mod stored;

pub use canonical::{CanonicalOptions, canonicalize};
pub use cookies::{CookieStorage, CookieStorageError, MemoryCookieStorage, StoredCookie};
pub use dns::{AnswerStorage, AnswerStorageError, DnsErrorKind, StoredAnswer, StoredOutcome};
pub use fingerprint::{DedupMode, Fingerprint};
pub use item::Item;
pub use module::{CounterSnapshot, ModuleCounters, ModuleId, ModuleKind, ModuleSummary};
pub use outcome::{ErrorKind, SkipReason, Stage};
pub use request::{Priority, Request, RequestKind, UserData};
pub use response::{BadRedirect, Response, Wire};
pub use stored::{StoredExtra, StoredRequest, StoredRequestError};

/// Re-exported so users of kumo name the same `Url`, `Method` and header types as kumo does.
pub use bytes::Bytes;
pub use http::{HeaderMap, Method, StatusCode};
pub use url::Url;
