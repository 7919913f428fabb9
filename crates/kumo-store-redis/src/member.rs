//! Whether this worker is still in its crawl. Once a call or the heartbeat learns it is not
//! (another process took its name, `--fresh` cleared the crawl, or the crawl's keys vanished
//! from Redis), every later call fails the same way without reaching Redis: the worker writes
//! nothing more there, and never starts the crawl over on its own.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::{RedisConfig, RedisStoreError};

const IN: u8 = 0;
const SUPERSEDED: u8 = 1;
const CLEARED: u8 = 2;
const LOST: u8 = 3;

/// Why this worker is out of its crawl, once it is: the first reason learned stays.
#[derive(Debug, Default)]
pub(crate) struct Membership(AtomicU8);

impl Membership {
    /// Notes `e` if it says this worker is out of its crawl (and says so once in the log);
    /// true if it does.
    pub(crate) fn note(&self, e: &RedisStoreError) -> bool {
        let why = match e {
            RedisStoreError::Superseded(_) => SUPERSEDED,
            RedisStoreError::Cleared(_) => CLEARED,
            RedisStoreError::StateLost(_) => LOST,
            _ => return false,
        };
        if self.0.compare_exchange(IN, why, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            tracing::error!(error = %e, "this worker is out of its crawl; stopping");
        }
        true
    }

    /// Whether this worker is out of its crawl.
    pub(crate) fn is_out(&self) -> bool {
        self.0.load(Ordering::Relaxed) != IN
    }

    /// Fails, as the call that learned it did, once this worker is out of its crawl.
    pub(crate) fn check(&self, cfg: &RedisConfig) -> Result<(), RedisStoreError> {
        match self.0.load(Ordering::Relaxed) {
            IN => Ok(()),
            SUPERSEDED => {
                Err(RedisStoreError::Superseded(format!("worker {} is no longer in the crawl", cfg.worker)))
            }
            CLEARED => Err(RedisStoreError::Cleared(cfg.prefix())),
            _ => Err(RedisStoreError::StateLost(cfg.prefix())),
        }
    }
}
