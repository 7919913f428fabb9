//! The questions kumo puts to hickory: how its resolver is built from a [`DnsConfig`], and how
//! one lookup asks for A records, then for AAAA only when the name has no A record, and reads
//! what came back.
//!
//! kumo asks A and AAAA itself instead of using hickory's `lookup_ip` strategies: its
//! `Ipv4thenIpv6` asks AAAA after *any* failed A question, so an NXDOMAIN name costs two
//! queries and a silent one two timeouts. Here a name that does not exist, a timeout or a
//! server failure ends the lookup; only NODATA for A (the name exists, without an IPv4
//! address) goes on to AAAA.

use std::net::IpAddr;
use std::time::Instant;

use hickory_resolver::config::{
    LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError as Hickory, NetError};
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{Name, RecordType};
use hickory_resolver::{Resolver, TokioResolver};

use super::figures::{Counted, Figures};
use super::{DnsConfig, DnsErrorKind};
use crate::BuildError;

/// What one lookup found at the name servers, before the cache dates it.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Addresses, valid until the answer's TTL runs out.
    Found { ips: Vec<IpAddr>, valid_until: Instant },
    /// None: why, and the negative TTL (seconds) of the SOA that came with an NXDOMAIN or a
    /// NODATA answer, when one did.
    Failed { kind: DnsErrorKind, detail: String, negative_ttl: Option<u32> },
}

impl Outcome {
    pub(super) fn failed(kind: DnsErrorKind, detail: impl Into<String>) -> Outcome {
        Outcome::Failed { kind, detail: detail.into(), negative_ttl: None }
    }
}

/// hickory's resolver for `cfg`: the given name servers and no others, or the system's
/// configuration when none are given. Its cache is off (kumo's is in front, with its own TTL
/// bounds), and its timeout and retries are kumo's, not resolv.conf's.
pub(super) fn build(cfg: &DnsConfig) -> Result<TokioResolver, BuildError> {
    let (config, mut opts) = if cfg.servers.is_empty() {
        hickory_resolver::system_conf::read_system_conf()
            .map_err(|e| BuildError(format!("cannot read the system's DNS configuration: {e}")))?
    } else {
        let servers = cfg
            .servers
            .iter()
            .map(|addr| {
                // TCP too, for an answer too long for UDP (truncated); asked only then.
                let mut server = NameServerConfig::udp_and_tcp(addr.ip());
                for connection in &mut server.connections {
                    connection.port = addr.port();
                }
                server
            })
            .collect();
        let mut opts = ResolverOpts::default();
        // Only these servers answer: not even /etc/hosts.
        opts.use_hosts_file = ResolveHosts::Never;
        (ResolverConfig::from_name_servers(servers), opts)
    };
    opts.timeout = cfg.query_timeout;
    opts.attempts = cfg.attempts;
    // Unused (kumo asks A and AAAA itself), but never hickory's AAAA-first default.
    opts.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
    // 0 turns hickory's cache (moka) off: kumo's cache is the only one, so its TTL bounds
    // hold and every question it counts goes to the name servers.
    opts.cache_size = 0;
    // Past this many questions on one connection hickory answers `Busy`: never below kumo's
    // own bound on lookups in flight.
    opts.max_active_requests = opts.max_active_requests.max(cfg.max_in_flight);
    Resolver::builder_with_config(config, TokioRuntimeProvider::default())
        .with_options(opts)
        .build()
        .map_err(|e| BuildError(format!("cannot build the DNS resolver: {e}")))
}

/// Looks `host` (lower case, no trailing dot) up as a fully qualified name, so that no
/// search domain is ever appended: A, then AAAA if `ipv6` and the name has no A record.
pub(super) async fn ask(resolver: &TokioResolver, host: &str, ipv6: bool, figures: &Figures) -> Outcome {
    let mut name = match Name::from_ascii(host) {
        Ok(name) => name,
        Err(e) => return Outcome::failed(DnsErrorKind::Other, format!("not a DNS name: {e}")),
    };
    name.set_fqdn(true);
    match question(resolver, name.clone(), RecordType::A, figures).await {
        Outcome::Failed { kind: DnsErrorKind::NoAddress, .. } if ipv6 => {
            question(resolver, name, RecordType::AAAA, figures).await
        }
        outcome => outcome,
    }
}

/// One question, counted.
async fn question(resolver: &TokioResolver, name: Name, kind: RecordType, figures: &Figures) -> Outcome {
    figures.count(Counted::Query);
    match resolver.lookup(name, kind).await {
        Ok(lookup) => {
            // The answer may also hold the CNAME records that led to the addresses.
            let ips: Vec<IpAddr> = lookup.answers().iter().filter_map(|r| r.data.ip_addr()).collect();
            if ips.is_empty() {
                Outcome::failed(DnsErrorKind::NoAddress, format!("no {kind} record in the answer"))
            } else {
                Outcome::Found { ips, valid_until: lookup.valid_until() }
            }
        }
        Err(e) => read_error(&e),
    }
}

/// What a hickory error means for the crawl.
fn read_error(e: &NetError) -> Outcome {
    match e {
        NetError::Dns(Hickory::NoRecordsFound(no)) => {
            let kind = if no.response_code == ResponseCode::NXDomain {
                DnsErrorKind::NoSuchName
            } else {
                DnsErrorKind::NoAddress
            };
            Outcome::Failed { kind, detail: String::new(), negative_ttl: no.negative_ttl }
        }
        NetError::Dns(Hickory::ResponseCode(code)) => {
            Outcome::failed(DnsErrorKind::ServerFailure, format!("answered {}", code.to_str()))
        }
        NetError::Timeout => Outcome::failed(DnsErrorKind::Timeout, "the name servers did not answer"),
        other => Outcome::failed(DnsErrorKind::Other, other.to_string()),
    }
}
