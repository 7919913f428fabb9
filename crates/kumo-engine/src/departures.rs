//! Spacing kept where requests leave. The frontier spaces a host's leases, but a lease may
//! wait in the downloaders' queue (behind parsers that are slow to take pages) and leave late;
//! the next request to its host, leased on time, would then reach the server too soon after
//! it. So each host's last departure is noted here, and a request that would leave closer to
//! it than its host's spacing waits out the rest; with per-IP politeness, its address's too.
//! A host that takes one request at a time counts its spacing from its last response instead
//! (`note_response`), as a request's way to its server varies (a new connection is slower);
//! an address counts its gap from its last response too, unless a request left since.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kumo_frontier::Lease;

/// Departures noted between two prunings of the hosts whose spacing has passed.
const PRUNE_EVERY: usize = 4096;

/// A spacing with the margin the frontier spaces leases by (`HostPolicy::next_gap`: 5 % of
/// it, at most 20 ms), for what still comes between a departure and the server: the gate then
/// holds only a request whose lease left late, and waiting on politeness stays the frontier's,
/// where the summary counts it.
fn with_margin(spacing: Duration) -> Duration {
    spacing + (spacing / 20).min(Duration::from_millis(20))
}

#[derive(Default)]
pub(crate) struct Departures {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Each paced host's last departure (or the turn reserved for its next).
    last: HashMap<Arc<str>, Instant>,
    /// The longest spacing seen: a departure older than this constrains nothing.
    longest: Duration,
    noted: usize,
}

impl Departures {
    /// Waits until `lease`'s request may leave: its host's spacing and, with per-IP
    /// politeness, its address's gap after their last departures. No wait for an unpaced one.
    pub async fn wait_for(&self, lease: &Lease) {
        let host = lease.request.host_key();
        match lease.ip_spacing {
            None => self.wait_turns(&[(&host, lease.spacing)]).await,
            Some((ip, gap)) => self.wait_turns(&[(&host, lease.spacing), (&address_key(ip), gap)]).await,
        }
    }

    /// Notes that `lease`'s host (and address) was just sent its robots.txt request.
    pub fn note_robots(&self, lease: &Lease) {
        self.note(&lease.request.host_key(), lease.spacing);
        if let Some((ip, gap)) = lease.ip_spacing {
            self.note(&address_key(ip), gap);
        }
    }

    /// Notes that a request to `host` just got its response: with one request at a time, its
    /// next spacing counts from here.
    pub fn note_response(&self, host: &str, spacing: Duration) {
        self.note(host, spacing);
    }

    /// Notes that a request to `ip` (spaced by `gap`) just got its response. The server saw it
    /// at the latest now, so the address's next request leaving a gap from here reaches it a
    /// gap after this one, however late this one's connection got there; one leaving while
    /// this is still out keeps the gap from departures only.
    pub fn note_address_response(&self, ip: std::net::IpAddr, gap: Duration) {
        self.note(&address_key(ip), gap);
    }

    /// Waits until a request may leave by every one of `turns` (key, spacing), and notes its
    /// departure then under each.
    async fn wait_turns(&self, turns: &[(&str, Duration)]) {
        let now = Instant::now();
        let at = {
            let mut inner = self.lock();
            let paced = || turns.iter().filter(|(_, spacing)| !spacing.is_zero());
            let at = paced()
                .filter_map(|&(key, spacing)| inner.last.get(key).map(|&t| t + with_margin(spacing)))
                .fold(now, Instant::max);
            for &(key, spacing) in paced() {
                inner.note(key, at, spacing, now);
            }
            at
        };
        if at > now {
            tokio::time::sleep_until(at.into()).await;
        }
    }

    /// Notes a departure that went elsewhere (a robots.txt request), at the latest it could.
    fn note(&self, key: &str, spacing: Duration) {
        if !spacing.is_zero() {
            let now = Instant::now();
            self.lock().note(key, now, spacing, now);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every change leaves the map consistent: a poisoned lock still holds a usable one.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// An address's key among the departures: `@` and the address, apart from any host's.
fn address_key(ip: std::net::IpAddr) -> String {
    format!("@{ip}")
}

impl Inner {
    fn note(&mut self, host: &str, at: Instant, spacing: Duration, now: Instant) {
        self.longest = self.longest.max(spacing);
        match self.last.get_mut(host) {
            Some(t) => *t = (*t).max(at),
            None => {
                self.last.insert(Arc::from(host), at);
            }
        }
        self.noted += 1;
        if self.noted >= PRUNE_EVERY {
            self.noted = 0;
            let longest = self.longest;
            self.last.retain(|_, t| *t + longest > now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_leaves_its_hosts_spacing_after_the_last() {
        let d = Departures::default();
        let gap = Duration::from_millis(50);
        let start = Instant::now();
        d.wait_turns(&[("a.test", gap)]).await;
        d.wait_turns(&[("b.test", gap)]).await;
        assert!(start.elapsed() < gap, "the first to each host goes at once");
        d.wait_turns(&[("a.test", gap)]).await;
        assert!(start.elapsed() >= gap, "the second to a host waits out its spacing");
        d.note("b.test", gap);
        let noted = Instant::now();
        d.wait_turns(&[("b.test", gap)]).await;
        assert!(noted.elapsed() >= gap, "a robots.txt request counts as a departure");
        d.wait_turns(&[("c.test", Duration::ZERO)]).await;
        assert!(!d.lock().last.contains_key("c.test"), "an unpaced host is not noted");
    }

    /// A response that came late moves the address's gap on: the next request waits a gap
    /// from it, not from its own departure.
    #[tokio::test]
    async fn an_address_gap_counts_from_its_last_response() {
        let d = Departures::default();
        let gap = Duration::from_millis(40);
        let ip: std::net::IpAddr = [127, 0, 0, 1].into();
        d.wait_turns(&[("a.test", Duration::ZERO), ("@127.0.0.1", gap)]).await;
        tokio::time::sleep(gap / 2).await;
        d.note_address_response(ip, gap);
        let answered = Instant::now();
        d.wait_turns(&[("b.test", Duration::ZERO), ("@127.0.0.1", gap)]).await;
        assert!(answered.elapsed() >= gap, "the gap counted from the response");
    }

    /// Two names on one address: the second waits for the address's gap, though its host is
    /// new.
    #[tokio::test]
    async fn an_address_spaces_the_requests_of_all_its_names() {
        let d = Departures::default();
        let gap = Duration::from_millis(50);
        let start = Instant::now();
        d.wait_turns(&[("a.test", gap), ("@127.0.0.1", gap)]).await;
        d.wait_turns(&[("b.test", gap), ("@127.0.0.1", gap)]).await;
        assert!(start.elapsed() >= gap, "the address's gap held");
        let b = d.lock().last["b.test"];
        assert_eq!(b, d.lock().last["@127.0.0.1"], "the host's departure is the one it waited for");
    }
}
