//! Instants computed from durations a server chose. `Retry-After: 18446744073709551615` is
//! 584 billion years, which `Instant + Duration` cannot hold: it panics. Every instant the
//! frontier computes from a duration goes through [`later`], which caps the wait at [`FAR`].

use std::time::{Duration, Instant};

/// The longest wait kept: a century, longer than any crawl, short enough for any clock.
pub const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `t + d`, with `d` cut to [`FAR`]; never panics.
pub fn later(t: Instant, d: Duration) -> Instant {
    // A century past any real instant fits every platform's clock; `t` is the fallback only
    // for a clock that cannot count a century.
    t.checked_add(d.min(FAR)).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_duration_overflows() {
        let now = Instant::now();
        assert_eq!(later(now, Duration::MAX), now + FAR);
        assert_eq!(later(now, Duration::from_secs(u64::MAX)), now + FAR);
        assert_eq!(later(now, Duration::from_secs(5)), now + Duration::from_secs(5));
    }
}
