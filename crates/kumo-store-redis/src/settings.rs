//! The crawl's settings record, kept in Redis beside its meta for the next worker to compare
//! with, and a politeness change a resumed crawl brings, applied to the hosts already known.

use std::time::Duration;

use redis::Value;

use crate::call::{Conn, text};
use crate::config::{policy_index, policy_specs};
use crate::{RedisConfig, RedisFrontier, RedisStoreError};

impl RedisFrontier {
    /// The settings record kept with the crawl `crawl` (`kumo_settings::Record` as JSON), if
    /// the crawl exists and its workers kept one. Read before joining, so a worker whose
    /// settings are refused never registers.
    pub async fn settings_record(url: &str, crawl: &str) -> Result<Option<String>, RedisStoreError> {
        let cfg = RedisConfig::new(url, crawl, "");
        let conn = Conn::open(url, cfg.prefix(), Duration::from_secs(10)).await?;
        let mut get = redis::cmd("HGET");
        get.arg(format!("{}meta", cfg.prefix())).arg("settings");
        match conn.command(&get).await? {
            Value::Nil => Ok(None),
            v => Ok(Some(text(v)?)),
        }
    }

    /// Keeps `record` as the crawl's settings. With `politeness_changed`, the crawl's
    /// policies become this worker's and every known host takes its rule's new parallelism,
    /// delay and rate limits (its Crawl-delay floor, learned delay and pauses stay); returns
    /// how many hosts were changed.
    pub async fn keep_settings_record(
        &self,
        record: &str,
        politeness_changed: bool,
    ) -> Result<u64, RedisStoreError> {
        let prefix = self.cfg.prefix();
        let mut set = redis::cmd("HSET");
        set.arg(format!("{prefix}meta")).arg("settings").arg(record);
        self.conn.command(&set).await?;
        if !politeness_changed {
            return Ok(0);
        }
        let specs = policy_specs(&self.cfg.politeness);
        let mut pol = redis::cmd("HSET");
        pol.arg(format!("{prefix}pol"));
        for (i, s) in specs.iter().enumerate() {
            pol.arg(i).arg(s);
        }
        self.conn.command(&pol).await?;
        let mut changed = 0;
        for host in self.set_members(&format!("{prefix}hosts")).await? {
            let spec = &specs[policy_index(&self.cfg.politeness, &host).min(specs.len() - 1)];
            let mut parts = spec.splitn(4, '|');
            let mut h = redis::cmd("HSET");
            h.arg(format!("{prefix}h:{host}"));
            for field in ["par", "d", "rd", "rl"] {
                h.arg(field).arg(parts.next().unwrap_or(""));
            }
            self.conn.command(&h).await?;
            changed += 1;
        }
        Ok(changed)
    }
}
