//! A warning when one URL shape keeps growing (issue 15): a spider trap that scope does not
//! catch (an endless calendar, `/cal/2024/05` → `/cal/2024/06` → …) must not grow the state
//! without bound unnoticed.
//!
//! Each fetched page deeper than [`crate::CrawlConfig::trap_warn_depth`] links counts once, in
//! the scheduler, under its shape: the URL with every run of digits as `#` and the query's
//! values dropped (`http://h/cal/#/#?day`). At [`crate::CrawlConfig::trap_warn_pages`] pages of
//! one shape, and again at ten and a hundred times as many, one warning names the shape; the
//! summary lists the shapes warned about. Only deep pages count because a trap is a chain that
//! keeps going, while a catalogue of 20 000 `/page/#.html` sits a few links from its start
//! (counting every page warned on the benchmark's own site). The counts are this process's
//! (not saved with the frontier): a resumed crawl counts afresh.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use kumo_core::Url;

/// Most shapes tracked. Beyond that, new shapes are not tracked at all (never warned about):
/// the map stays bounded whatever the site, and the shapes a trap repeats are usually met long
/// before so many others.
pub(crate) const MAX_SHAPES: usize = 50_000;

/// Longest shape kept, in bytes (longer ones are cut, at a character boundary): with
/// [`MAX_SHAPES`], a few tens of MB at worst rather than 8 KiB URLs times 50,000.
const MAX_SHAPE_BYTES: usize = 256;

/// Fetched pages by URL shape, and the shapes warned about.
pub(crate) struct TrapWatch {
    /// Pages of one shape at the first warning; 0: off.
    threshold: u64,
    max_shapes: usize,
    counts: HashMap<String, u64>,
    /// The shapes warned about.
    warned: Vec<String>,
}

impl TrapWatch {
    pub fn new(threshold: u64) -> Self {
        Self::with_max_shapes(threshold, MAX_SHAPES)
    }

    fn with_max_shapes(threshold: u64, max_shapes: usize) -> Self {
        TrapWatch { threshold, max_shapes, counts: HashMap::new(), warned: Vec::new() }
    }

    /// Counts one fetched page of `shape`. Returns the page count when it just reached a
    /// warning threshold (the threshold, ten and a hundred times it), after logging the
    /// warning.
    pub fn count(&mut self, shape: &str) -> Option<u64> {
        if self.threshold == 0 {
            return None;
        }
        let full = self.counts.len() >= self.max_shapes;
        let n = match self.counts.get_mut(shape) {
            Some(n) => {
                *n += 1;
                *n
            }
            // Not tracked: the map is full.
            None if full => return None,
            None => {
                self.counts.insert(shape.to_owned(), 1);
                1
            }
        };
        let t = self.threshold;
        if n != t && n != t.saturating_mul(10) && n != t.saturating_mul(100) {
            return None;
        }
        if n == t {
            self.warned.push(shape.to_owned());
        }
        tracing::warn!(
            shape,
            pages = n,
            "{n} pages fetched of one URL shape, {shape}: a spider trap? --deny 'GLOB', --max-depth or \
             --max-path-segments stop it"
        );
        Some(n)
    }

    /// The shapes warned about, each with its pages fetched so far.
    pub fn warnings(&self) -> BTreeMap<String, u64> {
        self.warned.iter().map(|s| (s.clone(), self.counts.get(s).copied().unwrap_or_default())).collect()
    }
}

/// The shape of `url`: `scheme://host[:port]` and the path with every run of ASCII digits as
/// `#`, then `?` and the query's distinct keys, sorted, joined by `&` (values dropped). Cut to
/// [`MAX_SHAPE_BYTES`].
pub(crate) fn shape(url: &Url) -> String {
    let mut out = String::with_capacity(64);
    out.push_str(url.scheme());
    out.push_str("://");
    out.push_str(url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        // Formatting into a String cannot fail.
        let _ = write!(out, ":{port}");
    }
    let mut rest = url.path();
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        out.push('#');
        let tail = &rest[at..];
        rest = &tail[tail.find(|c: char| !c.is_ascii_digit()).unwrap_or(tail.len())..];
    }
    out.push_str(rest);
    if let Some(query) = url.query() {
        let mut keys: Vec<&str> =
            query.split('&').filter(|p| !p.is_empty()).map(|p| p.split('=').next().unwrap_or(p)).collect();
        keys.sort_unstable();
        keys.dedup();
        for (i, k) in keys.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(k);
        }
    }
    out.truncate(out.floor_char_boundary(MAX_SHAPE_BYTES));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(s: &str) -> String {
        shape(&Url::parse(s).unwrap())
    }

    #[test]
    fn shapes_hide_numbers_and_query_values() {
        assert_eq!(shape_of("http://h:8080/cal/2024/05?day=3"), "http://h:8080/cal/#/#?day");
        assert_eq!(shape_of("http://h:8080/cal/2024/05?day=3"), shape_of("http://h:8080/cal/1999/12?day=31"));
        assert_eq!(shape_of("https://h/a1b22c/x?b=1&a=2&b=3&&c"), "https://h/a#b#c/x?a&b&c");
        assert_eq!(shape_of("http://h:80/p?"), "http://h/p", "a default port and an empty query");
        assert_ne!(shape_of("http://h/cal/1"), shape_of("http://h/day/1"));
        assert_ne!(shape_of("http://h/cal/1"), shape_of("http://g/cal/1"));
        let long = shape_of(&format!("http://h/{}", "x".repeat(400)));
        assert_eq!(long.len(), MAX_SHAPE_BYTES, "cut");
        assert!(long.starts_with("http://h/xxx"), "{long}");
    }

    #[test]
    fn warns_at_the_threshold_then_ten_and_a_hundred_times_it() {
        let mut w = TrapWatch::new(3);
        let warned: Vec<u64> = (0..400).filter_map(|_| w.count("http://h/cal/#")).collect();
        assert_eq!(warned, [3, 30, 300]);
        assert_eq!(w.count("http://h/other"), None);
        assert_eq!(
            w.warnings(),
            BTreeMap::from([("http://h/cal/#".to_string(), 400)]),
            "once, with its count"
        );
    }

    #[test]
    fn zero_is_off() {
        let mut w = TrapWatch::new(0);
        assert!((0..100).all(|_| w.count("http://h/cal/#").is_none()));
        assert!(w.warnings().is_empty());
        assert!(w.counts.is_empty(), "nothing is tracked");
    }

    #[test]
    fn shapes_beyond_the_bound_are_not_tracked() {
        let mut w = TrapWatch::with_max_shapes(2, 2);
        w.count("a");
        w.count("b");
        assert_eq!((w.count("c"), w.count("c")), (None, None), "the third shape is not tracked");
        assert_eq!(w.count("a"), Some(2), "the tracked ones still are");
        assert_eq!(w.counts.len(), 2);
        assert_eq!(w.warnings(), BTreeMap::from([("a".to_string(), 2)]));
    }
}
