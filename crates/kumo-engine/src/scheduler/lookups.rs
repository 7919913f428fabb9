//! The DNS stage of per-IP politeness: the hosts the frontier hands out to be resolved are
//! looked up beside the loop, through the crawl's own resolver (the one its downloaders
//! connect with, so a request goes to the address that gated it), and each answer goes back
//! to the frontier as an [`super::Event::Resolved`].

use std::net::IpAddr;
use std::sync::Arc;

use kumo_downloader::DnsResolver;
use tokio::task::JoinSet;

/// Lookups at once, beside the loop; the resolver bounds what reaches the name servers.
const MAX_LOOKUPS: usize = 256;

pub(crate) struct Lookups {
    resolver: Arc<DnsResolver>,
    tasks: JoinSet<(String, Option<IpAddr>)>,
}

impl Lookups {
    pub fn new(resolver: Arc<DnsResolver>) -> Self {
        Lookups { resolver, tasks: JoinSet::new() }
    }

    /// How many more lookups may start.
    pub fn room(&self) -> usize {
        MAX_LOOKUPS.saturating_sub(self.tasks.len())
    }

    pub fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Looks up `host_key`'s name; its first address (IPv4 first, as the downloaders take it)
    /// is the one that gates it, none when the lookup fails (its requests then fail as `dns`
    /// from the resolver's negative cache, without asking again).
    pub fn start(&mut self, host_key: String) {
        let resolver = self.resolver.clone();
        self.tasks.spawn(async move {
            let name = kumo_frontier::bare_host(&host_key).to_string();
            let addr = resolver.lookup(&name).await.ok().and_then(|ips| ips.first().copied());
            (host_key, addr)
        });
    }

    /// The next answer; pending forever when none is awaited (the loop's `select!` guards it).
    pub async fn next(&mut self) -> (String, Option<IpAddr>) {
        loop {
            match self.tasks.join_next().await {
                Some(Ok(answer)) => return answer,
                // A lookup task cannot panic short of a bug; its host stays unresolved.
                Some(Err(e)) => tracing::error!(error = %e, "a DNS lookup task failed"),
                None => std::future::pending::<()>().await,
            }
        }
    }
}
