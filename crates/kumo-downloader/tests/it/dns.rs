//! The downloader with the crawl's resolver, against the test DNS server and a test site on a
//! loopback address of its own (127.0.0.7, not 127.0.0.1, so a page that arrives came by the
//! address the resolver gave): pages fetched by name, one query per name however many fetches
//! want it, failures typed `dns` (never `connect` or `timeout`) and cached, overrides, no
//! fallback past the servers given, and the figures.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use kumo_core::{ErrorKind, Request, Url};
use kumo_downloader::{
    DnsConfig, DnsErrorKind, DnsResolver, DnsSnapshot, Downloader, DownloaderConfig, FetchError,
};
use kumo_testsite::{DnsBehaviour, DnsServer, DnsZone, Fixture, ServerBuilder, TestServer};

/// The test site's address.
const WEB: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 7);

/// A bound for every wait on an event that should come at once.
const PATIENCE: Duration = Duration::from_secs(5);

/// The test site, on [`WEB`], with a page at `/`.
async fn site() -> TestServer {
    ServerBuilder::new().ip(IpAddr::V4(WEB)).fixture("/", Fixture::html("<p>shop</p>")).start().await.unwrap()
}

/// A resolver that asks `dns` alone, with `cfg`'s other settings.
fn resolver(dns: &DnsServer, cfg: DnsConfig) -> Arc<DnsResolver> {
    Arc::new(DnsResolver::new(DnsConfig { servers: vec![dns.addr()], ..cfg }).unwrap())
}

/// A downloader resolving with `resolver`, keeping the server's address (`Wire::remote`), and
/// timeouts far above any the resolver has.
fn downloader(serial: u64, resolver: &Arc<DnsResolver>) -> Downloader {
    let cfg = DownloaderConfig {
        dns: Some(resolver.clone()),
        record: true,
        connect_timeout: Duration::from_secs(20),
        timeout: Duration::from_secs(30),
        ..DownloaderConfig::default()
    };
    Downloader::new(serial, cfg).unwrap()
}

/// `http://HOST:PORT/`, the port the test site listens on.
fn page(host: &str, site: &TestServer) -> Request {
    Request::get(Url::parse(&format!("http://{host}:{}/", site.addr().port())).unwrap())
}

/// The record types asked for `name`, in order.
fn asked(dns: &DnsServer, name: &str) -> Vec<String> {
    dns.queries().into_iter().filter(|q| q.name == name).map(|q| q.record_type).collect()
}

/// Asserts that a fetch failed as `dns`, naming `host` and `words`.
fn assert_dns(e: &FetchError, host: &str, words: &str) {
    assert_eq!(e.kind, ErrorKind::Dns, "{e}");
    assert!(e.is_dns() && !e.is_connect() && !e.is_timeout(), "{e}");
    assert!(e.message.contains(host) && e.message.contains(words), "{e}");
    assert!(e.request.url.as_str().contains(host), "the request comes back");
}

/// Every lookup was answered one way: the figures add up.
fn assert_adds_up(f: &DnsSnapshot) {
    let answered = f.overridden + f.cache_hits + f.joined + f.resolved + f.failures.total();
    assert_eq!(f.lookups, answered, "{f:?}");
}

#[tokio::test]
async fn a_page_is_fetched_from_the_address_the_resolver_gave() {
    let dns =
        DnsServer::start(DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([WEB], 300))).await.unwrap();
    let site = site().await;
    let resolver = resolver(&dns, DnsConfig::default());

    let r = downloader(1, &resolver).fetch(page("shop.kumo.test", &site)).await.unwrap();
    assert_eq!((r.status.as_u16(), &r.body[..]), (200, &b"<p>shop</p>"[..]));
    assert_eq!(r.wire.as_ref().unwrap().remote, Some(site.addr()), "the address in the answer");
    let hits = site.hits();
    assert_eq!(hits.len(), 1);
    let host = format!("shop.kumo.test:{}", site.addr().port());
    assert_eq!(hits[0].host.as_deref(), Some(host.as_str()), "the name, not the address, in Host");

    // Asked as a fully qualified name (no search domain), for A records only: it has one.
    assert_eq!(asked(&dns, "shop.kumo.test"), ["A"]);
    assert_eq!(dns.query_count(), 1);
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.queries, f.resolved, f.entries, f.in_flight), (1, 1, 1, 1, 0), "{f:?}");
}

#[tokio::test]
async fn twenty_fetches_of_one_name_at_once_send_one_query() {
    // The answer comes late, so that every fetch's lookup starts while the first is asking.
    let slow = DnsBehaviour::delayed(Duration::from_millis(200), DnsBehaviour::a([WEB], 300));
    let dns = DnsServer::start(DnsZone::new().with("shop.kumo.test", slow)).await.unwrap();
    let site = site().await;
    let resolver = resolver(&dns, DnsConfig::default());
    // Four downloaders (four connection pools) share the crawl's resolver.
    let downloaders: Vec<Downloader> = (1..=4).map(|serial| downloader(serial, &resolver)).collect();

    let fetches = (0..20).map(|i| downloaders[i % 4].fetch(page("shop.kumo.test", &site)));
    for result in join_all(fetches).await {
        assert_eq!(result.unwrap().status.as_u16(), 200);
    }
    assert_eq!(site.hit_count(), 20);
    assert_eq!(dns.queries_for("shop.kumo.test"), 1, "{:?}", dns.queries());

    // reqwest looks the name up once per new connection: at least once per downloader.
    let f = resolver.snapshot();
    assert_eq!((f.queries, f.resolved), (1, 1), "{f:?}");
    assert!(f.lookups >= 4 && f.joined >= 3, "the other pools waited for the one query: {f:?}");
    assert_adds_up(&f);
}

#[tokio::test]
async fn concurrent_lookups_of_a_name_wait_for_one_query() {
    let slow = DnsBehaviour::delayed(Duration::from_millis(200), DnsBehaviour::a([WEB], 300));
    let dns = DnsServer::start(DnsZone::new().with("cart.kumo.test", slow)).await.unwrap();
    let resolver = resolver(&dns, DnsConfig::default());

    let answers = join_all((0..20).map(|_| resolver.lookup("cart.kumo.test"))).await;
    for ips in answers {
        assert_eq!(&*ips.unwrap(), [IpAddr::V4(WEB)]);
    }
    assert_eq!(dns.queries_for("cart.kumo.test"), 1);
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.joined, f.queries, f.resolved, f.cache_hits), (20, 19, 1, 1, 0), "{f:?}");

    // Later lookups are answered from the cache.
    resolver.lookup("CART.kumo.test.").await.unwrap();
    assert_eq!((resolver.snapshot().cache_hits, dns.query_count()), (1, 1));
}

#[tokio::test]
async fn a_lookup_given_up_half_way_leaves_the_name_to_the_next() {
    let slow = DnsBehaviour::delayed(Duration::from_millis(300), DnsBehaviour::a([WEB], 300));
    let dns = DnsServer::start(DnsZone::new().with("slow.kumo.test", slow)).await.unwrap();
    let resolver = resolver(&dns, DnsConfig::default());

    // As a fetch whose own deadline ends first drops its lookup.
    let dropped = tokio::time::timeout(Duration::from_millis(50), resolver.lookup("slow.kumo.test")).await;
    assert!(dropped.is_err(), "given up before the answer");
    assert_eq!(resolver.snapshot().in_flight, 0, "its turn at the name servers is back");

    // The next lookup asks again, in the slot the first one left.
    assert_eq!(&*resolver.lookup("slow.kumo.test").await.unwrap(), [IpAddr::V4(WEB)]);
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.queries, f.resolved, f.entries), (2, 2, 1, 1), "{f:?}");
    assert_eq!(dns.queries_for("slow.kumo.test"), 2);
}

#[tokio::test]
async fn an_nxdomain_name_fails_as_dns_at_once_and_is_not_asked_again() {
    let zone = DnsZone::new().with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 600 });
    let dns = DnsServer::start(zone).await.unwrap();
    let site = site().await;
    let resolver = resolver(&dns, DnsConfig::default());
    let d = downloader(1, &resolver);

    let started = Instant::now();
    let e = d.fetch(page("gone.kumo.test", &site)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "an answer, not a wait: {:?}", started.elapsed());
    assert_dns(&e, "gone.kumo.test", "no such name");
    assert!(!e.kind.is_retryable(), "the cache would answer a retry the same");
    // A name that does not exist has no AAAA either: one question.
    assert_eq!(asked(&dns, "gone.kumo.test"), ["A"]);

    // Within the negative TTL, the cache answers.
    let e = d.fetch(page("gone.kumo.test", &site)).await.unwrap_err();
    assert_dns(&e, "gone.kumo.test", "no such name");
    assert_eq!(dns.query_count(), 1);
    assert_eq!(site.hit_count(), 0, "no request was sent");
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.queries, f.cache_hits, f.failures.no_such_name), (2, 1, 1, 1), "{f:?}");
}

#[tokio::test]
async fn a_name_without_an_a_record_is_asked_for_aaaa_once_then_fails_as_no_address() {
    let zone = DnsZone::new().with("empty.kumo.test", DnsBehaviour::NoData { negative_ttl: 120 });
    let dns = DnsServer::start(zone).await.unwrap();
    let site = site().await;

    let resolver_ipv6 = resolver(&dns, DnsConfig::default());
    let e = downloader(1, &resolver_ipv6).fetch(page("empty.kumo.test", &site)).await.unwrap_err();
    assert_dns(&e, "empty.kumo.test", "no address (NODATA)");
    assert_eq!(asked(&dns, "empty.kumo.test"), ["A", "AAAA"]);
    let f = resolver_ipv6.snapshot();
    assert_eq!((f.queries, f.failures.no_address), (2, 1), "{f:?}");

    // IPv4 only: the A question alone.
    let ipv4_only = resolver(&dns, DnsConfig { ipv6: false, ..DnsConfig::default() });
    let e = ipv4_only.lookup("empty.kumo.test").await.unwrap_err();
    assert_eq!(e.kind, DnsErrorKind::NoAddress);
    assert_eq!(asked(&dns, "empty.kumo.test"), ["A", "AAAA", "A"]);
    assert_eq!(site.hit_count(), 0);
}

#[tokio::test]
async fn a_silent_name_fails_as_dns_within_the_resolvers_deadline() {
    let dns = DnsServer::start(DnsZone::new().with("silent.kumo.test", DnsBehaviour::Silent)).await.unwrap();
    let site = site().await;
    // kumo's deadline (600 ms) ends the lookup long before hickory's own (2 s) or the fetch's.
    let deadline = Duration::from_millis(600);
    let cfg = DnsConfig { timeout: deadline, query_timeout: Duration::from_secs(2), ..DnsConfig::default() };
    let resolver = resolver(&dns, cfg);
    let d = downloader(1, &resolver);

    let started = Instant::now();
    let e = d.fetch(page("silent.kumo.test", &site)).await.unwrap_err();
    let took = started.elapsed();
    assert_dns(&e, "silent.kumo.test", "timed out");
    assert!(took >= deadline && took < Duration::from_secs(2), "{took:?}");
    tokio::time::timeout(PATIENCE, dns.wait_for_queries(1)).await.expect("the query reached the server");

    // Backed off: the next fetch fails at once, from the cache, without asking again.
    let started = Instant::now();
    let e = d.fetch(page("silent.kumo.test", &site)).await.unwrap_err();
    assert_dns(&e, "silent.kumo.test", "timed out");
    assert!(started.elapsed() < deadline, "{:?}", started.elapsed());
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.queries, f.cache_hits, f.failures.timeout), (2, 1, 1, 1), "{f:?}");
    assert_eq!((f.in_flight, site.hit_count()), (0, 0));
}

#[tokio::test]
async fn a_server_failure_fails_as_dns_and_is_backed_off() {
    let dns =
        DnsServer::start(DnsZone::new().with("broken.kumo.test", DnsBehaviour::ServFail)).await.unwrap();
    let site = site().await;
    let resolver = resolver(&dns, DnsConfig { attempts: 0, ..DnsConfig::default() });
    let d = downloader(1, &resolver);

    for _ in 0..2 {
        let e = d.fetch(page("broken.kumo.test", &site)).await.unwrap_err();
        assert_dns(&e, "broken.kumo.test", "the name server failed (answered Server Failure)");
    }
    assert_eq!(dns.queries_for("broken.kumo.test"), 1);
    let f = resolver.snapshot();
    assert_eq!((f.failures.server_failure, f.cache_hits), (1, 1), "{f:?}");
}

#[tokio::test]
async fn an_override_is_used_without_a_query() {
    let dns = DnsServer::start(DnsZone::new()).await.unwrap();
    let site = site().await;
    let overrides = vec![("pinned.kumo.test".to_owned(), IpAddr::V4(WEB))];
    let resolver = resolver(&dns, DnsConfig { overrides, ..DnsConfig::default() });

    let r = downloader(1, &resolver).fetch(page("pinned.kumo.test", &site)).await.unwrap();
    assert_eq!(r.status.as_u16(), 200);
    assert_eq!(r.wire.as_ref().unwrap().remote, Some(site.addr()));
    assert_eq!(dns.query_count(), 0, "the zone does not know the name, and was not asked");
    let f = resolver.snapshot();
    assert_eq!((f.lookups, f.overridden, f.queries, f.entries), (1, 1, 0, 0), "{f:?}");
}

#[tokio::test]
async fn with_servers_given_only_they_answer() {
    // The machine's own name: the system resolves it (/etc/hosts), the test server does not.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_ascii_lowercase();
    let system = tokio::net::lookup_host((hostname.as_str(), 80)).await;
    assert!(system.is_ok_and(|mut a| a.next().is_some()), "the system resolves {hostname}");
    let dns = DnsServer::start(DnsZone::new()).await.unwrap();
    let site = site().await;
    let resolver = resolver(&dns, DnsConfig::default());

    let e = downloader(1, &resolver).fetch(page(&hostname, &site)).await.unwrap_err();
    assert_dns(&e, &hostname, "no such name");
    let e = resolver.lookup("elsewhere.kumo.test").await.unwrap_err();
    assert_eq!((e.kind, e.host.as_str()), (DnsErrorKind::NoSuchName, "elsewhere.kumo.test"));
    assert_eq!(asked(&dns, &hostname), ["A"], "asked the test server, as a fully qualified name");
    assert_eq!(dns.query_count(), 2);
    assert_eq!(site.hit_count(), 0);
}

#[tokio::test]
async fn answers_are_kept_within_the_ttl_bounds() {
    let zone = DnsZone::new()
        .with("shop.kumo.test", DnsBehaviour::a([WEB], 3600))
        .with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 3600 });
    let dns = DnsServer::start(zone).await.unwrap();
    // Ceilings of one second for both: the answers' hour is cut to that.
    let second = Duration::from_secs(1);
    let cfg = DnsConfig {
        min_ttl: second,
        max_ttl: second,
        negative_min_ttl: second,
        negative_max_ttl: second,
        ..DnsConfig::default()
    };
    let resolver = resolver(&dns, cfg);

    let asked_at = Instant::now();
    resolver.lookup("shop.kumo.test").await.unwrap();
    resolver.lookup("gone.kumo.test").await.unwrap_err();
    resolver.lookup("shop.kumo.test").await.unwrap();
    resolver.lookup("gone.kumo.test").await.unwrap_err();
    assert!(asked_at.elapsed() < second, "the check ran within the TTL");
    assert_eq!(dns.query_count(), 2);
    // An expiry is a time, not an event: sleep past it.
    tokio::time::sleep_until((asked_at + second + Duration::from_millis(100)).into()).await;
    resolver.lookup("shop.kumo.test").await.unwrap();
    resolver.lookup("gone.kumo.test").await.unwrap_err();
    assert_eq!((dns.queries_for("shop.kumo.test"), dns.queries_for("gone.kumo.test")), (2, 2));
}

#[tokio::test]
async fn the_figures_count_lookups_hits_queries_and_failures() {
    let zone = DnsZone::new()
        .with("shop.kumo.test", DnsBehaviour::a([WEB], 300))
        .with("broken.kumo.test", DnsBehaviour::ServFail);
    let dns = DnsServer::start(zone).await.unwrap();
    let overrides = vec![("pinned.kumo.test".to_owned(), IpAddr::V4(WEB))];
    let resolver = resolver(&dns, DnsConfig { overrides, attempts: 0, ..DnsConfig::default() });

    for host in ["shop.kumo.test", "shop.kumo.test", "pinned.kumo.test", "127.0.0.7"] {
        resolver.lookup(host).await.unwrap();
    }
    for host in ["gone.kumo.test", "gone.kumo.test", "broken.kumo.test", "bad_name..kumo.test"] {
        resolver.lookup(host).await.unwrap_err();
    }
    let f = resolver.snapshot();
    // The IP literal is no lookup; the malformed name is refused before any query.
    assert_eq!((f.lookups, f.overridden, f.cache_hits, f.joined), (7, 1, 2, 0), "{f:?}");
    assert_eq!((f.queries, f.resolved), (3, 1), "{f:?}");
    let failures = (f.failures.no_such_name, f.failures.server_failure, f.failures.other);
    assert_eq!((failures, f.failures.total()), ((1, 1, 1), 3), "{f:?}");
    assert_eq!(f.failures.of(DnsErrorKind::NoSuchName), 1);
    assert_eq!((f.entries, f.in_flight), (4, 0), "{f:?}");
    assert_adds_up(&f);
    assert_eq!(dns.query_count(), 3);

    let json = serde_json::to_value(f).unwrap();
    assert_eq!(json["cache_hits"], 2);
    assert_eq!(json["failures"]["no_such_name"], 1);
}

/// Answers in a vector: the crawl state's storage, as far as the resolver can tell.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<kumo_core::StoredAnswer>>);

impl kumo_core::AnswerStorage for Kept {
    fn load(&self) -> Result<Vec<kumo_core::StoredAnswer>, kumo_core::AnswerStorageError> {
        Ok(self.0.lock().unwrap().clone())
    }

    fn save(&self, answers: &[kumo_core::StoredAnswer]) -> Result<(), kumo_core::AnswerStorageError> {
        let mut kept = self.0.lock().unwrap();
        for a in answers {
            kept.retain(|k| k.host != a.host);
            kept.push(a.clone());
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_resolver_takes_back_the_answers_an_earlier_run_kept_while_they_stand() {
    let zone = DnsZone::new()
        .with("shop.kumo.test", DnsBehaviour::a([WEB], 3600))
        .with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 3600 })
        .with("soon.kumo.test", DnsBehaviour::a([WEB], 1));
    let dns = DnsServer::start(zone).await.unwrap();
    let kept = Arc::new(Kept::default());
    // A second for the shortest answer, so that it has expired when the next run starts.
    let cfg = DnsConfig { min_ttl: Duration::from_secs(1), ..DnsConfig::default() };

    let first = resolver(&dns, cfg.clone());
    assert_eq!(first.keep_answers_in(kept.clone()).unwrap(), 0, "nothing kept yet");
    let asked_at = Instant::now();
    for name in ["shop.kumo.test", "soon.kumo.test"] {
        assert_eq!(&first.lookup(name).await.unwrap()[..], [IpAddr::V4(WEB)]);
    }
    assert_eq!(first.lookup("gone.kumo.test").await.unwrap_err().kind, DnsErrorKind::NoSuchName);
    assert_eq!(dns.query_count(), 3);
    assert_eq!(kept.0.lock().unwrap().len(), 3, "each answer is kept as it comes");

    // The next run, past the short answer's second.
    tokio::time::sleep_until((asked_at + Duration::from_millis(1_100)).into()).await;
    let next = resolver(&dns, cfg);
    assert_eq!(next.keep_answers_in(kept.clone()).unwrap(), 2, "the two answers that stand");
    assert_eq!(&next.lookup("shop.kumo.test").await.unwrap()[..], [IpAddr::V4(WEB)]);
    let e = next.lookup("gone.kumo.test").await.unwrap_err();
    assert_eq!((e.kind, e.host.as_str()), (DnsErrorKind::NoSuchName, "gone.kumo.test"));
    assert_eq!(dns.query_count(), 3, "neither was asked again");
    next.lookup("soon.kumo.test").await.unwrap();
    assert_eq!(dns.queries_for("soon.kumo.test"), 2, "the expired one was");
    let f = next.snapshot();
    assert_eq!((f.cache_hits, f.queries), (2, 1), "{f:?}");
}
