//! Why the control server could not start.

use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error(
        "--listen {addr} is not a loopback address: anyone who can reach it could steer the crawl; \
         give a token (--listen-token or KUMO_LISTEN_TOKEN) for every request to carry"
    )]
    TokenRequired { addr: SocketAddr },
    #[error("the --listen token must be at least 16 characters")]
    WeakToken,
    #[error("cannot listen on {addr}: {error}")]
    Bind { addr: SocketAddr, error: std::io::Error },
}
