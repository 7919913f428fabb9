//! A re-crawl round over the pages a crawl kept, as every backend that keeps them runs it
//! (`kumo crawl --recrawl`, `kumo run`): the request a page's record makes, what a round
//! queued, and the saved counters a new round starts from.

use kumo_core::{RequestKind, StoredRequest};

use crate::PageRecord;

/// What a re-crawl round queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Revisits {
    /// Pages asked for again.
    pub queued: usize,
    /// Kept pages whose re-visit interval has not run out.
    pub not_due: usize,
    /// When the first of those falls due, ms since the Unix epoch.
    pub next_due_ms: Option<u64>,
}

impl Revisits {
    /// Counts `page`, not due yet.
    pub fn wait_for(&mut self, page: &PageRecord) {
        self.not_due += 1;
        let at = page.checked_ms.saturating_add(page.interval_ms);
        self.next_due_ms = Some(self.next_due_ms.map_or(at, |n| n.min(at)));
    }

    /// Adds `other`'s counts to these, keeping the earlier of the two next due times.
    pub fn merge(&mut self, other: Revisits) {
        self.queued += other.queued;
        self.not_due += other.not_due;
        self.next_due_ms = match (self.next_due_ms, other.next_due_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

impl PageRecord {
    /// The request that asks for the page again: as it was first asked, its retries and
    /// redirects reset, knowing the hash of the body it had (so an unchanged page costs no
    /// parsing), with the validators its last answer carried when `conditional` (else none: an
    /// answer is then always a body, for a crawl that writes unchanged pages' items again).
    pub fn revisit_request(self, conditional: bool) -> StoredRequest {
        let mut request = self.request;
        request.retries = 0;
        request.redirects = 0;
        request.not_before_ms = None;
        request.kind =
            RequestKind::Revisit { hash: self.hash, bytes: self.bytes, interval_ms: self.interval_ms };
        let extra = request.extra.get_or_insert_with(Default::default);
        extra.headers.retain(|(n, _)| {
            !n.eq_ignore_ascii_case("if-none-match") && !n.eq_ignore_ascii_case("if-modified-since")
        });
        if let Some(etag) = self.etag.filter(|_| conditional) {
            extra.headers.push(("if-none-match".into(), etag.into_bytes()));
        }
        if let Some(modified) = self.last_modified.filter(|_| conditional) {
            extra.headers.push(("if-modified-since".into(), modified.into_bytes()));
        }
        request
    }
}

/// The saved counters a new round starts from, given the last ones (the engine's, opaque here
/// but for one field): none, so the round's summary counts only its own work, but for where
/// the WARC archive ends (`warc`), which the next round's files go on from.
pub fn round_counters(saved: Option<&[u8]>) -> Option<Vec<u8>> {
    let warc = saved
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .and_then(|c| c.get("warc").filter(|w| !w.is_null()).cloned())?;
    serde_json::to_vec(&serde_json::json!({ "warc": warc })).ok()
}
