//! Flag values checked as clap reads them, so an absurd or unsafe one is a usage error (exit
//! 2) that names the bound, never a crawl that quietly does something else. (The crawl
//! settings' bounds are kumo-settings' table's; these are the other commands'.)

use kumo_settings::MAX_CONCURRENCY;

/// `kumo bench -c N`: at least 1, at most [`MAX_CONCURRENCY`], as `kumo crawl` takes it.
pub fn concurrency(text: &str) -> Result<usize, String> {
    let n: u64 = text.trim().parse().map_err(|e| format!("{text:?} is not a count: {e}"))?;
    match n {
        0 => Err("concurrency must be at least 1".into()),
        n if n > MAX_CONCURRENCY => Err(format!("at most {MAX_CONCURRENCY} requests can be in flight")),
        n => Ok(n as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_name_themselves() {
        assert_eq!(concurrency("32"), Ok(32));
        assert!(concurrency("0").is_err());
        assert!(concurrency("1000001").unwrap_err().contains("1000000"));
    }
}
