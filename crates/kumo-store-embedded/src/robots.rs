//! The crawl's robots.txt answers in the state directory, so a resumed crawl neither asks every
//! host for its robots.txt again nor forgets a `Crawl-delay` that a kill cut off before the
//! host's record held it. Each answer is written as soon as it is fetched, before the page it
//! was fetched for leaves. They live in the `meta` keyspace under `robots/` (as the cookies
//! do, so older state directories still open): key `robots/ORIGIN`, value the expiry (Unix
//! milliseconds, 8 bytes big-endian), the status (2 bytes) and the body.
//!
//! A fetch is claimed before it goes out: `robots-claim/ORIGIN`, value the time of the claim
//! (Unix milliseconds), removed when the answer is written. A claim found on open is a fetch
//! that a kill cut off: it may have reached the host and carried a `Crawl-delay` nobody read,
//! so the origin waits out the claim (as a shared crawl waits out a dead worker's) before it
//! is asked again.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use kumo_core::dns::unix_ms;
use kumo_frontier::FrontierError;
use kumo_frontier::robots::{RobotsClaim, RobotsStore, SharedRobots};

use crate::EmbeddedStore;
use crate::error::db;

const PREFIX: &[u8] = b"robots/";
const CLAIM: &[u8] = b"robots-claim/";

fn key(origin: &str) -> Vec<u8> {
    [PREFIX, origin.as_bytes()].concat()
}

fn claim_key(origin: &str) -> Vec<u8> {
    [CLAIM, origin.as_bytes()].concat()
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

/// One process owns a state directory, so the only other fetcher is an earlier run that was
/// killed mid-fetch: a claim is the stored answer while it is trusted, "wait" while that
/// run's claim holds, else the right to fetch it (claimed in the state first).
#[async_trait]
impl RobotsStore for EmbeddedStore {
    async fn claim(&self, origin: &str, fetch_for: Duration) -> Result<RobotsClaim, FrontierError> {
        let now = unix_ms(SystemTime::now());
        let stored = self.sp.meta.get(key(origin)).map_err(db)?;
        // A damaged value is fetched again, as an expired one is.
        if let Some((expires, robots)) = stored.as_deref().and_then(decode)
            && expires > now
        {
            return Ok(RobotsClaim::Known(robots));
        }
        let claimed = self.sp.meta.get(claim_key(origin)).map_err(db)?;
        let claimed_at = claimed.as_deref().and_then(|v| Some(u64::from_be_bytes(v.try_into().ok()?)));
        let hold = u64::try_from(fetch_for.as_millis()).unwrap_or(u64::MAX);
        if claimed_at.is_some_and(|at| now < at.saturating_add(hold)) {
            return Ok(RobotsClaim::Wait);
        }
        let mut b = self.batch();
        self.sp.meta.insert(&mut b, claim_key(origin), now.to_be_bytes().to_vec());
        self.halt.commit(b, &self.dir)?;
        Ok(RobotsClaim::Fetch)
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
        self.sp.meta.remove(&mut b, claim_key(origin));
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

    /// A fetch a kill cut off holds its origin for the claim's time: the robots.txt request
    /// may have reached the host and carried a Crawl-delay that nobody read.
    #[tokio::test]
    async fn a_fetch_cut_off_by_a_kill_holds_its_origin_for_its_claim() {
        let dir = tempfile::tempdir().unwrap();
        let (origin, hold) = ("http://a.test", Duration::from_secs(30));
        {
            let store = EmbeddedStore::open(dir.path(), crate::EmbeddedConfig::default()).unwrap();
            assert_eq!(store.claim(origin, hold).await.unwrap(), RobotsClaim::Fetch);
            // Killed before the answer was shared.
        }
        let store = EmbeddedStore::open(dir.path(), crate::EmbeddedConfig::default()).unwrap();
        assert_eq!(store.claim(origin, hold).await.unwrap(), RobotsClaim::Wait, "the claim holds");
        assert_eq!(store.claim(origin, Duration::ZERO).await.unwrap(), RobotsClaim::Fetch, "until it ends");
        let r = SharedRobots { status: 200, body: b"User-agent: *\nCrawl-delay: 2\n".to_vec() };
        store.share(origin, Some(&r), hold).await.unwrap();
        assert_eq!(store.claim(origin, hold).await.unwrap(), RobotsClaim::Known(r));
        // An unavailable answer leaves neither an answer nor a claim behind.
        assert_eq!(store.claim("http://b.test", hold).await.unwrap(), RobotsClaim::Fetch);
        store.share("http://b.test", None, hold).await.unwrap();
        assert_eq!(store.claim("http://b.test", hold).await.unwrap(), RobotsClaim::Fetch);
    }
}
