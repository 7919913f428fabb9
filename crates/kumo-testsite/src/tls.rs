//! HTTPS for the test site: a server certificate chain and key in PEM, so tests can check how
//! a crawler treats certificates it does or does not trust (`testdata/tls` has a pair).

use std::io;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate chain (the server's first) and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct TlsIdentity {
    /// The certificates, the server's first, PEM.
    pub cert_chain_pem: Vec<u8>,
    /// The server certificate's private key, PEM.
    pub key_pem: Vec<u8>,
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("TLS identity: {e}"))
}

pub(crate) fn acceptor(id: &TlsIdentity) -> io::Result<TlsAcceptor> {
    let certs =
        CertificateDer::pem_slice_iter(&id.cert_chain_pem).collect::<Result<Vec<_>, _>>().map_err(invalid)?;
    let key = PrivateKeyDer::from_pem_slice(&id.key_pem).map_err(invalid)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(invalid)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(invalid)?;
    Ok(TlsAcceptor::from(Arc::new(cfg)))
}
