//! Who may talk to the server: requests whose `Host` names the server itself (so a web page
//! on another origin cannot reach it by DNS rebinding), and, when a token is set, that carry
//! it.
//!
//! Requests that change something (every method but `GET` and `HEAD`) must also come from the
//! server's own origin, token or not, since a browser sends a cross-site form or `no-cors`
//! fetch to loopback with the right `Host`: `Sec-Fetch-Site`, when sent, must be `same-origin`
//! (`none`, a navigation the user typed, never carries a POST a page could forge, nor one the
//! status page sends, so it is refused too); `Origin`, when sent, must name the server; and the
//! body must not be one a page can send without a CORS preflight (`text/plain`, a form): no
//! `Content-Type` or `application/json` only. curl and scripts send neither header.

use std::net::SocketAddr;

use axum::http::{HeaderMap, Method, StatusCode, header};

/// Why a request is refused: its status and a one-line reason.
pub(crate) type Refusal = (StatusCode, &'static str);

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

    /// Why a `method` request with `headers` (and, for the status page, `query_token`) is
    /// refused, if it is.
    pub fn check(
        &self,
        method: &Method,
        headers: &HeaderMap,
        query_token: Option<&str>,
    ) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if let Some(hosts) = &self.hosts
            && !hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
        {
            return Err((StatusCode::MISDIRECTED_REQUEST, "the Host header does not name this server\n"));
        }
        if !matches!(*method, Method::GET | Method::HEAD) {
            self.same_origin(host, headers)?;
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

    /// Why a request that changes something is refused as another origin's, if it is (`host`:
    /// its `Host`, already checked).
    fn same_origin(&self, host: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let text = |name| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
        if let Some(site) = text("sec-fetch-site")
            && site != "same-origin"
        {
            return Err((StatusCode::FORBIDDEN, "refused: a request from another site (Sec-Fetch-Site)\n"));
        }
        if let Some(origin) = text(header::ORIGIN.as_str()) {
            let named = origin.strip_prefix("http://").filter(|o| {
                o.eq_ignore_ascii_case(host)
                    || self.hosts.as_ref().is_some_and(|hs| hs.iter().any(|h| h.eq_ignore_ascii_case(o)))
            });
            if named.is_none() {
                return Err((StatusCode::FORBIDDEN, "refused: the Origin header names another origin\n"));
            }
        }
        if let Some(ct) = text(header::CONTENT_TYPE.as_str()) {
            let media = ct.split(';').next().unwrap_or_default().trim();
            if !media.eq_ignore_ascii_case("application/json") {
                return Err((StatusCode::FORBIDDEN, "refused: send no body, or application/json\n"));
            }
        }
        Ok(())
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

    fn get(g: &Guard, h: &HeaderMap) -> Result<(), Refusal> {
        g.check(&Method::GET, h, None)
    }

    #[test]
    fn the_host_must_name_the_server_and_the_token_must_match() {
        let g = Guard::new("127.0.0.1:9000".parse().unwrap(), None);
        assert!(get(&g, &headers("127.0.0.1:9000", None)).is_ok());
        assert!(get(&g, &headers("localhost:9000", None)).is_ok());
        assert_eq!(
            get(&g, &headers("evil.example:9000", None)).unwrap_err().0,
            StatusCode::MISDIRECTED_REQUEST
        );
        let g = Guard::new("0.0.0.0:9000".parse().unwrap(), Some("0123456789abcdef".into()));
        assert!(get(&g, &headers("10.1.2.3:9000", Some("Bearer 0123456789abcdef"))).is_ok());
        assert_eq!(
            get(&g, &headers("0.0.0.0:9000", Some("Bearer 0123456789abcdeX"))).unwrap_err().0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(get(&g, &headers("0.0.0.0:9000", None)).unwrap_err().0, StatusCode::UNAUTHORIZED);
        assert!(!same(b"abc", b"abcd"));
    }

    /// A POST with `extra` headers (name, value) to a loopback server without a token.
    fn post(extra: &[(&str, &str)]) -> Result<(), Refusal> {
        let g = Guard::new("127.0.0.1:9000".parse().unwrap(), None);
        let mut h = headers("127.0.0.1:9000", None);
        for (n, v) in extra {
            h.append(
                header::HeaderName::from_bytes(n.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        g.check(&Method::POST, &h, None)
    }

    #[test]
    fn a_post_must_come_from_the_servers_own_origin() {
        // curl, scripts: neither Origin nor Sec-Fetch-*.
        assert!(post(&[]).is_ok());
        assert!(post(&[("content-type", "application/json")]).is_ok());
        // The status page's own buttons.
        assert!(post(&[("origin", "http://127.0.0.1:9000"), ("sec-fetch-site", "same-origin")]).is_ok());
        assert!(post(&[("origin", "http://localhost:9000")]).is_ok(), "the server's other name");
        for bad in [
            vec![("sec-fetch-site", "cross-site")],
            vec![("sec-fetch-site", "same-site")],
            vec![("sec-fetch-site", "none")],
            vec![("origin", "http://127.0.0.2:9000")],
            vec![("origin", "http://127.0.0.1:9001")],
            vec![("origin", "https://127.0.0.1:9000")],
            vec![("origin", "null")],
            vec![("origin", "http://127.0.0.1:9000"), ("sec-fetch-site", "cross-site")],
            vec![("content-type", "text/plain;charset=UTF-8")],
            vec![("content-type", "application/x-www-form-urlencoded")],
            vec![("content-type", "multipart/form-data; boundary=x")],
            vec![("origin", "http://127.0.0.1:9000"), ("content-type", "text/plain")],
        ] {
            let refused = post(&bad).expect_err(&format!("{bad:?} is refused"));
            assert_eq!(refused.0, StatusCode::FORBIDDEN, "{bad:?}");
            assert!(refused.1.ends_with('\n') && refused.1.lines().count() == 1, "one line: {:?}", refused.1);
        }
    }

    #[test]
    fn reads_are_not_held_to_the_origin_and_tokens_do_not_excuse_it() {
        let g = Guard::new("127.0.0.1:9000".parse().unwrap(), None);
        let mut h = headers("127.0.0.1:9000", None);
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://127.0.0.2:9000"));
        assert!(g.check(&Method::GET, &h, None).is_ok(), "no CORS header: the page cannot read the answer");
        assert_eq!(g.check(&Method::DELETE, &h, None).unwrap_err().0, StatusCode::FORBIDDEN);
        let g = Guard::new("0.0.0.0:9000".parse().unwrap(), Some("0123456789abcdef".into()));
        let mut h = headers("10.1.2.3:9000", Some("Bearer 0123456789abcdef"));
        h.insert(header::ORIGIN, HeaderValue::from_static("http://10.1.2.3:9000"));
        assert!(g.check(&Method::POST, &h, None).is_ok(), "off loopback, Origin must match Host");
        h.insert(header::ORIGIN, HeaderValue::from_static("http://evil.example"));
        assert_eq!(g.check(&Method::POST, &h, None).unwrap_err().0, StatusCode::FORBIDDEN);
    }
}
