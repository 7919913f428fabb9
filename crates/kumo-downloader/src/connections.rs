//! The bound on connections in use at once (`--max-connections`), shared by every downloader
//! of a crawl. Each exchange holds one permit from before its request leaves until its body
//! is read, so with keep-alive off (a broad crawl's default) it bounds the crawl's sockets to
//! servers. Idle kept-alive connections hold none: reqwest's pool neither reports nor yields
//! them, so they come on top, at most `pool_idle_per_host` per host for `keep_alive`.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The share of the open-file limit the default bound takes: the rest is left for the
/// state's files, the control server's connections and the renderer's pipes.
const SHARE_OF_OPEN_FILES: u64 = 2;

/// The least default bound, whatever the open-file limit says.
const LEAST_DEFAULT: usize = 16;

/// The bound on connections in use at once, shared (`Arc`) by the downloaders given it in
/// [`DownloaderConfig::connections`](crate::DownloaderConfig::connections).
#[derive(Debug)]
pub struct ConnectionLimit {
    permits: Arc<Semaphore>,
    max: usize,
}

impl ConnectionLimit {
    /// At most `max` connections in use at once (at least 1).
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        ConnectionLimit { permits: Arc::new(Semaphore::new(max)), max }
    }

    /// The default bound: half of this process's open-file limit (its soft limit, which the
    /// command raises to the hard one first) once `reserved` files are set aside (the DNS
    /// resolver's sockets), at least 16; `None` when the limit is unknown or unlimited.
    pub fn from_open_files(reserved: u64) -> Option<Self> {
        let (soft, _) = rlimit::Resource::NOFILE.get().ok()?;
        if soft == rlimit::INFINITY {
            return None;
        }
        let share =
            usize::try_from(soft.saturating_sub(reserved) / SHARE_OF_OPEN_FILES).unwrap_or(usize::MAX);
        Some(Self::new(share.max(LEAST_DEFAULT)))
    }

    /// The most connections in use at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Waits for a connection to be free; the permit is held for the exchange.
    pub(crate) async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        // The semaphore is never closed: `None` cannot happen.
        self.permits.clone().acquire_owned().await.ok()
    }

    /// Connections in use now.
    pub fn in_use(&self) -> usize {
        self.max - self.permits.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_permit_is_held_until_dropped() {
        let limit = ConnectionLimit::new(1);
        let first = limit.acquire().await;
        assert_eq!(limit.in_use(), 1);
        let second = tokio::time::timeout(std::time::Duration::from_millis(20), limit.acquire()).await;
        assert!(second.is_err(), "a second exchange waits while the only connection is in use");
        drop(first);
        let _again = limit.acquire().await;
        assert_eq!(limit.in_use(), 1);
    }

    #[test]
    fn the_default_is_half_the_open_files_left() {
        let (soft, _) = rlimit::Resource::NOFILE.get().unwrap();
        let limit = ConnectionLimit::from_open_files(128).unwrap();
        assert_eq!(limit.max(), usize::try_from(soft.saturating_sub(128) / 2).unwrap().max(LEAST_DEFAULT));
    }
}
