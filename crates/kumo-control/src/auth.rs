//! Who may talk to the server: requests whose `Host` names the server itself (so a web page
//! on another origin cannot reach it by DNS rebinding), and, when a token is set, that carry
//! it.

use std::net::SocketAddr;

use axum::http::{HeaderMap, StatusCode, header};

/// The checks for one listening address.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// `Host` values accepted on loopback: the address as bound, `localhost:PORT` and the
    /// other loopback spellings. Elsewhere the token (required there) does that job.
    hosts: Option<Vec<String>>,
    token: Option<String>,
}

impl Guard {
    pub fn new(addr: SocketAddr, token: Option<String>) -> Self {
        let port = addr.port();
        let hosts = addr.ip().is_loopback().then(|| {
            vec![
                addr.to_string(),
                format!("localhost:{port}"),
                format!("127.0.0.1:{port}"),
                format!("[::1]:{port}"),
            ]
        });
        Guard { hosts, token }
    }

    /// Why a request with `headers` (and, for the status page, `query_token`) is refused, if
    /// it is.
    pub fn check(
        &self,
        headers: &HeaderMap,
        query_token: Option<&str>,
    ) -> Result<(), (StatusCode, &'static str)> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if let Some(hosts) = &self.hosts
            && !hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
        {
            return Err((StatusCode::MISDIRECTED_REQUEST, "the Host header does not name this server\n"));
        }
        let Some(token) = &self.token else { return Ok(()) };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .or(query_token)
            .unwrap_or("");
        if same(given.as_bytes(), token.as_bytes()) {
            Ok(())
        } else {
            Err((StatusCode::UNAUTHORIZED, "a valid token is needed: Authorization: Bearer TOKEN\n"))
        }
    }
}

/// Equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, auth: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(a) = auth {
            h.insert(header::AUTHORIZATION, HeaderValue::from_str(a).unwrap());
        }
        h
    }

    #[test]
    fn the_host_must_name_the_server_and_the_token_must_match() {
        let g = Guard::new("127.0.0.1:9000".parse().unwrap(), None);
        assert!(g.check(&headers("127.0.0.1:9000", None), None).is_ok());
        assert!(g.check(&headers("localhost:9000", None), None).is_ok());
        assert_eq!(
            g.check(&headers("evil.example:9000", None), None).unwrap_err().0,
            StatusCode::MISDIRECTED_REQUEST
        );
        let g = Guard::new("0.0.0.0:9000".parse().unwrap(), Some("0123456789abcdef".into()));
        assert!(g.check(&headers("10.1.2.3:9000", Some("Bearer 0123456789abcdef")), None).is_ok());
        assert_eq!(
            g.check(&headers("0.0.0.0:9000", Some("Bearer 0123456789abcdeX")), None).unwrap_err().0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(g.check(&headers("0.0.0.0:9000", None), None).unwrap_err().0, StatusCode::UNAUTHORIZED);
        assert!(!same(b"abc", b"abcd"));
    }
}
