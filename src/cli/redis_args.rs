//! `--redis` and the flags that go with it: a crawl kept in Redis, for `kumo crawl` (among its
//! state options) and `kumo run` alike.

use clap::Args;

/// `--dead-after`'s default, in seconds.
const DEAD_AFTER_SECS: f64 = 15.0;
/// `--redis-wait`'s default, in seconds.
const REDIS_WAIT_SECS: f64 = 300.0;

/// Where a crawl in Redis is, and this worker's part in it.
#[derive(Args, Debug, Clone)]
pub struct RedisArgs {
    /// Keep the crawl in Redis (`redis://HOST:PORT/DB` or `redis+unix:///PATH`) instead of a
    /// state directory: every worker started with the same command joins the same crawl, on
    /// one machine or many (`kumo crawl --fresh` deletes the crawl's keys first). For `kumo
    /// run`, each run is a re-crawl round that daemons given the same files and URL share, and
    /// the schedule records stay in --state.
    #[arg(long = "redis", id = "redis", value_name = "URL")]
    pub url: Option<String>,
    /// With --redis: the crawl's name (default: derived from the start URLs or the spider
    /// file, as the state directory is); a spider file's sites are crawls NAME/SITE.
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub crawl: Option<String>,
    /// With --redis: this worker's name (default: the host name and the output). A worker
    /// restarted with the same name takes up its leases and its outputs at once.
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub worker: Option<String>,
    /// With --redis: a worker whose heartbeat stopped this long ago is dead, and the requests
    /// it held go to the others.
    #[arg(long, value_name = "SECS", default_value_t = DEAD_AFTER_SECS, requires = "redis")]
    pub dead_after: f64,
    /// With --redis: how long a worker waits for Redis to come back (pausing its crawl, keeping
    /// what it fetched) before it exits with an error.
    #[arg(long, value_name = "SECS", default_value_t = REDIS_WAIT_SECS, requires = "redis")]
    pub redis_wait: f64,
}

/// No Redis, and the flags' own defaults: what `StateArgs { .. Default::default() }` built in
/// code means is what the command line means without the flags.
impl Default for RedisArgs {
    fn default() -> Self {
        RedisArgs {
            url: None,
            crawl: None,
            worker: None,
            dead_after: DEAD_AFTER_SECS,
            redis_wait: REDIS_WAIT_SECS,
        }
    }
}
