//! The crawl's DNS resolver, [`DnsResolver`]: its settings, the lookup path (override, cache,
//! single flight, a turn at the name servers, kumo's deadline) and reqwest's `Resolve`.
//! [`ask`] puts the questions to hickory, [`cache`] keeps the answers, [`figures`] counts.

mod ask;
mod cache;
mod error;
mod figures;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use kumo_core::dns::unix_ms;
use kumo_core::{AnswerStorage, AnswerStorageError, StoredAnswer, StoredOutcome};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::Semaphore;

use crate::BuildError;
use ask::Outcome;
use cache::{Answer, Cache, Failure, Found};
use figures::{Counted, Figures};

pub use error::{DnsError, DnsErrorKind};
pub use figures::{DnsFailures, DnsSnapshot};

/// DNS settings of a crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsConfig {
    /// The name servers to ask (address and port). Empty: the system's configuration
    /// (resolv.conf's name servers, and /etc/hosts). Given: these alone answer, with no
    /// fallback, not even /etc/hosts.
    pub servers: Vec<SocketAddr>,
    /// Names answered with these addresses and no query (curl's `--resolve HOST=ADDR`). A
    /// name given more than once gets each address, in order; case and a trailing dot do
    /// not matter.
    pub overrides: Vec<(String, IpAddr)>,
    /// Ask for AAAA records when a name has no A record. A records come first either way;
    /// off, a name without one has no address (IPv4 only).
    pub ipv6: bool,
    /// kumo's deadline for one lookup at the name servers, hickory's retries included: past
    /// it the lookup fails as a timeout. Keep it under the downloader's connect timeout,
    /// which bounds the lookup too (a fetch whose connect timeout runs out first fails as
    /// `timeout`, not `dns`).
    pub timeout: Duration,
    /// hickory's timeout for one try. Within it, its UDP client resends an unanswered query
    /// every max(333 ms, 1.2 × the server's smoothed round trip).
    pub query_timeout: Duration,
    /// hickory's retries after a try that failed (0: one try).
    pub attempts: usize,
    /// The least time addresses are kept, whatever their TTL.
    pub min_ttl: Duration,
    /// The most time addresses are kept, whatever their TTL.
    pub max_ttl: Duration,
    /// The least time NXDOMAIN or NODATA is kept (also its time when no SOA came with it).
    pub negative_min_ttl: Duration,
    /// The most time NXDOMAIN or NODATA is kept; within the range, the SOA's negative TTL.
    pub negative_max_ttl: Duration,
    /// How long a timeout, a server failure or another failure stands before the name is
    /// asked again: lookups meanwhile fail at once, from the cache.
    pub failure_backoff: Duration,
    /// The most lookups at the name servers at once; more wait for a turn (a wait that
    /// `timeout` does not count).
    pub max_in_flight: usize,
    /// The most names the cache keeps (not counting those being looked up).
    pub max_entries: usize,
}

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig {
            servers: Vec::new(),
            overrides: Vec::new(),
            ipv6: true,
            // Two tries of 2 s, and a margin for the resends and the turn at the socket.
            timeout: Duration::from_secs(5),
            query_timeout: Duration::from_secs(2),
            attempts: 1,
            min_ttl: Duration::from_secs(5 * 60),
            max_ttl: Duration::from_secs(6 * 3600),
            negative_min_ttl: Duration::from_secs(60),
            negative_max_ttl: Duration::from_secs(3600),
            failure_backoff: Duration::from_secs(30),
            max_in_flight: 64,
            max_entries: 100_000,
        }
    }
}

impl DnsConfig {
    /// Refuses settings the resolver cannot work with.
    fn check(&self) -> Result<(), BuildError> {
        let refuse = |what: &str| Err(BuildError(format!("DNS settings: {what}")));
        if self.timeout.is_zero() || self.query_timeout.is_zero() {
            return refuse("the timeouts must be above zero");
        }
        if self.min_ttl > self.max_ttl {
            return refuse("the least TTL is above the most");
        }
        if self.negative_min_ttl > self.negative_max_ttl {
            return refuse("the least negative TTL is above the most");
        }
        if self.max_in_flight == 0 || self.max_entries == 0 {
            return refuse("at least one lookup in flight and one name in the cache");
        }
        if self.max_in_flight > Semaphore::MAX_PERMITS {
            return refuse("too many lookups in flight");
        }
        if let Some((host, _)) = self.overrides.iter().find(|(host, _)| normal(host).is_empty()) {
            return refuse(&format!("an override without a host name ({host:?})"));
        }
        Ok(())
    }
}

/// The crawl's DNS resolver: one, shared (`Arc`) by every downloader of a crawl
/// ([`DownloaderConfig::dns`](crate::DownloaderConfig::dns)) and installed in each HTTP client
/// as its [`reqwest::dns::Resolve`].
///
/// It asks hickory (never reqwest's own `hickory-dns` feature, which cannot be configured and
/// falls back to a public resolver), with:
/// - the name servers given, and only those; or the system's configuration when none are;
/// - overrides answered without a query (curl's `--resolve HOST=ADDR`);
/// - names asked as fully qualified (a trailing dot), so no search domain ever applies; A
///   records first, AAAA only for a name that has none (hickory's `Ipv4thenIpv6` would ask
///   AAAA after an NXDOMAIN or a timeout too);
/// - a cache of kumo's own in front (hickory's is off): addresses kept for their TTL within
///   [`DnsConfig::min_ttl`]..[`DnsConfig::max_ttl`], NXDOMAIN and NODATA for the SOA's
///   negative TTL within their own range, other failures for [`DnsConfig::failure_backoff`];
///   one lookup per name at a time, the others waiting for its answer (single flight);
///   at most [`DnsConfig::max_entries`] names;
/// - at most [`DnsConfig::max_in_flight`] lookups at the name servers at once, each within a
///   deadline of kumo's own ([`DnsConfig::timeout`]);
/// - counters: lookups, cache hits, queries, failures by kind ([`DnsResolver::snapshot`]).
///
/// A lookup that finds no address fails with a [`DnsError`], which reqwest keeps in its
/// error's source chain: the downloader reports such a fetch as `ErrorKind::Dns`, with the
/// host and the kind in its message.
///
/// hickory's background tasks run on the tokio runtime of the lookups: use one resolver within
/// one runtime.
pub struct DnsResolver {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: DnsConfig,
    hickory: hickory_resolver::TokioResolver,
    overrides: HashMap<String, Arc<[IpAddr]>>,
    cache: Cache,
    /// Turns at the name servers (`max_in_flight`); never closed.
    turns: Semaphore,
    figures: Figures,
    /// Where each new answer is kept for the crawl's next run, if anywhere.
    storage: RwLock<Option<Arc<dyn AnswerStorage>>>,
}

impl DnsResolver {
    /// Builds the resolver; with no name servers given, reads the system's configuration
    /// (and fails if it names none). Sends nothing yet.
    pub fn new(cfg: DnsConfig) -> Result<DnsResolver, BuildError> {
        cfg.check()?;
        let hickory = ask::build(&cfg)?;
        let mut overrides: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (host, ip) in &cfg.overrides {
            overrides.entry(normal(host)).or_default().push(*ip);
        }
        let overrides = overrides.into_iter().map(|(host, ips)| (host, Arc::from(ips))).collect();
        let inner = Inner {
            cache: Cache::new(cfg.max_entries),
            turns: Semaphore::new(cfg.max_in_flight),
            figures: Figures::default(),
            storage: RwLock::new(None),
            hickory,
            overrides,
            cfg,
        };
        Ok(DnsResolver { inner: Arc::new(inner) })
    }

    /// The settings it was built with.
    pub fn config(&self) -> &DnsConfig {
        &self.inner.cfg
    }

    /// The addresses of `host`, IPv4 first: an IP literal as it is, an override, a standing
    /// answer from the cache, or the name servers' (asked once however many lookups of the
    /// name wait for it).
    pub async fn lookup(&self, host: &str) -> Result<Arc<[IpAddr]>, DnsError> {
        self.inner.lookup(host).await
    }

    /// Keeps every answer the name servers give from now on in `storage`, and first takes
    /// back the answers an earlier run kept there that still stand (as many as the cache
    /// holds), so that a resumed crawl does not ask for those names again. Returns how many it
    /// took back. Replaces the storage given before, if any.
    pub fn keep_answers_in(&self, storage: Arc<dyn AnswerStorage>) -> Result<usize, AnswerStorageError> {
        let kept = storage.load()?;
        let (now, wall) = (Instant::now(), unix_ms(SystemTime::now()));
        let mut taken = 0;
        for answer in kept {
            let Some(left) = answer.expires_ms.checked_sub(wall).filter(|ms| *ms > 0) else { continue };
            let outcome = match answer.outcome {
                StoredOutcome::Addresses(ips) if !ips.is_empty() => Ok(Arc::from(ips)),
                StoredOutcome::Addresses(_) => continue,
                StoredOutcome::Failed { kind, detail } => Err(Failure { kind, detail: detail.into() }),
            };
            let expires = now + Duration::from_millis(left);
            taken += usize::from(self.inner.cache.prime(normal(&answer.host), Answer { outcome, expires }));
        }
        *self.inner.storage.write().unwrap_or_else(PoisonError::into_inner) = Some(storage);
        Ok(taken)
    }

    /// The figures now.
    pub fn snapshot(&self) -> DnsSnapshot {
        let inner = &self.inner;
        let in_flight = inner.cfg.max_in_flight - inner.turns.available_permits();
        inner.figures.snapshot(inner.cache.len(), in_flight)
    }
}

impl Inner {
    async fn lookup(&self, host: &str) -> Result<Arc<[IpAddr]>, DnsError> {
        let host = normal(host);
        if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            return Ok(Arc::from([ip]));
        }
        self.figures.count(Counted::Lookup);
        if let Some(ips) = self.overrides.get(&host) {
            self.figures.count(Counted::Override);
            return Ok(ips.clone());
        }
        let slot = match self.cache.find(&host, Instant::now()) {
            Found::Fresh(answer) => {
                self.figures.count(Counted::CacheHit);
                return read(answer, host);
            }
            Found::Flight(slot) => slot,
        };
        // Set only by the lookup that asks; the others waited for its answer.
        let mut asked = false;
        let answer = slot
            .get_or_init(|| {
                asked = true;
                self.resolve(&host)
            })
            .await
            .clone();
        if !asked {
            self.figures.count(Counted::Joined);
        }
        read(answer, host)
    }

    /// Asks the name servers for `host` within kumo's deadline, dates the answer, and keeps
    /// it where answers are kept.
    async fn resolve(&self, host: &str) -> Answer {
        let answer = self.ask(host).await;
        self.keep(host, &answer);
        answer
    }

    /// Saves `answer` to the answer storage, if there is one. A failure to save costs only a
    /// question in the next run: it is said, and the crawl goes on.
    fn keep(&self, host: &str, answer: &Answer) {
        let storage = self.storage.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(storage) = storage else { return };
        let left = answer.expires.saturating_duration_since(Instant::now());
        let outcome = match &answer.outcome {
            Ok(ips) => StoredOutcome::Addresses(ips.to_vec()),
            Err(f) => StoredOutcome::Failed { kind: f.kind, detail: f.detail.to_string() },
        };
        let stored =
            StoredAnswer { host: host.to_owned(), outcome, expires_ms: unix_ms(SystemTime::now() + left) };
        if let Err(e) = storage.save(&[stored]) {
            tracing::warn!(host, error = %e, "could not keep a DNS answer in the crawl state");
        }
    }

    /// Asks the name servers for `host` within kumo's deadline, and dates the answer.
    async fn ask(&self, host: &str) -> Answer {
        // The semaphore is never closed, so the permit always comes.
        let _turn = self.turns.acquire().await;
        let asking = ask::ask(&self.hickory, host, self.cfg.ipv6, &self.figures);
        let outcome = tokio::time::timeout(self.cfg.timeout, asking).await.unwrap_or_else(|_| {
            let deadline = self.cfg.timeout.as_secs_f64();
            Outcome::failed(DnsErrorKind::Timeout, format!("no answer within kumo's {deadline:.1} s"))
        });
        let now = Instant::now();
        match outcome {
            Outcome::Found { ips, valid_until } => {
                self.figures.count(Counted::Resolved);
                let keep = keep_found(&self.cfg, valid_until.saturating_duration_since(now));
                Answer { outcome: Ok(Arc::from(ips)), expires: now + keep }
            }
            Outcome::Failed { kind, detail, negative_ttl } => {
                self.figures.count(Counted::Failed(kind));
                let keep = if kind.is_definitive() {
                    keep_missing(&self.cfg, negative_ttl)
                } else {
                    self.cfg.failure_backoff
                };
                Answer { outcome: Err(Failure { kind, detail: detail.into() }), expires: now + keep }
            }
        }
    }
}

/// How long addresses found with `ttl` are kept.
fn keep_found(cfg: &DnsConfig, ttl: Duration) -> Duration {
    ttl.clamp(cfg.min_ttl, cfg.max_ttl)
}

/// How long NXDOMAIN or NODATA is kept, with the SOA's negative TTL (seconds) if one came.
fn keep_missing(cfg: &DnsConfig, negative_ttl: Option<u32>) -> Duration {
    negative_ttl.map_or(cfg.negative_min_ttl, |secs| {
        Duration::from_secs(secs.into()).clamp(cfg.negative_min_ttl, cfg.negative_max_ttl)
    })
}

/// An answer as the lookup's result.
fn read(answer: Answer, host: String) -> Result<Arc<[IpAddr]>, DnsError> {
    answer.outcome.map_err(|failure| DnsError {
        host,
        kind: failure.kind,
        detail: failure.detail.to_string(),
    })
}

/// A host name as the cache and the overrides key it: lower case, without the trailing dot.
fn normal(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

impl Resolve for DnsResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let inner = self.inner.clone();
        Box::pin(async move {
            let ips = inner.lookup(name.as_str()).await?;
            // Port 0: reqwest puts in the URL's port, or its scheme's.
            let addrs: Vec<SocketAddr> = ips.iter().map(|ip| SocketAddr::new(*ip, 0)).collect();
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

impl std::fmt::Debug for DnsResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DnsResolver")
            .field("config", &self.inner.cfg)
            .field("figures", &self.snapshot())
            .finish_non_exhaustive()
    }
}
