//! What is queued for one host, in the order it goes out (`/api/frontier?host=`): its best
//! level first, each level's buffered head and then what it spilled, read back from storage
//! without moving the level's cursor; then the requests backing off, soonest first.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kumo_core::{RequestKind, StoredRequest};
use serde::Serialize;

use super::{HostTable, Refill};
use crate::FrontierError;

/// One host's queue as a running crawl shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostQueue {
    /// The host's key (`host[:port]`).
    pub host: String,
    /// Requests queued, those backing off included.
    pub queued: usize,
    /// Leased (with Redis: or held in a worker's reserve, so not queued there).
    pub in_flight: usize,
    /// Retried requests waiting out their back-off.
    pub backing_off: usize,
    /// The next requests it hands out, at most as many as asked for.
    pub next: Vec<QueuedRequest>,
}

/// A queued request, without its headers and body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuedRequest {
    /// The URL to fetch.
    pub url: String,
    /// Links followed from a start URL (which is depth 0).
    pub depth: u32,
    /// Higher goes first.
    pub priority: i32,
    /// Times it was retried so far.
    pub retries: u32,
    /// `page`, `sitemap` or `revisit`.
    pub kind: &'static str,
    /// A retried request waits out its back-off until then (Unix milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_before_ms: Option<u64>,
}

impl From<&StoredRequest> for QueuedRequest {
    fn from(r: &StoredRequest) -> Self {
        QueuedRequest {
            url: r.url.to_string(),
            depth: r.depth,
            priority: r.priority,
            retries: r.retries,
            kind: match r.kind {
                RequestKind::Page => "page",
                RequestKind::Sitemap { .. } => "sitemap",
                RequestKind::Revisit { .. } => "revisit",
            },
            not_before_ms: r.not_before_ms,
        }
    }
}

/// `at` as Unix milliseconds, `now` being the same moment as `wall`.
fn unix_ms(at: Instant, now: Instant, wall: SystemTime) -> u64 {
    let t = if at >= now { wall.checked_add(at - now) } else { wall.checked_sub(now - at) };
    let t = t.unwrap_or(UNIX_EPOCH);
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl HostTable {
    /// The queue of host `key` (`None` if the table does not know it), with its next `max`
    /// requests; `refill` reads spilled entries as leasing does, but nothing is moved.
    pub fn peek(
        &self,
        key: &str,
        max: usize,
        refill: &mut Refill<'_>,
    ) -> Result<Option<HostQueue>, FrontierError> {
        let Some(i) = self.host_index(key) else { return Ok(None) };
        let h = &self.hosts[i];
        let (now, wall) = (Instant::now(), SystemTime::now());
        let mut next = Vec::new();
        for (prio, level) in h.levels.iter() {
            if next.len() >= max {
                break;
            }
            for e in level.buf.iter().take(max - next.len()) {
                let mut q = QueuedRequest::from(&e.request);
                q.not_before_ms = e.not_before.map(|t| unix_ms(t, now, wall)).or(q.not_before_ms);
                next.push(q);
            }
            let want =
                max.saturating_sub(next.len()).min(usize::try_from(level.spilled).unwrap_or(usize::MAX));
            if want > 0 {
                next.extend(
                    refill(i, prio, level.cursor, want)?.iter().map(|e| QueuedRequest::from(&e.request)),
                );
            }
        }
        for (&(at, _), e) in h.backoff().take(max.saturating_sub(next.len())) {
            let mut q = QueuedRequest::from(&e.request);
            q.not_before_ms = Some(unix_ms(at, now, wall));
            next.push(q);
        }
        Ok(Some(HostQueue {
            host: h.key.to_string(),
            queued: h.queued,
            in_flight: h.in_flight as usize,
            backing_off: h.backing_off(),
            next,
        }))
    }
}
