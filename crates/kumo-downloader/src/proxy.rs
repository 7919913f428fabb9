//! Proxy URLs: only the schemes the HTTP client really sends through. reqwest takes any URL
//! as a proxy and, for a scheme it cannot speak (`gopher://`, `ftp://`, `unix://`), quietly
//! connects directly: a user who meant to hide behind the proxy would be exposed. So every
//! proxy is checked here before it reaches the client.

/// The schemes a proxy URL may have (`socks5h` resolves names on the proxy).
pub const PROXY_SCHEMES: [&str; 4] = ["http", "https", "socks5", "socks5h"];

/// Why a proxy URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// The text does not parse as a URL.
    #[error("proxy {url:?}: not a URL ({reason})")]
    NotAUrl {
        /// The proxy as given.
        url: String,
        /// What the URL parser found wrong.
        reason: String,
    },
    /// A scheme not in [`PROXY_SCHEMES`]: the client would quietly connect directly.
    #[error(
        "proxy {url:?}: the scheme {scheme}:// is not supported (use http://, https://, socks5:// or socks5h://)"
    )]
    Scheme {
        /// The proxy as given.
        url: String,
        /// The scheme it has, without `://`.
        scheme: String,
    },
    /// A URL without a host, or with an empty one.
    #[error("proxy {url:?}: no host")]
    NoHost {
        /// The proxy as given.
        url: String,
    },
}

/// `url` parsed, if it is a proxy the client can use.
pub fn check_proxy(url: &str) -> Result<url::Url, ProxyError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| ProxyError::NotAUrl { url: url.to_owned(), reason: e.to_string() })?;
    if !PROXY_SCHEMES.contains(&parsed.scheme()) {
        return Err(ProxyError::Scheme { url: url.to_owned(), scheme: parsed.scheme().to_owned() });
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(ProxyError::NoHost { url: url.to_owned() });
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_schemes_pass_and_others_are_refused_by_name() {
        for ok in ["http://127.0.0.1:3128", "https://p.test", "socks5://127.0.0.1:1080", "socks5h://h:1"] {
            assert!(check_proxy(ok).is_ok(), "{ok}");
        }
        for (bad, scheme) in
            [("gopher://127.0.0.1:18398", "gopher"), ("ftp://h/", "ftp"), ("unix:///tmp/s", "unix")]
        {
            let e = check_proxy(bad).unwrap_err();
            assert_eq!(e, ProxyError::Scheme { url: bad.into(), scheme: scheme.into() });
            assert!(e.to_string().contains("socks5h://"), "{e}");
        }
        assert!(matches!(
            check_proxy("127.0.0.1:3128"),
            Err(ProxyError::Scheme { .. } | ProxyError::NotAUrl { .. })
        ));
        assert!(matches!(check_proxy("not a url"), Err(ProxyError::NotAUrl { .. })));
        assert!(matches!(
            check_proxy("http://"),
            Err(ProxyError::NotAUrl { .. } | ProxyError::NoHost { .. })
        ));
    }
}
