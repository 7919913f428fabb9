//! The crawl's robots.txt answers in the state directory, so a resumed crawl neither asks every
//! host for its robots.txt again nor forgets a `Crawl-delay` that a kill cut off before the
//! host's record held it. Each answer is written as soon as it is fetched, before the page it
//! was fetched for leaves. They live in the `meta` keyspace under `robots/` (as the cookies
//! do, so older state directories still open): key `robots/ORIGIN`, value the expiry (Unix
//! milliseconds, 8 bytes big-endian), the status (2 bytes) and the body.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use kumo_frontier::FrontierError;
use kumo_frontier::robots::{RobotsClaim, RobotsStore, SharedRobots};

use crate::EmbeddedStore;
use crate::error::db;

const PREFIX: &[u8] = b"robots/";

fn key(origin: &str) -> Vec<u8> {
    [PREFIX, origin.as_bytes()].concat()
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn encode(expires_ms: u64, r: &SharedRobots) -> Vec<u8> {
    let mut v = Vec::with_capacity(10 + r.body.len());
    v.extend_from_slice(&expires_ms.to_be_bytes());
    v.extend_from_slice(&r.status.to_be_bytes());
    v.extend_from_slice(&r.body);
    v
}

/// The expiry and the answer, or `None` for a value too short to be one.
fn decode(v: &[u8]) -> Option<(u64, SharedRobots)> {
    let expires = u64::from_be_bytes(v.get(..8)?.try_into().ok()?);
    let status = u16::from_be_bytes(v.get(8..10)?.try_into().ok()?);
    Some((expires, SharedRobots { status, body: v[10..].to_vec() }))
}

/// One process owns a state directory, so nobody else is ever fetching an answer: a claim is
/// the stored answer while it is trusted, else the right to fetch it.
#[async_trait]
impl RobotsStore for EmbeddedStore {
    async fn claim(&self, origin: &str, _fetch_for: Duration) -> Result<RobotsClaim, FrontierError> {
        let stored = self.sp.meta.get(key(origin)).map_err(db)?;
        // A damaged value is fetched again, as an expired one is.
        match stored.as_deref().and_then(decode) {
            Some((expires, robots)) if expires > unix_ms(SystemTime::now()) => Ok(RobotsClaim::Known(robots)),
            _ => Ok(RobotsClaim::Fetch),
        }
    }

    async fn share(
        &self,
        origin: &str,
        robots: Option<&SharedRobots>,
        ttl: Duration,
    ) -> Result<(), FrontierError> {
        let mut b = self.batch();
        match robots {
            Some(r) => self.sp.meta.insert(&mut b, key(origin), encode(unix_ms(SystemTime::now() + ttl), r)),
            // Nothing worth keeping (robots.txt unavailable): an older answer is not trusted
            // over what the host says now.
            None => self.sp.meta.remove(&mut b, key(origin)),
        }
        self.halt.commit(b, &self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_back_and_a_short_value_is_none() {
        let r = SharedRobots { status: 200, body: b"User-agent: *\nCrawl-delay: 2\n".to_vec() };
        let (expires, back) = decode(&encode(42, &r)).unwrap();
        assert_eq!((expires, back), (42, r));
        assert!(decode(&[0; 9]).is_none());
    }
}
