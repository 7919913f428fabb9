//! WARC/1.1 output (ISO 28500) for kumo: the records of each HTTP exchange, written to rolling
//! `.warc.gz` files with a CDXJ index beside each.
//!
//! - [`build`] turns an [`Exchange`] into [`Records`]: a `response` (or a `revisit`, see
//!   [`Revisit`]), its `request`, and a `metadata` record of its outlinks, each its own gzip
//!   member. It is pure and cheap, so the crawler can call it on its workers.
//! - [`WarcWriter`] appends them to `{prefix}-{YYYYMMDDhhmmss}-{seq:05}.warc.gz` files, each
//!   started by a `warcinfo` record, rolled over at a size, written as `.open` and renamed on
//!   close, when the CDXJ index (`….cdxj`) is written. It resumes at a [`WarcPosition`]
//!   the crawler committed, cutting off whatever was appended after it.
//! - The index lines are computed by [`build`], which has their fields at hand, and sorted
//!   when the file closes; reading a file back to index it would cost about as much CPU as
//!   writing it did, so that is left for files a crash interrupted.
//! - [`read_records`] and [`WarcReader`] read a file back, strictly; [`surt`] computes the
//!   url keys of the index as pywb does.
//!
//! The HTTP records are reconstructed from the client's view, not captured from the wire (see
//! `http_head`): the payload is stored as received minus its transfer coding, so
//! WARC-Payload-Digest is the SHA-1 of the entity body with its content coding, as the WARC
//! specification settled (iipc/warc-specifications#22).
//!
//! Cost: `build` runs on the crawler's workers, so it is kept to one SHA-1 pass per digest and
//! one copy of the payload (into the deflater), with one compressor per thread reused across
//! records (`gzip`); `benches/build.rs` measures it.
//!
//! Architecture invariant: nothing here does network I/O or knows the crawler's types; the
//! writer never syncs on its own except when it closes a file.

#![warn(missing_docs)]

mod cdxj;
mod date;
mod digest;
mod error;
mod exchange;
mod files;
mod gzip;
mod http_head;
mod reader;
mod record_id;
mod records;
mod surt;
mod warc_head;
mod warcinfo;
mod writer;

pub use cdxj::index_lines;
pub use digest::sha1_digest;
pub use error::WarcError;
pub use exchange::{Exchange, Revisit};
pub use reader::{Record, RecordInfo, WarcReader, read_records};
pub use records::{RecordOptions, Records, build};
pub use surt::surt;
pub use writer::{DEFAULT_MAX_FILE_BYTES, WarcConfig, WarcPosition, WarcWriter};
