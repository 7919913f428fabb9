//! robots.txt shared by the workers of a crawl: the first worker that needs an origin's
//! rules claims and fetches them, the others wait a moment and read what it shared.

use std::time::Duration;

use async_trait::async_trait;
use kumo_frontier::FrontierError;
use kumo_frontier::robots::{RobotsClaim, RobotsStore, SharedRobots};

use crate::call::{array, bytes, int};
use crate::config::millis;
use crate::{RedisFrontier, RedisStoreError};

#[async_trait]
impl RobotsStore for RedisFrontier {
    async fn claim(&self, origin: &str, fetch_for: Duration) -> Result<RobotsClaim, FrontierError> {
        let mut a = self.args("robots_claim");
        a.s(origin).n(millis(fetch_for).max(1));
        let mut reply = array(self.call(&a).await?)?.into_iter();
        let code = reply.next().map(|v| int(&v)).transpose()?.unwrap_or(2);
        match (code, reply.next()) {
            (1, Some(v)) => {
                let v = bytes(v)?;
                let bad = || RedisStoreError::Protocol(format!("shared robots.txt of {origin}"));
                let nl = v.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
                let status =
                    std::str::from_utf8(&v[..nl]).ok().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
                Ok(RobotsClaim::Known(SharedRobots { status, body: v[nl + 1..].to_vec() }))
            }
            (3, _) => Ok(RobotsClaim::Wait),
            _ => Ok(RobotsClaim::Fetch),
        }
    }

    async fn share(
        &self,
        origin: &str,
        robots: Option<&SharedRobots>,
        ttl: Duration,
    ) -> Result<(), FrontierError> {
        let mut a = self.args("robots_share");
        a.s(origin);
        match robots {
            Some(r) => a.b(&[format!("{}\n", r.status).as_bytes(), &r.body[..]].concat()),
            None => a.s(""),
        };
        a.n(millis(ttl).max(1));
        self.call(&a).await?;
        Ok(())
    }
}
