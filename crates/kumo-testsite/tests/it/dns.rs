//! The test DNS server as an independent client sees it: hickory's resolver (the family the
//! crawler uses), pointed at this server alone, and raw hickory-proto queries over UDP.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, MessageType, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use hickory_resolver::config::{
    LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError, NoRecords};
use hickory_resolver::{Resolver, TokioResolver};
use kumo_testsite::{DnsBehaviour, DnsServer, DnsZone, HostKind, SyntheticWeb, WebConfig};
use tokio::net::UdpSocket;
use tokio::time::timeout;

/// A bound for every wait on an event that should come at once.
const PATIENCE: Duration = Duration::from_secs(5);

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, last)
}

/// A resolver that asks `server` only, over UDP, in one round per lookup, for A records only,
/// with no hosts file and no search list.
///
/// hickory's `attempts` counts retries after a failed round, so 0 is one round. Within a round
/// its UDP client still resends an unanswered query every max(333 ms, 1.2 × the server's
/// smoothed RTT), at most 3 times, until `timeout`.
fn resolver(server: SocketAddr, timeout: Duration) -> TokioResolver {
    let mut name_server = NameServerConfig::udp(server.ip());
    name_server.connections[0].port = server.port();
    let mut opts = ResolverOpts::default();
    opts.timeout = timeout;
    opts.attempts = 0;
    opts.ip_strategy = LookupIpStrategy::Ipv4Only;
    opts.use_hosts_file = ResolveHosts::Never;
    Resolver::builder_with_config(
        ResolverConfig::from_name_servers(vec![name_server]),
        TokioRuntimeProvider::default(),
    )
    .with_options(opts)
    .build()
    .unwrap()
}

/// The addresses of `name`, and the lookup's `valid_until`.
async fn lookup(resolver: &TokioResolver, name: &str) -> Result<(Vec<IpAddr>, Instant), NetError> {
    let found = resolver.lookup_ip(name).await?;
    Ok((found.iter().collect(), found.valid_until()))
}

/// The `NoRecords` inside a "no records found" error.
fn no_records(err: &NetError) -> &NoRecords {
    match err {
        NetError::Dns(DnsError::NoRecordsFound(no)) => no,
        other => panic!("expected no records, got {other:?}"),
    }
}

/// Asks `server` for `name`/`record_type` over a fresh UDP socket and returns the reply.
async fn ask(server: SocketAddr, name: &str, record_type: RecordType) -> Message {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut request = Message::query();
    request.add_query(Query::query(Name::from_ascii(name).unwrap(), record_type));
    socket.send_to(&request.to_vec().unwrap(), server).await.unwrap();
    let mut buf = [0u8; 2048];
    let (len, _) = timeout(PATIENCE, socket.recv_from(&mut buf)).await.expect("an answer").unwrap();
    let reply = Message::from_vec(&buf[..len]).unwrap();
    assert_eq!((reply.id, reply.message_type), (request.id, MessageType::Response));
    reply
}

#[tokio::test]
async fn an_a_name_resolves_to_its_addresses_with_its_ttl() {
    let zone = DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([ip(2), ip(3)], 300));
    let dns = DnsServer::start(zone).await.unwrap();
    let resolver = resolver(dns.addr(), Duration::from_secs(2));

    let before = Instant::now();
    let (addrs, valid_until) = lookup(&resolver, "shop.kumo.test.").await.unwrap();
    let after = Instant::now();
    let addrs: HashSet<IpAddr> = addrs.into_iter().collect();
    assert_eq!(addrs, HashSet::from([IpAddr::V4(ip(2)), IpAddr::V4(ip(3))]));
    let ttl = Duration::from_secs(300);
    assert!(valid_until >= before + ttl && valid_until <= after + ttl, "valid_until is the TTL's");

    let log = dns.queries();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].name.as_str(), log[0].record_type.as_str()), ("shop.kumo.test", "A"));
    assert!(before <= log[0].at && log[0].at <= after);

    // Within the TTL the resolver's cache answers: no second query.
    lookup(&resolver, "shop.kumo.test.").await.unwrap();
    assert_eq!(dns.query_count(), 1);

    // Any case is the same name to the server, and the answer keeps the asker's case.
    let reply = ask(dns.addr(), "SHOP.Kumo.TEST.", RecordType::A).await;
    assert_eq!(reply.response_code, ResponseCode::NoError);
    assert_eq!(reply.answers.len(), 2);
    assert!(reply.answers.iter().all(|a| a.name.to_ascii() == "SHOP.Kumo.TEST." && a.ttl == 300));
    assert_eq!(dns.queries_for("shop.kumo.test."), 2);
}

#[tokio::test]
async fn nxdomain_is_cached_for_its_negative_ttl() {
    const NEGATIVE_TTL: u32 = 2;
    let zone = DnsZone::new().with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: NEGATIVE_TTL });
    let dns = DnsServer::start(zone).await.unwrap();
    let resolver = resolver(dns.addr(), Duration::from_secs(2));

    let err = lookup(&resolver, "gone.kumo.test.").await.unwrap_err();
    let answered = Instant::now();
    assert!(err.is_nx_domain(), "{err:?}");
    assert_eq!(no_records(&err).negative_ttl, Some(NEGATIVE_TTL));
    assert_eq!(dns.queries_for("gone.kumo.test"), 1);

    // While the negative TTL lasts, the resolver's negative cache answers.
    let err = lookup(&resolver, "gone.kumo.test.").await.unwrap_err();
    assert!(err.is_nx_domain(), "{err:?}");
    assert!(answered.elapsed() < Duration::from_secs(NEGATIVE_TTL.into()), "the check ran in the TTL");
    assert_eq!(dns.queries_for("gone.kumo.test"), 1, "the second lookup came from the cache");

    // Once it has passed, the resolver asks again. (An expiry is a time, not an event: sleep.)
    tokio::time::sleep_until((answered + Duration::from_millis(u64::from(NEGATIVE_TTL) * 1000 + 100)).into())
        .await;
    let err = lookup(&resolver, "gone.kumo.test.").await.unwrap_err();
    assert!(err.is_nx_domain(), "{err:?}");
    assert_eq!(dns.queries_for("gone.kumo.test"), 2);

    // A name the zone does not know: NXDOMAIN with the default negative TTL.
    let err = lookup(&resolver, "nowhere.kumo.test.").await.unwrap_err();
    assert!(err.is_nx_domain(), "{err:?}");
    assert_eq!(no_records(&err).negative_ttl, Some(DnsZone::DEFAULT_NEGATIVE_TTL));
}

#[tokio::test]
async fn nodata_is_noerror_without_an_answer() {
    let zone = DnsZone::new()
        .with("shop.kumo.test", DnsBehaviour::a([ip(2)], 300))
        .with("empty.kumo.test", DnsBehaviour::NoData { negative_ttl: 30 });
    let dns = DnsServer::start(zone).await.unwrap();

    // AAAA for an A-only name, raw: NOERROR, no answer, the SOA carrying the negative TTL.
    let reply = ask(dns.addr(), "shop.kumo.test.", RecordType::AAAA).await;
    assert_eq!(reply.response_code, ResponseCode::NoError);
    assert!(reply.answers.is_empty());
    let [soa] = reply.authorities.as_slice() else { panic!("one SOA: {reply}") };
    let RData::SOA(data) = &soa.data else { panic!("not an SOA: {soa}") };
    assert_eq!((soa.ttl, data.minimum), (DnsZone::DEFAULT_NEGATIVE_TTL, DnsZone::DEFAULT_NEGATIVE_TTL));

    // The resolver sees NODATA: no records, but not NXDOMAIN, cacheable for the SOA's TTL.
    let resolver = resolver(dns.addr(), Duration::from_secs(2));
    let err = resolver.lookup("shop.kumo.test.", RecordType::AAAA).await.unwrap_err();
    assert!(err.is_no_records_found() && !err.is_nx_domain(), "{err:?}");
    assert_eq!(no_records(&err).response_code, ResponseCode::NoError);
    let err = lookup(&resolver, "empty.kumo.test.").await.unwrap_err();
    assert!(err.is_no_records_found() && !err.is_nx_domain(), "{err:?}");
    assert_eq!(no_records(&err).negative_ttl, Some(30));
    let types: Vec<String> = dns.queries().into_iter().map(|q| q.record_type).collect();
    assert_eq!(types, ["AAAA", "AAAA", "A"]);
}

#[tokio::test]
async fn a_silent_name_times_out_at_the_client() {
    let zone = DnsZone::new().with("silent.kumo.test", DnsBehaviour::Silent);
    let dns = DnsServer::start(zone).await.unwrap();
    // A timeout under the 333 ms resend interval: exactly one datagram leaves the client.
    let resolver = resolver(dns.addr(), Duration::from_millis(300));

    let err = lookup(&resolver, "silent.kumo.test.").await.unwrap_err();
    assert!(matches!(err, NetError::Timeout), "{err:?}");
    timeout(PATIENCE, dns.wait_for_queries(1)).await.expect("the query reached the server");
    assert_eq!(dns.queries_for("silent.kumo.test"), 1, "one round, one query");
}

#[tokio::test]
async fn servfail_is_a_server_failure_and_not_cached() {
    let zone = DnsZone::new().with("broken.kumo.test", DnsBehaviour::ServFail);
    let dns = DnsServer::start(zone).await.unwrap();
    let resolver = resolver(dns.addr(), Duration::from_secs(2));

    for expected_queries in 1..=2 {
        let err = lookup(&resolver, "broken.kumo.test.").await.unwrap_err();
        assert!(matches!(err, NetError::Dns(DnsError::ResponseCode(ResponseCode::ServFail))), "{err:?}");
        assert_eq!(dns.queries_for("broken.kumo.test"), expected_queries);
    }
}

#[tokio::test]
async fn a_delayed_answer_holds_up_no_other() {
    const DELAY: Duration = Duration::from_millis(800);
    let zone = DnsZone::new()
        .with("slow.kumo.test", DnsBehaviour::delayed(DELAY, DnsBehaviour::a([ip(4)], 60)))
        .with("fast.kumo.test", DnsBehaviour::a([ip(5)], 60));
    let dns = DnsServer::start(zone).await.unwrap();
    let resolver = resolver(dns.addr(), Duration::from_secs(3));

    let slow = tokio::spawn({
        let resolver = resolver.clone();
        async move { lookup(&resolver, "slow.kumo.test.").await }
    });
    timeout(PATIENCE, dns.wait_for_queries(1)).await.expect("the slow query arrived");
    let (fast, _) = lookup(&resolver, "fast.kumo.test.").await.unwrap();
    let fast_done = Instant::now();
    let (slow, _) = slow.await.unwrap().unwrap();
    let slow_done = Instant::now();

    assert_eq!((fast, slow), (vec![IpAddr::V4(ip(5))], vec![IpAddr::V4(ip(4))]));
    // The resolver resends the unanswered slow query (see `resolver`): each copy is logged,
    // and the first one's answer is the one that counts.
    let log = dns.queries();
    let first = |name: &str| log.iter().find(|q| q.name == name).map(|q| q.at).unwrap();
    let slow_asked = first("slow.kumo.test");
    assert!(slow_asked < first("fast.kumo.test"), "the slow query came first");
    assert_eq!(dns.queries_for("fast.kumo.test"), 1);
    assert!(fast_done < slow_asked + DELAY, "the fast answer came while the slow one waited");
    assert!(slow_done >= slow_asked + DELAY, "the slow answer came after its delay");
}

#[tokio::test]
async fn malformed_packets_are_ignored() {
    let zone = DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([ip(2)], 300));
    let dns = DnsServer::start(zone).await.unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();

    // Seeded xorshift noise, so that every run sends the same bytes.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut garbage: Vec<Vec<u8>> =
        (0..200).map(|_| (0..next() % 100).map(|_| next() as u8).collect()).collect();
    // A query cut short, and a response (QR set), are not queries to answer either.
    let query = ask_bytes("shop.kumo.test.", RecordType::A);
    garbage.push(query[..query.len() - 3].to_vec());
    let mut response = Message::from_vec(&query).unwrap();
    response.metadata.message_type = MessageType::Response;
    garbage.push(response.to_vec().unwrap());
    for packet in &garbage {
        socket.send_to(packet, dns.addr()).await.unwrap();
    }

    // The server reads datagrams in order, so by the time this is answered it has seen all.
    let reply = ask(dns.addr(), "shop.kumo.test.", RecordType::A).await;
    assert_eq!(reply.answers.len(), 1);
    assert_eq!(dns.ignored_count(), garbage.len());
    assert_eq!(dns.query_count(), 1);
}

/// A query for `name`/`record_type`, encoded.
fn ask_bytes(name: &str, record_type: RecordType) -> Vec<u8> {
    let mut request = Message::query();
    request.add_query(Query::query(Name::from_ascii(name).unwrap(), record_type));
    request.to_vec().unwrap()
}

#[tokio::test]
async fn a_name_can_move_while_serving() {
    let zone = DnsZone::new().with("moving.kumo.test", DnsBehaviour::a([ip(6)], 300));
    let dns = DnsServer::start(zone).await.unwrap();
    let resolver = resolver(dns.addr(), Duration::from_secs(2));
    assert_eq!(lookup(&resolver, "moving.kumo.test.").await.unwrap().0, [IpAddr::V4(ip(6))]);

    dns.set("moving.kumo.test", DnsBehaviour::a([ip(7)], 300));
    resolver.clear_cache();
    assert_eq!(lookup(&resolver, "moving.kumo.test.").await.unwrap().0, [IpAddr::V4(ip(7))]);

    dns.remove("moving.kumo.test");
    resolver.clear_cache();
    assert!(lookup(&resolver, "moving.kumo.test.").await.unwrap_err().is_nx_domain());
    assert_eq!(dns.query_count(), 3);
}

#[tokio::test]
async fn shutdown_frees_the_port() {
    let zone = DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([ip(2)], 300));
    let dns = DnsServer::start(zone.clone()).await.unwrap();
    let addr = dns.addr();
    dns.shutdown().await;
    // The same address binds again, and the new server answers there.
    let again = DnsServer::start_on(addr, zone).await.unwrap();
    assert_eq!(again.addr(), addr);
    assert_eq!(ask(addr, "shop.kumo.test.", RecordType::A).await.answers.len(), 1);
}

#[tokio::test]
async fn a_synthetic_webs_dns_server_answers_for_every_name() {
    let small =
        WebConfig { hosts: 40, addresses: 3, latency: Duration::ZERO, slow_hosts: 0, ..WebConfig::default() };
    let web = SyntheticWeb::start(small).await.unwrap();
    let truth = web.truth();
    // Under the resolver's 333 ms resend interval: a silent name costs one datagram.
    let dns = resolver(web.dns_addr(), Duration::from_millis(300));
    let mut asked = Vec::new();
    for kind in [HostKind::Ordinary, HostKind::Trap, HostKind::Spam, HostKind::Refusing] {
        for name in truth.names(kind).into_iter().take(3) {
            let found: Vec<IpAddr> = dns.lookup_ip(format!("{name}.")).await.unwrap().iter().collect();
            let addr = truth.host(name).unwrap().addr.unwrap();
            assert_eq!(found, [IpAddr::V4(addr)], "{name}");
            // A refusing name points where nothing of the web listens.
            assert_eq!(truth.addresses().contains(&addr), kind != HostKind::Refusing, "{name}");
            asked.push(name);
        }
    }
    for name in truth.names(HostKind::NxDomain) {
        let err = dns.lookup_ip(format!("{name}.")).await.unwrap_err();
        assert!(err.is_nx_domain(), "{name}: {err:?}");
        asked.push(name);
    }
    let silent = truth.names(HostKind::Silent)[0];
    let err = dns.lookup_ip(format!("{silent}.")).await.unwrap_err();
    assert!(matches!(err, NetError::Timeout), "{silent}: {err:?}");
    asked.push(silent);
    timeout(PATIENCE, web.dns().wait_for_queries(asked.len())).await.expect("every query arrived");
    for name in asked {
        assert_eq!(web.dns().queries_for(name), 1, "{name}");
    }
    web.shutdown().await;
}
