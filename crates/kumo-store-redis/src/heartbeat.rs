//! The worker's heartbeat: on its own connection, so a slow reply on the crawl's connection
//! never makes a live worker look dead.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::call::{Args, Conn, Script, text};
use crate::member::Membership;
use crate::{RedisConfig, RedisStoreError};

/// Beats `dead_after / 5` apart, so several beats can be missed (a slow disk, a busy
/// machine) before the worker counts as dead.
pub(crate) fn interval(dead_after: Duration) -> Duration {
    (dead_after / 5).max(Duration::from_millis(50))
}

pub(crate) async fn spawn(
    cfg: &RedisConfig,
    inc: &str,
    crawl_id: &str,
    script: Arc<Script>,
    membership: Arc<Membership>,
) -> Result<JoinHandle<()>, RedisStoreError> {
    // An outage is waited out here beat by beat: the worker's own calls say when it is over.
    let conn = Conn::open(&cfg.url, cfg.prefix(), cfg.outage_wait).await?;
    let every = interval(cfg.dead_after);
    let mut args = Args::bare("heartbeat", inc, crawl_id);
    args.s(&cfg.worker).n(crate::config::millis(cfg.dead_after));
    let worker = cfg.worker.clone();
    Ok(tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match conn.call(&script, &args).await.and_then(text) {
                Ok(s) if s == "superseded" => {
                    let why = format!("worker {worker} is no longer in the crawl");
                    membership.note(&RedisStoreError::Superseded(why));
                    return;
                }
                Ok(_) => {}
                // The crawl's keys vanished, or `--fresh` cleared it: the worker's next call
                // fails without reaching Redis.
                Err(e) if membership.note(&e) => return,
                Err(e) => tracing::warn!(error = %e, "heartbeat failed"),
            }
        }
    }))
}
