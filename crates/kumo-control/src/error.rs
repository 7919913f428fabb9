//! Why the control server could not start.

use std::net::SocketAddr;

/// Why [`ControlServer::start`](crate::ControlServer::start) refused to serve.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// An address off loopback without a token.
    #[error(
        "--listen {addr} is not a loopback address: anyone who can reach it could steer the crawl; \
         give a token (--listen-token or KUMO_LISTEN_TOKEN) for every request to carry"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// A token of fewer than 16 characters.
    #[error("the --listen token must be at least 16 characters")]
    WeakToken,
    /// The address could not be bound, or the bound socket's address read.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the system said.
        error: std::io::Error,
    },
}
