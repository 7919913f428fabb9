//! Latency histograms with fixed buckets, as Prometheus reads them: how long servers took to
//! answer (to the response's headers) and how long the frontier took to commit a group.

use std::time::Duration;

use serde::Serialize;

/// The buckets' upper bounds, in seconds; a last, unbounded bucket follows.
pub const LATENCY_BOUNDS: [f64; 11] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// Observations counted by bucket (not cumulative), with their sum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    /// `counts[i]` observations fell at most `LATENCY_BOUNDS[i]` seconds (and above the bound
    /// before); the last, above every bound.
    pub counts: [u64; LATENCY_BOUNDS.len() + 1],
    /// The observations added up, in seconds.
    pub sum_secs: f64,
    /// Observations, every bucket's together.
    pub count: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: [0; LATENCY_BOUNDS.len() + 1], sum_secs: 0.0, count: 0 }
    }
}

impl Histogram {
    /// Counts `d` in its bucket.
    pub fn observe(&mut self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = LATENCY_BOUNDS.iter().position(|&b| secs <= b).unwrap_or(LATENCY_BOUNDS.len());
        self.counts[i] += 1;
        self.sum_secs += secs;
        self.count += 1;
    }

    /// (upper bound, count) pairs, the last bound infinite: what a Prometheus encoder takes.
    pub fn buckets(&self) -> Vec<(f64, u64)> {
        LATENCY_BOUNDS.iter().copied().chain([f64::INFINITY]).zip(self.counts).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_their_bucket() {
        let mut h = Histogram::default();
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_millis(10));
        h.observe(Duration::from_millis(11));
        h.observe(Duration::from_secs(60));
        assert_eq!((h.counts[0], h.counts[1], h.counts[2], h.counts[11]), (1, 1, 1, 1));
        assert_eq!(h.count, 4);
        assert!((h.sum_secs - 60.024).abs() < 1e-9);
        let b = h.buckets();
        assert_eq!((b[0], b[11].1), ((0.005, 1), 1));
        assert!(b[11].0.is_infinite());
    }
}
