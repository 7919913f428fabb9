//! What the hosts came to, for the summary of a broad crawl: known, with work left, crawled,
//! failed, and the addresses they are on. A host keeps one byte of outcomes for it.

use super::HostTable;
use crate::HostFigures;

/// A request to the host was completed this run (a page, or one robots.txt refused).
const FETCHED: u8 = 1;
/// A request to the host failed for good this run.
const FAILED: u8 = 2;

impl HostTable {
    /// Notes how a request to host `i` ended: completed (`fetched`), or failed for good.
    pub fn note_outcome(&mut self, i: usize, fetched: bool) {
        self.hosts[i].outcomes |= if fetched { FETCHED } else { FAILED };
    }

    /// Counts the hosts; walks every one of them.
    pub fn host_figures(&self) -> HostFigures {
        let mut f =
            HostFigures { known: self.hosts.len(), addresses: self.addresses(), ..HostFigures::default() };
        for h in &self.hosts {
            f.with_work += usize::from(h.queued > 0 || h.in_flight > 0);
            f.crawled += usize::from(h.outcomes & FETCHED != 0);
            f.failed += usize::from(h.outcomes == FAILED);
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::Politeness;

    #[test]
    fn hosts_are_counted_by_what_their_requests_came_to() {
        let now = Instant::now();
        let mut t = HostTable::new(Politeness::default(), std::time::Duration::from_secs(60), usize::MAX);
        for key in ["a.test", "b.test", "c.test", "d.test"] {
            t.host_for(key, now);
        }
        t.note_outcome(0, true);
        t.note_outcome(1, false);
        t.note_outcome(2, false);
        t.note_outcome(2, true);
        let f = t.host_figures();
        assert_eq!((f.known, f.with_work, f.crawled, f.failed, f.addresses), (4, 0, 2, 1, 0));
    }
}
