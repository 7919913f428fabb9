//! The test DNS server's table of names (what each name gets) and the pure step from a query
//! message to the reply it earns: a message and when to send it, or nothing. No sockets here,
//! so the unit tests drive it directly.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use hickory_proto::op::{Edns, Message, Metadata, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::{A, SOA};
use hickory_proto::rr::{DNSClass, Name, RData, Record, RecordType};

/// The UDP payload a client may receive when it did not say (no EDNS): RFC 1035's 512 bytes.
const CLASSIC_UDP_PAYLOAD: usize = 512;

/// The UDP payload this server advertises and sends at most: the DNS flag day's 1232 bytes,
/// which never fragments on a usual path.
const MAX_UDP_PAYLOAD: u16 = 1232;

/// What the server does with a query for one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DnsBehaviour {
    /// The name has these IPv4 addresses (`A` records, in this order), each with this TTL in
    /// seconds. A query of another type for the name is answered as [`DnsBehaviour::NoData`]
    /// with the zone's default negative TTL, as a real zone answers AAAA for an A-only name
    /// (and so is an A query when `addrs` is empty).
    A {
        /// The addresses, in answer order.
        addrs: Vec<Ipv4Addr>,
        /// Their TTL, in seconds.
        ttl: u32,
    },
    /// NXDOMAIN, with an SOA in the authority section whose TTL and minimum are both
    /// `negative_ttl`: how long a resolver may cache the name's non-existence (RFC 2308).
    NxDomain {
        /// The SOA's TTL and minimum, in seconds.
        negative_ttl: u32,
    },
    /// NOERROR without an answer (the name exists, but has no record of the type asked), with
    /// the SOA in the authority section as for [`DnsBehaviour::NxDomain`].
    NoData {
        /// The SOA's TTL and minimum, in seconds.
        negative_ttl: u32,
    },
    /// Never answers: the client times out.
    Silent,
    /// SERVFAIL, with nothing else.
    ServFail,
    /// Answers as `then` does, `delay` after the query arrived.
    Delayed {
        /// How long after the query arrived the answer goes.
        delay: Duration,
        /// The answer.
        then: Box<DnsBehaviour>,
    },
}

impl DnsBehaviour {
    /// `A` records for `addrs` with `ttl` seconds.
    pub fn a(addrs: impl IntoIterator<Item = Ipv4Addr>, ttl: u32) -> DnsBehaviour {
        DnsBehaviour::A { addrs: addrs.into_iter().collect(), ttl }
    }

    /// `then`, answered `delay` late.
    pub fn delayed(delay: Duration, then: DnsBehaviour) -> DnsBehaviour {
        DnsBehaviour::Delayed { delay, then: Box::new(then) }
    }
}

/// A table of names and their [`DnsBehaviour`]s. Names are case-insensitive and may be
/// written with or without the trailing dot; a name not in the table is NXDOMAIN with the
/// default negative TTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsZone {
    names: HashMap<String, DnsBehaviour>,
    default_negative_ttl: u32,
}

impl Default for DnsZone {
    fn default() -> Self {
        DnsZone::new()
    }
}

/// A reply the zone chose for one query: the message, and how long after the query to send it.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) after: Duration,
    pub(crate) message: Message,
}

impl DnsZone {
    /// The negative TTL of unknown names and of NODATA for A-only names, unless set otherwise.
    pub const DEFAULT_NEGATIVE_TTL: u32 = 60;

    /// An empty zone: every name is NXDOMAIN.
    pub fn new() -> DnsZone {
        DnsZone { names: HashMap::new(), default_negative_ttl: DnsZone::DEFAULT_NEGATIVE_TTL }
    }

    /// Adds (or replaces) `name`.
    pub fn with(mut self, name: &str, behaviour: DnsBehaviour) -> DnsZone {
        self.insert(name, behaviour);
        self
    }

    /// The negative TTL for names not in the table and for NODATA on A-only names.
    pub fn with_default_negative_ttl(mut self, ttl: u32) -> DnsZone {
        self.default_negative_ttl = ttl;
        self
    }

    /// Adds or replaces `name`; returns what it had.
    pub fn insert(&mut self, name: &str, behaviour: DnsBehaviour) -> Option<DnsBehaviour> {
        self.names.insert(zone_key(name), behaviour)
    }

    /// Removes `name` (it becomes NXDOMAIN); returns what it had.
    pub fn remove(&mut self, name: &str) -> Option<DnsBehaviour> {
        self.names.remove(&zone_key(name))
    }

    /// What `name` gets, if the table has it.
    pub fn get(&self, name: &str) -> Option<&DnsBehaviour> {
        self.names.get(&zone_key(name))
    }

    /// Names in the table.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table has no name: every name is NXDOMAIN.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The reply to `request`, a decoded message whose QR bit says "query"; `None` when the
    /// server must stay silent.
    pub(crate) fn reply(&self, request: &Message) -> Option<Reply> {
        let now = |message| Some(Reply { after: Duration::ZERO, message });
        if request.op_code != OpCode::Query {
            return now(header_only(request, ResponseCode::NotImp));
        }
        // A query carries exactly one question (RFC 9619); anything else is malformed.
        let [query] = request.queries.as_slice() else {
            return now(header_only(request, ResponseCode::FormErr));
        };
        if query.query_class() != DNSClass::IN {
            return now(header_only(request, ResponseCode::Refused));
        }
        match self.names.get(&zone_key(&query.name().to_ascii())) {
            Some(behaviour) => self.answer(request, query, behaviour, Duration::ZERO),
            None => now(negative(request, query, ResponseCode::NXDomain, self.default_negative_ttl)),
        }
    }

    /// The reply `behaviour` gives, `after` late (delays nest by adding up).
    fn answer(
        &self,
        request: &Message,
        query: &Query,
        behaviour: &DnsBehaviour,
        after: Duration,
    ) -> Option<Reply> {
        let message = match behaviour {
            DnsBehaviour::A { addrs, ttl } if query.query_type() == RecordType::A && !addrs.is_empty() => {
                let mut message = header_only(request, ResponseCode::NoError);
                // The answer's owner is the name as asked, case and all: resolvers that
                // randomise the case (0x20) compare it.
                let records =
                    addrs.iter().map(|ip| Record::from_rdata(query.name().clone(), *ttl, RData::A(A(*ip))));
                message.add_answers(records);
                message
            }
            DnsBehaviour::A { .. } => {
                negative(request, query, ResponseCode::NoError, self.default_negative_ttl)
            }
            DnsBehaviour::NxDomain { negative_ttl } => {
                negative(request, query, ResponseCode::NXDomain, *negative_ttl)
            }
            DnsBehaviour::NoData { negative_ttl } => {
                negative(request, query, ResponseCode::NoError, *negative_ttl)
            }
            DnsBehaviour::ServFail => header_only(request, ResponseCode::ServFail),
            DnsBehaviour::Silent => return None,
            DnsBehaviour::Delayed { delay, then } => {
                return self.answer(request, query, then, after + *delay);
            }
        };
        Some(Reply { after, message })
    }
}

/// A zone's key for `name`: ASCII lower case, without the trailing dot.
pub(crate) fn zone_key(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// An authoritative response to `request` with `code`, the question echoed, and an OPT record
/// when the query had one (RFC 6891 requires it back).
fn header_only(request: &Message, code: ResponseCode) -> Message {
    let mut message = Message::response(request.id, request.op_code);
    message.metadata = Metadata::response_from_request(&request.metadata);
    message.metadata.authoritative = true;
    message.metadata.response_code = code;
    message.add_queries(request.queries.iter().cloned());
    if request.edns.is_some() {
        let mut edns = Edns::new();
        edns.set_max_payload(MAX_UDP_PAYLOAD);
        message.set_edns(edns);
    }
    message
}

/// NXDOMAIN or NODATA (`code` NOERROR) with an SOA in the authority section, TTL and minimum
/// both `negative_ttl`: a resolver caches the answer for the smaller of the two (RFC 2308).
fn negative(request: &Message, query: &Query, code: ResponseCode, negative_ttl: u32) -> Message {
    let mut message = header_only(request, code);
    message.add_authority(Record::from_rdata(
        soa_owner(query.name()),
        negative_ttl,
        RData::SOA(SOA::new(
            name("ns.kumo.test."),
            name("hostmaster.kumo.test."),
            1,
            3600,
            600,
            86_400,
            negative_ttl,
        )),
    ));
    message
}

/// The zone apex the SOA is written for: the queried name's top-level domain, as if this
/// server were the authority for every TLD it is asked about.
fn soa_owner(queried: &Name) -> Name {
    let mut owner = queried.trim_to(1);
    owner.set_fqdn(true);
    owner
}

fn name(ascii: &str) -> Name {
    // Constant, valid names: a failure would be a typo in this file, caught by every test.
    Name::from_ascii(ascii).unwrap_or_else(|_| Name::root())
}

/// The reply's bytes, truncated (the TC bit, no records) when larger than the client can take:
/// 512 bytes, or what its EDNS record offers, up to [`MAX_UDP_PAYLOAD`]. `None` if it cannot be
/// encoded.
pub(crate) fn encode(reply: &Message, request: &Message) -> Option<Vec<u8>> {
    let limit = request
        .edns
        .as_ref()
        .map_or(CLASSIC_UDP_PAYLOAD, |e| usize::from(e.max_payload().min(MAX_UDP_PAYLOAD)))
        .max(CLASSIC_UDP_PAYLOAD);
    let bytes = reply.to_vec().ok()?;
    if bytes.len() <= limit { Some(bytes) } else { reply.truncate().to_vec().ok() }
}
