//! Flag values checked as clap reads them, so an absurd or unsafe one is a usage error (exit
//! 2) that names the bound, never a crawl that quietly does something else.

/// The most requests in flight `-c` takes. Memory follows the requests really in flight,
/// not this number, but past a million the limit only hides a typo.
pub const MAX_CONCURRENCY: usize = 1_000_000;

/// The longest `--delay-ms` and `--random-delay-ms`: an hour between two requests to a host.
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// `-c N`: at least 1, at most [`MAX_CONCURRENCY`].
pub fn concurrency(text: &str) -> Result<usize, String> {
    let n: usize = text.trim().parse().map_err(|e| format!("{text:?} is not a count: {e}"))?;
    match n {
        0 => Err("concurrency must be at least 1".into()),
        n if n > MAX_CONCURRENCY => Err(format!("at most {MAX_CONCURRENCY} requests can be in flight")),
        n => Ok(n),
    }
}

/// A delay in milliseconds, at most [`MAX_DELAY_MS`].
pub fn delay_ms(text: &str) -> Result<u64, String> {
    let n: u64 = text.trim().parse().map_err(|e| format!("{text:?} is not a number of milliseconds: {e}"))?;
    if n > MAX_DELAY_MS {
        return Err(format!("at most {MAX_DELAY_MS} ms (an hour)"));
    }
    Ok(n)
}

/// `--proxy URL`: one of the schemes the client really sends through; anything else would be
/// a direct connection in disguise.
pub fn proxy(text: &str) -> Result<String, String> {
    kumo_downloader::check_proxy(text).map(|_| text.to_owned()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_name_themselves() {
        assert_eq!(concurrency("32"), Ok(32));
        assert!(concurrency("0").is_err());
        assert!(concurrency("1000001").unwrap_err().contains("1000000"));
        assert_eq!(delay_ms("0"), Ok(0));
        assert!(delay_ms(&u64::MAX.to_string()).unwrap_err().contains("an hour"));
        assert!(proxy("socks5h://127.0.0.1:1080").is_ok());
        assert!(proxy("gopher://127.0.0.1:18398").unwrap_err().contains("gopher"));
    }
}
