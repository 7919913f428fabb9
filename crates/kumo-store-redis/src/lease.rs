//! A worker's lease call: what its reserve can start at once, and, when that is not enough or
//! runs low, one call of the frontier script for more (with the slots Redis now counts as
//! this worker's, and the hosts whose reserve must go back).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use kumo_core::{ErrorKind, StoredRequest};
use kumo_frontier::{Commit, Completion, FailureRecord, FrontierStats, Lease, LeaseId, Readiness};

use crate::RedisStoreError;
use crate::call::{array, bytes, int, text};
use crate::config::millis;
use crate::frontier::{Local, RedisFrontier};

/// Requests a worker may hold per slot of an unpaced host: one runs, the others wait in its
/// reserve. A worker asks for more when a host's reserve is down to half, so with sixteen a
/// worker holding 4 slots of a host makes about one lease call per 32 of its pages (with
/// eight: per 16, and the calls cost more Redis time than the pages). More would only make a
/// dead worker's reserve larger (it goes back with its leases).
pub(crate) const DEPTH: u32 = 16;

/// Leases one lease call may hand out (the reserve's depth bounds each host's share).
const REFILL: usize = 128;

impl RedisFrontier {
    pub(crate) async fn lease_inner(&self, max: usize) -> Result<Vec<Lease>, RedisStoreError> {
        self.still_in_the_crawl()?;
        let ttl = self.cfg.lease_ttl;
        let check_hosts = self.check_hosts.load(Ordering::Relaxed);
        let Ok(mut local) = self.local.try_lock() else {
            // A call is in flight (the engine's commit, most often): start what the reserve
            // holds without waiting for it; asking Redis for more waits for the next lease.
            return Ok(if check_hosts { Vec::new() } else { self.slots().start(max, ttl) });
        };
        let mut leases = Vec::new();
        if !check_hosts {
            leases = self.slots().start(max, ttl);
        }
        let redis_may_have = local.next_ask.is_none_or(|t| Instant::now() >= t);
        let ask = max > 0
            && (check_hosts || (leases.len() < max && redis_may_have) || self.slots().running_low(DEPTH));
        if !ask {
            self.forget_given_back(&mut local);
            return Ok(leases);
        }
        let base = local.next_lease;
        let check = self.check_hosts.swap(false, Ordering::Relaxed);
        let mut a = self.args("lease");
        a.s(&self.cfg.worker).n(max.max(REFILL)).n(base).n(millis(self.cfg.lease_ttl));
        a.n(fastrand::u32(..1 << 31)).n(DEPTH).n(u8::from(check));
        let reply = array(self.call(&a).await?)?;
        let mut reply = reply.into_iter();
        let mut next_int = || reply.next().map(|v| int(&v)).transpose();
        let code = next_int()?.unwrap_or(3);
        let ms = next_int()?.unwrap_or(0);
        let pe = next_int()?.unwrap_or(0);
        let n = usize::try_from(next_int()?.unwrap_or(0)).unwrap_or(0);
        // The wait after this answer counts the empty answers before it.
        let poll = self.poll();
        let readiness = readiness_of(code, ms, poll);
        self.note_answer(n > 0 || readiness == Readiness::Now);
        local.readiness = Some((Instant::now(), readiness));
        local.next_ask = next_ask(readiness, poll);
        self.saw_epoch(&mut local, pe);
        let mut invalid = Vec::new();
        let mut got = Vec::with_capacity(n);
        for (i, v) in reply.by_ref().take(n).enumerate() {
            let id = base + i as u64;
            local.next_lease = id + 1;
            let json = bytes(v)?;
            let stored: StoredRequest = match serde_json::from_slice(&json) {
                Ok(s) => s,
                Err(e) => {
                    invalid.push((id, e.to_string(), None));
                    continue;
                }
            };
            match stored.to_request() {
                Ok(request) => {
                    local.leases.insert(id, stored);
                    got.push((id, request));
                }
                Err(e) => {
                    invalid.push((id, e.to_string(), Some(stored.clone())));
                    local.leases.insert(id, stored);
                }
            }
        }
        let holdings = usize::try_from(reply.next().map(|v| int(&v)).transpose()?.unwrap_or(0)).unwrap_or(0);
        let mut held = Vec::with_capacity(holdings);
        for _ in 0..holdings {
            let (Some(host), Some(n), Some(share)) = (reply.next(), reply.next(), reply.next()) else {
                return Err(RedisStoreError::Protocol("lease reply holdings".into()));
            };
            let count = |v: &_| int(v).map(|n| u32::try_from(n).unwrap_or(0));
            held.push((text(host)?, count(&n)?, count(&share)?));
        }
        {
            let mut slots = self.slots();
            // What is left: the hosts a moved politeness epoch touched (`check`), as they were
            // before this call; what it handed out is already decided by their new politeness.
            for host in reply {
                slots.drop_host(&text(host)?);
            }
            for (id, request) in got {
                let host = request.host_key();
                slots.reserve(id, &host, request);
            }
            for (host, n, share) in held {
                slots.set_held(&host, n, share);
            }
            leases.extend(slots.start(max - leases.len(), ttl));
        }
        self.forget_given_back(&mut local);
        drop(local);
        if !invalid.is_empty() {
            // A request that cannot be rebuilt fails at once, as in the other backends.
            let completions = invalid
                .into_iter()
                .map(|(id, message, stored)| Completion::Failed {
                    lease: LeaseId(id),
                    failure: FailureRecord {
                        url: stored.as_ref().map(|s| s.url.to_string()).unwrap_or_default(),
                        kind: ErrorKind::InvalidUrl,
                        message,
                        attempts: stored.map_or(0, |s| s.retries),
                        last_status: None,
                        at: SystemTime::now(),
                    },
                })
                .collect();
            self.commit_inner(Commit { completions, ..Default::default() }).await?;
        }
        Ok(leases)
    }

    /// The crawl's counts as this worker's engine sees them: its reserve is leased in Redis
    /// but not started, so it counts as queued.
    pub(crate) fn as_seen_here(&self, mut stats: FrontierStats) -> FrontierStats {
        let reserved = self.slots().reserved().min(stats.leased);
        stats.leased -= reserved;
        stats.queued += reserved;
        stats
    }

    /// Drops the stored requests of reserved leases handed back: they are no longer ours.
    pub(crate) fn forget_given_back(&self, local: &mut Local) {
        for id in self.slots().take_forgotten() {
            local.leases.remove(&id);
        }
    }
}

/// When to ask Redis for leases again after it answered `r`: at once if it has some now,
/// else when it said, or after `poll` (other workers may queue work meanwhile).
pub(crate) fn next_ask(r: Readiness, poll: Duration) -> Option<Instant> {
    match r {
        Readiness::Now => None,
        Readiness::At(t) => Some(t.min(Instant::now() + poll)),
        Readiness::Blocked | Readiness::Empty => Some(Instant::now() + poll),
    }
}

/// A reply's readiness code and time; `poll`: when to look again if others may bring work.
pub(crate) fn readiness_of(code: i64, ms: i64, poll: Duration) -> Readiness {
    let ms = u64::try_from(ms).unwrap_or(0);
    match code {
        0 => Readiness::Now,
        1 => Readiness::At(kumo_frontier::later(Instant::now(), Duration::from_millis(ms))),
        2 => Readiness::Blocked,
        3 => Readiness::Empty,
        // Others hold leases that may bring work, or the ready hosts give this worker its
        // share already: look again soon.
        _ => Readiness::At(Instant::now() + poll),
    }
}
