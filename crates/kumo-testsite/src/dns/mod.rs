//! A small DNS server for tests: it answers UDP queries on a loopback port from a [`DnsZone`]
//! (a table of names and what each gets: addresses, NXDOMAIN, NODATA, silence, SERVFAIL,
//! delays) and logs every query, so a test can point a resolver at a synthetic web of many
//! host names and count the queries that reached the server.
//!
//! It is deterministic and authoritative for every name it is asked: no recursion, no TCP, no
//! zone transfers, class IN only. A packet it cannot decode is dropped without a word.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::net::Ipv4Addr;
//! use kumo_testsite::{DnsBehaviour, DnsServer, DnsZone};
//!
//! let zone = DnsZone::new()
//!     .with("shop.kumo.test", DnsBehaviour::a([Ipv4Addr::new(127, 0, 0, 2)], 300))
//!     .with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 30 });
//! let dns = DnsServer::start(zone).await?;
//! // ... point the resolver under test at dns.addr(), then:
//! assert_eq!(dns.queries_for("shop.kumo.test"), 1);
//! dns.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod zone;

#[cfg(test)]
mod tests;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use hickory_proto::op::{Message, MessageType};
use tokio::net::UdpSocket;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

pub use zone::{DnsBehaviour, DnsZone};

/// Delayed replies waiting at once, at most; past it a delayed reply is dropped, as an
/// overloaded server would, so that a flood of slow queries cannot grow the server unbounded.
const MAX_PENDING_DELAYED: usize = 1024;

/// The largest datagram read; a DNS query over UDP is far smaller, and a longer one is cut
/// short by the read and then fails to decode (dropped as malformed).
const RECV_BUFFER: usize = 4096;

/// One query as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsQuery {
    /// When the server read it.
    pub at: Instant,
    /// The queried name as the zone spells it: ASCII lower case, no trailing dot.
    pub name: String,
    /// The record type asked for, e.g. `A` or `AAAA`.
    pub record_type: String,
}

/// A running test DNS server on a loopback UDP port. Dropping it stops it too (without
/// waiting); [`DnsServer::shutdown`] also waits until the socket is closed.
#[derive(Debug)]
pub struct DnsServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

/// What the serving task and the test share.
#[derive(Debug)]
struct Shared {
    zone: RwLock<DnsZone>,
    log: Mutex<Vec<DnsQuery>>,
    /// Queries logged so far; a watch so that a test can await a count instead of sleeping.
    count: watch::Sender<usize>,
    /// Datagrams dropped: undecodable, or a response rather than a query.
    ignored: AtomicUsize,
}

impl DnsServer {
    /// Starts a server for `zone` on `127.0.0.1`, a random port.
    pub async fn start(zone: DnsZone) -> io::Result<DnsServer> {
        DnsServer::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), zone).await
    }

    /// Starts a server for `zone` on `addr` (port 0 for a random one).
    pub async fn start_on(addr: SocketAddr, zone: DnsZone) -> io::Result<DnsServer> {
        let socket = UdpSocket::bind(addr).await?;
        let addr = socket.local_addr()?;
        let shared = Arc::new(Shared {
            zone: RwLock::new(zone),
            log: Mutex::new(Vec::new()),
            count: watch::Sender::new(0),
            ignored: AtomicUsize::new(0),
        });
        let task = tokio::spawn(serve(socket, shared.clone()));
        Ok(DnsServer { addr, shared, task })
    }

    /// The address to give a resolver as its name server.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sets what `name` gets from the next query on (an address that moves, a host that
    /// disappears).
    pub fn set(&self, name: &str, behaviour: DnsBehaviour) {
        self.shared.zone.write().unwrap_or_else(|p| p.into_inner()).insert(name, behaviour);
    }

    /// Removes `name` from the zone: from the next query on it is NXDOMAIN.
    pub fn remove(&self, name: &str) {
        self.shared.zone.write().unwrap_or_else(|p| p.into_inner()).remove(name);
    }

    /// Every query received so far, in arrival order.
    pub fn queries(&self) -> Vec<DnsQuery> {
        self.shared.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many queries were received so far (questions, strictly: a well-formed query has
    /// one).
    pub fn query_count(&self) -> usize {
        *self.shared.count.borrow()
    }

    /// How many queries for `name` (any type; case and trailing dot do not matter).
    pub fn queries_for(&self, name: &str) -> usize {
        let key = zone::zone_key(name);
        self.shared.log.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|q| q.name == key).count()
    }

    /// How many datagrams were dropped as undecodable or as not a query.
    pub fn ignored_count(&self) -> usize {
        self.shared.ignored.load(Ordering::Relaxed)
    }

    /// Waits until at least `n` queries have been received (wrap it in a timeout).
    pub async fn wait_for_queries(&self, n: usize) {
        let mut count = self.shared.count.subscribe();
        // The sender lives in `shared`, which `self` holds: the wait ends only on the count.
        let _ = count.wait_for(|c| *c >= n).await;
    }

    /// Stops serving and waits until the socket is closed (the port is free again).
    pub async fn shutdown(self) {
        let mut this = self;
        this.task.abort();
        // Cancelled is the expected outcome; the task never panics.
        let _ = (&mut this.task).await;
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads datagrams and answers them one by one; delayed replies wait in a `JoinSet` of their
/// own, so they hold up nothing, and end with this task when it is aborted.
async fn serve(socket: UdpSocket, shared: Arc<Shared>) {
    let socket = Arc::new(socket);
    let mut delayed = JoinSet::new();
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        tokio::select! {
            // `recv_from` is cancel-safe: a datagram is never lost to the other branch.
            received = socket.recv_from(&mut buf) => {
                // An error here is transient (Linux reports an earlier reply's ICMP
                // "port unreachable" on the next read): read on.
                let Ok((len, peer)) = received else { continue };
                handle(&socket, &shared, &buf[..len], peer, &mut delayed).await;
            }
            // Reaps finished delayed replies so that the set's size counts pending ones only.
            Some(_) = delayed.join_next(), if !delayed.is_empty() => {}
        }
    }
}

/// Answers one datagram: decodes it, logs its question, and sends the zone's reply now or
/// from a delayed task.
async fn handle(
    socket: &Arc<UdpSocket>,
    shared: &Shared,
    packet: &[u8],
    peer: SocketAddr,
    delayed: &mut JoinSet<()>,
) {
    let request = match Message::from_vec(packet) {
        Ok(m) if m.message_type == MessageType::Query => m,
        _ => {
            shared.ignored.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    shared.log(&request);
    let reply = shared.zone.read().unwrap_or_else(|p| p.into_inner()).reply(&request);
    let Some(reply) = reply else { return };
    let Some(bytes) = zone::encode(&reply.message, &request) else { return };
    if reply.after.is_zero() {
        // A failed send is the client's loss, as with any UDP server.
        let _ = socket.send_to(&bytes, peer).await;
    } else if delayed.len() < MAX_PENDING_DELAYED {
        // Weak: the socket closes with the serving task, even while replies are pending.
        let socket = Arc::downgrade(socket);
        delayed.spawn(async move {
            tokio::time::sleep(reply.after).await;
            if let Some(socket) = socket.upgrade() {
                let _ = socket.send_to(&bytes, peer).await;
            }
        });
    }
}

impl Shared {
    /// Logs each question of `request` (one, in any well-formed query).
    fn log(&self, request: &Message) {
        let at = Instant::now();
        let entries = request.queries.iter().map(|q| DnsQuery {
            at,
            name: zone::zone_key(&q.name().to_ascii()),
            record_type: q.query_type().to_string(),
        });
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let before = log.len();
        log.extend(entries);
        let added = log.len() - before;
        // Bumped under the lock, after the entries: a waiter woken by the count finds them.
        self.count.send_modify(|c| *c += added);
    }
}
