//! The zone's replies, message by message, without a socket: names, rcodes, the SOA of
//! negative answers, delays, the header, EDNS and truncation.

use std::net::Ipv4Addr;
use std::time::Duration;

use hickory_proto::op::{Edns, Message, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{DNSClass, Name, RData, RecordType};

use super::zone::{self, DnsBehaviour, DnsZone, Reply};

fn query(name: &str, record_type: RecordType) -> Message {
    let mut m = Message::query();
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), record_type));
    m
}

fn reply(zone: &DnsZone, request: &Message) -> Reply {
    zone.reply(request).expect("a reply")
}

/// The (TTL, SOA minimum) of a negative reply's single authority record.
fn soa_ttls(m: &Message) -> (u32, u32) {
    assert_eq!(m.authorities.len(), 1, "one SOA: {m}");
    let record = &m.authorities[0];
    let RData::SOA(soa) = &record.data else { panic!("not an SOA: {record}") };
    (record.ttl, soa.minimum)
}

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, last)
}

#[test]
fn names_ignore_case_and_the_trailing_dot() {
    let zone = DnsZone::new().with("Shop.Kumo.Test.", DnsBehaviour::a([ip(2), ip(3)], 300));
    assert!(zone.get("shop.kumo.test").is_some());
    assert!(zone.get("SHOP.KUMO.TEST.").is_some());
    assert_eq!(zone.len(), 1);

    let request = query("sHoP.kumo.TEST.", RecordType::A);
    let r = reply(&zone, &request);
    assert_eq!(r.after, Duration::ZERO);
    assert_eq!(r.message.response_code, ResponseCode::NoError);
    let answers: Vec<_> =
        r.message.answers.iter().map(|a| (a.name.to_ascii(), a.ttl, a.data.clone())).collect();
    // The owner keeps the asker's case (0x20 randomisation compares it).
    let owner = "sHoP.kumo.TEST.".to_string();
    assert_eq!(answers, vec![(owner.clone(), 300, RData::A(A(ip(2)))), (owner, 300, RData::A(A(ip(3))))]);
    assert!(r.message.authorities.is_empty());
}

#[test]
fn the_header_answers_the_request() {
    let zone = DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([ip(2)], 60));
    let request = query("shop.kumo.test.", RecordType::A);
    let r = reply(&zone, &request).message;
    assert_eq!(r.id, request.id);
    assert_eq!(r.message_type, hickory_proto::op::MessageType::Response);
    assert!(r.authoritative);
    assert!(r.recursion_desired, "RD is copied from the query");
    assert_eq!(r.queries, request.queries, "the question is echoed");
}

#[test]
fn unknown_names_are_nxdomain_with_the_default_negative_ttl() {
    let zone = DnsZone::new();
    let r = reply(&zone, &query("nowhere.kumo.test.", RecordType::A)).message;
    assert_eq!(r.response_code, ResponseCode::NXDomain);
    assert!(r.answers.is_empty());
    let default = DnsZone::DEFAULT_NEGATIVE_TTL;
    assert_eq!(soa_ttls(&r), (default, default));
    assert_eq!(r.authorities[0].name.to_ascii(), "test.", "the SOA is the TLD's");

    let zone = DnsZone::new().with_default_negative_ttl(7);
    let r = reply(&zone, &query("nowhere.kumo.test.", RecordType::A)).message;
    assert_eq!(soa_ttls(&r), (7, 7));
}

#[test]
fn negative_behaviours_carry_their_ttl() {
    let zone = DnsZone::new()
        .with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 5 })
        .with("empty.kumo.test", DnsBehaviour::NoData { negative_ttl: 9 })
        .with("shop.kumo.test", DnsBehaviour::a([ip(2)], 300));
    let r = reply(&zone, &query("gone.kumo.test.", RecordType::A)).message;
    assert_eq!((r.response_code, soa_ttls(&r)), (ResponseCode::NXDomain, (5, 5)));
    let r = reply(&zone, &query("empty.kumo.test.", RecordType::A)).message;
    assert_eq!((r.response_code, soa_ttls(&r)), (ResponseCode::NoError, (9, 9)));
    assert!(r.answers.is_empty());
    // AAAA (or any other type) for an A-only name: NODATA with the default negative TTL.
    for record_type in [RecordType::AAAA, RecordType::MX, RecordType::TXT] {
        let r = reply(&zone, &query("shop.kumo.test.", record_type)).message;
        assert_eq!(r.response_code, ResponseCode::NoError);
        assert!(r.answers.is_empty(), "{record_type}");
        assert_eq!(soa_ttls(&r).1, DnsZone::DEFAULT_NEGATIVE_TTL);
    }
    // An A name without addresses is NODATA too, not an empty answer without an SOA.
    let zone = DnsZone::new().with("bare.kumo.test", DnsBehaviour::a([], 300));
    let r = reply(&zone, &query("bare.kumo.test.", RecordType::A)).message;
    assert_eq!((r.response_code, r.answers.len()), (ResponseCode::NoError, 0));
    assert_eq!(soa_ttls(&r).1, DnsZone::DEFAULT_NEGATIVE_TTL);
}

#[test]
fn servfail_silence_and_delays() {
    let slow_a = DnsBehaviour::delayed(Duration::from_secs(1), DnsBehaviour::a([ip(4)], 30));
    let zone = DnsZone::new()
        .with("broken.kumo.test", DnsBehaviour::ServFail)
        .with("silent.kumo.test", DnsBehaviour::Silent)
        .with("slow.kumo.test", DnsBehaviour::delayed(Duration::from_secs(2), slow_a))
        .with("slow-silent.kumo.test", DnsBehaviour::delayed(Duration::from_secs(1), DnsBehaviour::Silent));
    let r = reply(&zone, &query("broken.kumo.test.", RecordType::A));
    assert_eq!(r.message.response_code, ResponseCode::ServFail);
    assert!(r.message.answers.is_empty() && r.message.authorities.is_empty());
    assert!(zone.reply(&query("silent.kumo.test.", RecordType::A)).is_none());
    assert!(zone.reply(&query("slow-silent.kumo.test.", RecordType::A)).is_none());
    let r = reply(&zone, &query("slow.kumo.test.", RecordType::A));
    assert_eq!(r.after, Duration::from_secs(3), "nested delays add up");
    assert_eq!(r.message.answers.len(), 1);
}

#[test]
fn odd_queries_get_error_codes() {
    let zone = DnsZone::new().with("shop.kumo.test", DnsBehaviour::a([ip(2)], 300));
    let mut chaos = query("shop.kumo.test.", RecordType::A);
    let mut q = chaos.queries.pop().unwrap();
    q.set_query_class(DNSClass::CH);
    chaos.add_query(q);
    assert_eq!(reply(&zone, &chaos).message.response_code, ResponseCode::Refused);

    let mut two = query("shop.kumo.test.", RecordType::A);
    two.add_query(Query::query(Name::from_ascii("shop.kumo.test.").unwrap(), RecordType::AAAA));
    assert_eq!(reply(&zone, &two).message.response_code, ResponseCode::FormErr);

    let mut none = query("shop.kumo.test.", RecordType::A);
    none.queries.clear();
    assert_eq!(reply(&zone, &none).message.response_code, ResponseCode::FormErr);

    let mut status = query("shop.kumo.test.", RecordType::A);
    status.metadata.op_code = OpCode::Status;
    assert_eq!(reply(&zone, &status).message.response_code, ResponseCode::NotImp);
}

#[test]
fn edns_is_answered_in_kind_and_sizes_the_reply() {
    // 40 addresses: about 700 bytes, over 512 but within 1232.
    let many: Vec<Ipv4Addr> = (1..=40).map(|i| Ipv4Addr::new(127, 0, 1, i)).collect();
    let zone = DnsZone::new().with("big.kumo.test", DnsBehaviour::a(many, 300));

    let plain = query("big.kumo.test.", RecordType::A);
    let r = reply(&zone, &plain).message;
    assert!(r.edns.is_none(), "no OPT record for a query without one");
    let bytes = zone::encode(&r, &plain).unwrap();
    assert!(bytes.len() <= 512);
    let got = Message::from_vec(&bytes).unwrap();
    assert!(got.truncation, "too big for 512 bytes: truncated");
    assert!(got.answers.is_empty());
    assert_eq!(got.id, plain.id);

    let mut with_edns = query("big.kumo.test.", RecordType::A);
    let mut edns = Edns::new();
    edns.set_max_payload(4096);
    with_edns.set_edns(edns);
    let r = reply(&zone, &with_edns).message;
    assert!(r.edns.is_some(), "OPT answered with OPT");
    let bytes = zone::encode(&r, &with_edns).unwrap();
    assert!(bytes.len() > 512 && bytes.len() <= 1232, "{} bytes", bytes.len());
    let got = Message::from_vec(&bytes).unwrap();
    assert!(!got.truncation);
    assert_eq!(got.answers.len(), 40);
}

#[test]
fn insert_and_remove_change_a_name() {
    let mut zone = DnsZone::new();
    assert!(zone.is_empty());
    assert_eq!(zone.insert("moving.kumo.test", DnsBehaviour::a([ip(6)], 0)), None);
    let old = zone.insert("MOVING.kumo.test.", DnsBehaviour::a([ip(7)], 0));
    assert_eq!(old, Some(DnsBehaviour::a([ip(6)], 0)));
    assert_eq!(zone.remove("moving.kumo.test"), Some(DnsBehaviour::a([ip(7)], 0)));
    let r = reply(&zone, &query("moving.kumo.test.", RecordType::A)).message;
    assert_eq!(r.response_code, ResponseCode::NXDomain);
}
