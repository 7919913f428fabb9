//! The storage-neutral frontier interface and the values that cross it.

use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use kumo_core::{ErrorKind, Fingerprint, Item, Request, StoredRequest};
use serde::{Deserialize, Serialize};

use crate::{FrontierError, HostQueue, HostView, LiftedPause, RequeueReport};

/// Identifies one hand-out of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseId(pub u64);

/// A request handed out for fetching. It stays owned by the frontier until completed.
#[derive(Debug, Clone)]
pub struct Lease {
    /// Names this hand-out when it is completed or released.
    pub id: LeaseId,
    /// The request to fetch.
    pub request: Request,
    /// The least gap its host keeps between requests, as it stood at the lease: the downloader
    /// holds a request that would leave closer than this to its host's last one (a lease may
    /// wait in a queue and leave late). Zero: not paced.
    pub spacing: std::time::Duration,
    /// With per-IP politeness, the address that gated it and that address's least gap, held
    /// where the request leaves as `spacing` is.
    pub ip_spacing: Option<(std::net::IpAddr, std::time::Duration)>,
}

/// A request that failed for good, kept so it can be inspected and re-queued.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailureRecord {
    /// The request's URL.
    pub url: String,
    /// What kind of error ended it.
    pub kind: ErrorKind,
    /// What went wrong, in words.
    pub message: String,
    /// How many times it was tried.
    pub attempts: u32,
    /// The HTTP status of its last answer; `None`: it got none.
    pub last_status: Option<u16>,
    /// When it failed for good (kept as seconds since the Unix epoch).
    #[serde(with = "unix_secs")]
    pub at: SystemTime,
}

/// How a leased request ended.
#[derive(Debug)]
pub enum Completion {
    /// Fetched and handled; `discovered` are new requests it produced (checked against the
    /// seen set as part of the same completion). `page`: what a later run needs to ask for
    /// the page again only if it changed (kept by stores that keep pages, ignored by others).
    Done {
        /// The lease it completes.
        lease: LeaseId,
        /// The requests the page produced, with their fingerprints.
        discovered: Vec<(Fingerprint, Request)>,
        /// The page's record, for stores that keep pages.
        page: Option<Box<PageRecord>>,
    },
    /// Try again, no sooner than `after` from now; the host goes on with its other requests
    /// meanwhile (a pause for the whole host is a [`HostAdjustment`]). The request's retry
    /// count grows.
    Retry {
        /// The lease it completes.
        lease: LeaseId,
        /// How long from now the request waits before it is handed out again.
        after: Duration,
    },
    /// Put back without counting an attempt (the request was not tried: its host must wait,
    /// for example right after its robots.txt was fetched).
    Defer {
        /// The lease it completes.
        lease: LeaseId,
        /// How long from now its host hands out nothing; the request goes back to the front.
        after: Duration,
    },
    /// Give up and record the failure.
    Failed {
        /// The lease it completes.
        lease: LeaseId,
        /// What is recorded of the failure.
        failure: FailureRecord,
    },
}

/// A fetched page as a later run asks for it again: the request, the validators its answer
/// carried (verbatim, as they must be sent back), and the hash and size of its body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    /// The request that fetched the page.
    pub request: StoredRequest,
    /// The answer's `ETag`, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The answer's `Last-Modified`, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// xxh3-64 of the body.
    pub hash: u64,
    /// The body's size in bytes.
    pub bytes: u64,
    /// When it was last asked for (the start of that run), ms since the Unix epoch; 0: unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checked_ms: u64,
    /// How long after `checked_ms` it is asked for again; 0: on every run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interval_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl PageRecord {
    /// Whether it is due to be asked for again at `now_ms`.
    pub fn due(&self, now_ms: u64) -> bool {
        self.checked_ms.saturating_add(self.interval_ms) <= now_ms
    }
}

/// What a push (or the discoveries of a completion batch) did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Newly queued.
    pub added: usize,
    /// Dropped as already seen.
    pub seen: usize,
    /// Not queued: their host or domain has used its page budget.
    pub budget: usize,
}

impl PushReport {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: PushReport) {
        self.added += other.added;
        self.seen += other.seen;
        self.budget += other.budget;
    }
}

/// Queue sizes, for termination and the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FrontierStats {
    /// Waiting to be leased (whether or not their host may be fetched now).
    pub queued: usize,
    /// Handed out and not yet completed.
    pub leased: usize,
    /// Hosts the frontier knows.
    pub hosts: usize,
    /// Failures recorded.
    pub failed: usize,
    /// Hosts that have used their page budget.
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub hosts_over_budget: usize,
    /// Registrable domains that have used their page budget.
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub domains_over_budget: usize,
}

/// What the frontier's hosts came to, for the summary of a crawl of many hosts. Counting
/// walks every host, so it is asked for at the end of a run and while someone watches, not
/// at every commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFigures {
    /// Hosts the frontier knows.
    pub known: usize,
    /// Hosts with requests queued or out: the rest are exhausted.
    pub with_work: usize,
    /// Hosts this run completed a request of (a page, or one robots.txt refused).
    pub crawled: usize,
    /// Hosts whose requests this run all failed (no page fetched).
    pub failed: usize,
    /// Addresses the hosts resolved to (with per-IP politeness; else 0).
    pub addresses: usize,
}

fn is_zero_usize(v: &usize) -> bool {
    *v == 0
}

impl FrontierStats {
    /// Nothing queued and nothing out: the crawl is over.
    pub fn is_drained(&self) -> bool {
        self.queued == 0 && self.leased == 0
    }
}

/// A change to one host's politeness state, from what the crawl learned about it.
///
/// A host's delay is the largest of three: its rule's delay, a floor raised by `min_delay`
/// (robots.txt `Crawl-delay`; it only ever goes up), and a learned delay set by
/// `learned_delay` (the adaptive throttle's; it goes up and down, never below the rule's
/// delay). A change of delay takes effect at once: the next lease is due one new delay after
/// the last one (or when a pause ends, whichever is later).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostAdjustment {
    /// Raise the host's delay floor to at least this (robots.txt `Crawl-delay`).
    pub min_delay: Option<Duration>,
    /// Hand out nothing for the host for this long from now (the engine sends one for what
    /// speaks for the whole host: a 429, 503s with `Retry-After` from several of its URLs,
    /// robots.txt unavailable; never for one URL's 503). A pause is kept apart from the host's
    /// delay: it can be listed ([`Frontier::hosts`]), capped and lifted
    /// ([`Frontier::cap_pauses`]).
    pub pause: Option<Duration>,
    /// Set the host's learned delay (adaptive throttle), lower or higher than before; it is
    /// raised to the rule's delay if below it.
    pub learned_delay: Option<Duration>,
}

/// Everything one scheduler step commits at once: the unit of atomic progress. A durable
/// backend writes it in one transaction, so after a crash either all of it happened or none.
#[derive(Default)]
pub struct Commit {
    /// New requests found outside a lease's discoveries (sitemaps), seen-checked.
    pub pushes: Vec<(Fingerprint, Request)>,
    /// How the step's leases ended.
    pub completions: Vec<Completion>,
    /// The items of the completed pages. A durable backend journals them, and the pipeline
    /// consumes the journal; others hand them straight back.
    pub items: Vec<Item>,
    /// Which page each run of `items` came from, in order: `(lease, n)` says the next `n`
    /// items are that lease's. A shared backend drops the items of a page whose lease is no
    /// longer out (another worker fetches it again), so they are written once. Empty: every
    /// item counts as a live page's.
    pub item_sources: Vec<(LeaseId, usize)>,
    /// The crawl's counters after this step, opaque to the frontier, given back on resume.
    /// Called with what the commit's seen checks found, so the saved counts are exact. A
    /// frontier may call it twice: once before it knows (nothing seen) to save the counters
    /// with the commit itself, once after, as with Redis.
    pub counters: Option<CountersFn>,
}

/// Encodes the crawl's counters as of a commit's push report.
pub type CountersFn = Box<dyn Fn(&PushReport) -> Vec<u8> + Send>;

impl std::fmt::Debug for Commit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commit")
            .field("pushes", &self.pushes.len())
            .field("completions", &self.completions)
            .field("items", &self.items.len())
            .field("item_sources", &self.item_sources.len())
            .field("counters", &self.counters.is_some())
            .finish()
    }
}

/// What a commit did.
#[derive(Debug, Default)]
pub struct CommitReport {
    /// What the pushes and the completions' discoveries did.
    pub pushed: PushReport,
    /// Completions naming a lease no longer out (completed twice, or expired and handed out
    /// again). Their discoveries were still kept.
    pub stale: usize,
    /// The journal number of the last item journaled, if the backend journals items.
    pub journaled_to: Option<u64>,
    /// The commit's items, handed back for the pipeline.
    pub items: Vec<Item>,
    /// The frontier's stats right after the commit, when the backend has them at no cost (a
    /// networked one answers them with the commit); otherwise ask [`Frontier::stats`].
    pub stats: Option<FrontierStats>,
}

/// When the frontier can next hand out work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// A lease can be had now.
    Now,
    /// Nothing is leasable before this instant (politeness delays).
    At(Instant),
    /// Requests are queued but every host with work is at its parallelism limit: wait for a
    /// completion.
    Blocked,
    /// Nothing is queued.
    Empty,
}

/// The frontier interface every storage backend implements. Batch-shaped so that networked
/// backends can pipeline.
#[async_trait]
pub trait Frontier: Send + Sync {
    /// Queues the requests whose fingerprints are not yet seen, and marks them seen.
    async fn push(&self, requests: Vec<(Fingerprint, Request)>) -> Result<PushReport, FrontierError>;

    /// Hands out up to `max` requests whose hosts may be fetched now, best priority first.
    async fn lease(&self, max: usize) -> Result<Vec<Lease>, FrontierError>;

    /// Says these leases' requests are back from their hosts (fetched, or failed), so their
    /// hosts' parallelism slots are free before the leases are completed: the scheduler may
    /// group several pages into one commit without holding hosts idle. The leases stay out
    /// until completed (or expired). The default keeps the slots until completion.
    async fn release(&self, _leases: &[LeaseId]) -> Result<(), FrontierError> {
        Ok(())
    }

    /// Completes leases. Each completion is applied atomically (the ack together with its
    /// discoveries); a batch lets backends group-commit.
    async fn complete(&self, batch: Vec<Completion>) -> Result<PushReport, FrontierError>;

    /// Which of `fps` were queued before for certain, answered at once from what this process
    /// holds (`false` where it cannot tell, or cannot without waiting): a push would drop
    /// those, so the parser need not ask a spider's hooks about them. The default knows none.
    fn known(&self, fps: &[Fingerprint]) -> Vec<bool> {
        vec![false; fps.len()]
    }

    /// When work can next be leased.
    async fn readiness(&self) -> Result<Readiness, FrontierError>;

    /// Applies what the crawl learned about a host (`host[:port]`) to its politeness state.
    async fn adjust_host(&self, host_key: &str, adjustment: HostAdjustment) -> Result<(), FrontierError>;

    /// Hosts with work whose IP address must be looked up before their first lease (per-IP
    /// politeness, [`crate::Politeness::per_ip`]), at most `max`, each handed out once; the
    /// crawl answers each with [`Frontier::resolved`]. The default (a backend without per-IP
    /// politeness) has none.
    async fn unresolved(&self, _max: usize) -> Result<Vec<String>, FrontierError> {
        Ok(Vec::new())
    }

    /// The address `host_key` resolved to, which gates its requests from now on (`None`: it
    /// has none, and its requests go on to fail as `dns`).
    async fn resolved(&self, _host_key: &str, _addr: Option<std::net::IpAddr>) -> Result<(), FrontierError> {
        Ok(())
    }

    /// The learned delays (see [`HostAdjustment::learned_delay`]) of the hosts that have one,
    /// so a resumed crawl's throttle goes on from them. The default (a backend that keeps
    /// none) is empty.
    async fn learned_delays(&self) -> Result<Vec<(String, Duration)>, FrontierError> {
        Ok(Vec::new())
    }

    /// Cuts the pauses of `hosts` (every host when `None`) to at most `max` from now;
    /// `Duration::ZERO` lifts them. Returns the pauses it cut. The default (a backend that
    /// keeps no pauses) cuts nothing.
    async fn cap_pauses(
        &self,
        _hosts: Option<&[&str]>,
        _max: Duration,
    ) -> Result<Vec<LiftedPause>, FrontierError> {
        Ok(Vec::new())
    }

    /// What its hosts came to ([`HostFigures`]); `None` for a backend that does not count
    /// them (the default).
    async fn host_figures(&self) -> Result<Option<HostFigures>, FrontierError> {
        Ok(None)
    }

    /// Every host the frontier knows, with what it waits for (its pause, its requests backing
    /// off). The default is empty.
    async fn hosts(&self) -> Result<Vec<HostView>, FrontierError> {
        Ok(Vec::new())
    }

    /// What is queued for host `host_key`, with its next `max` requests in the order they go
    /// out (`None`: the frontier does not know the host).
    async fn host_queue(&self, host_key: &str, max: usize) -> Result<Option<HostQueue>, FrontierError>;

    /// The queue sizes now.
    async fn stats(&self) -> Result<FrontierStats, FrontierError>;

    /// The failures recorded so far.
    async fn failures(&self) -> Result<Vec<FailureRecord>, FrontierError>;

    /// Moves the failures of `kinds` (all if empty) back to the queue, their retry counts
    /// reset, at once (their fingerprints are seen already). A running crawl does this through
    /// its scheduler, which counts them out of its failures.
    async fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, FrontierError>;

    /// Commits one step atomically (see [`Commit`]). The default pushes, then completes, and
    /// hands the items back: right for backends that keep nothing across a restart.
    async fn commit(&self, c: Commit) -> Result<CommitReport, FrontierError> {
        let mut pushed = self.push(c.pushes).await?;
        let mut stale = 0;
        for completion in c.completions {
            match self.complete(vec![completion]).await {
                Ok(r) => pushed.merge(r),
                Err(FrontierError::UnknownLease(_)) => stale += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(CommitReport { pushed, stale, journaled_to: None, items: c.items, stats: None })
    }

    /// For a frontier other processes change too (a crawl shared by workers): how often a
    /// scheduler waiting for work looks again, whatever `readiness` said, since another worker
    /// may queue work or a pause be lifted meanwhile. `None` (the default): only this process
    /// changes it, so `readiness` is the whole story.
    fn poll_interval(&self) -> Option<Duration> {
        None
    }

    /// How long a fetched page's commit may wait to be grouped with others' (the engine's
    /// group commit). Longer where each commit has a high fixed cost (a round trip to a shared
    /// store): waiting holds no host slot, it only delays when the page's links show.
    fn group_linger(&self) -> Duration {
        Duration::from_millis(2)
    }

    /// The counters of the last commit of an earlier run, when resuming.
    async fn saved_counters(&self) -> Result<Option<Vec<u8>>, FrontierError> {
        Ok(None)
    }

    /// Every worker's last saved counters, by worker name, in a crawl that several processes
    /// share (those that left included); empty for a frontier one process owns.
    async fn workers_counters(&self) -> Result<Vec<(String, Vec<u8>)>, FrontierError> {
        Ok(Vec::new())
    }
}

mod unix_secs {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        s.serialize_f64(secs)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let secs = f64::deserialize(d)?;
        Ok(UNIX_EPOCH + Duration::try_from_secs_f64(secs).unwrap_or_default())
    }
}
