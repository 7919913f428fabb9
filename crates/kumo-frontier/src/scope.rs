//! Scope: which requests a crawl may fetch at all.
//!
//! Checked in this order, first failure wins: scheme (http/https only), URL length, allowed
//! domains, depth, path shape (spider traps), redirects, then URL patterns. An out-of-scope
//! request is a typed [`SkipReason`], not an error.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use kumo_core::{Request, SkipReason, Url};
use regex::RegexSet;

/// A URL pattern: a glob over the whole URL (`https://*.example.com/docs/*`) or a regex.
///
/// In a glob `*` (and `**`) matches any characters, `/` included: a URL is not a file path,
/// and users write `*logout*` meaning "any URL containing logout" (issue 21.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlPattern {
    /// A glob matched against the whole URL.
    Glob(String),
    /// A regular expression, matched if it is found anywhere in the URL.
    Regex(String),
}

impl UrlPattern {
    /// Reads `re:PATTERN` as a regex, `glob:PATTERN` or a bare pattern as a glob.
    pub fn parse(s: &str) -> UrlPattern {
        if let Some(r) = s.strip_prefix("re:") {
            UrlPattern::Regex(r.to_string())
        } else {
            UrlPattern::Glob(s.strip_prefix("glob:").unwrap_or(s).to_string())
        }
    }
}

/// Raw scope settings, as given by the user.
#[derive(Debug, Clone, Default)]
pub struct ScopeConfig {
    /// Hosts to accept, each with its subdomains (`example.com` accepts `www.example.com`).
    /// The registrable domains of the seeds are added automatically.
    pub allowed_domains: Vec<String>,
    /// Accept any host (no domain check).
    pub any_domain: bool,
    /// Deepest depth fetched; 0 means unlimited. Seeds are depth 0.
    pub max_depth: u32,
    /// When non-empty, a URL must match one of these.
    pub allow: Vec<UrlPattern>,
    /// A URL matching any of these is skipped.
    pub deny: Vec<UrlPattern>,
    /// Most redirects followed in a row.
    pub max_redirects: u8,
    /// Longest URL fetched, in bytes; 0 means [`MAX_URL_BYTES`]. Longer links are skipped
    /// (`url-too-long`) rather than sent to a server that would refuse them.
    pub max_url_bytes: usize,
    /// Most path segments a URL may have; 0 means [`MAX_PATH_SEGMENTS`]. Deeper paths are
    /// skipped as `trap`.
    pub max_path_segments: usize,
    /// Most times a run of one to three path segments may follow itself (`/a/a`, `/x/y/x/y`);
    /// 0 means [`MAX_SEGMENT_REPEATS`]. One more repetition is skipped as `trap`.
    pub max_segment_repeats: usize,
}

/// The default URL length limit: 8 KiB, what common servers accept in a request line.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// The default path segment limit: real sites rarely nest half as deep, while a relative link
/// that resolves against its own page (`href="a/"` on `/a/`) grows a path without end.
pub const MAX_PATH_SEGMENTS: usize = 32;

/// The default repetition limit: `/a/a/` and `/x/y/x/y` pass, a third `/a` or `/x/y` in a row
/// is a trap.
pub const MAX_SEGMENT_REPEATS: usize = 2;

/// A bad scope setting.
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    /// A glob that does not compile.
    #[error("bad glob pattern {pattern:?}: {source}")]
    Glob {
        /// The glob (`<set>` when the set of globs as a whole failed to build).
        pattern: String,
        /// Why it does not compile.
        source: globset::Error,
    },
    /// A regular expression that does not compile, or compiles too large.
    #[error("bad regex pattern: {0}")]
    Regex(#[from] regex::Error),
    /// An allowed domain (named trimmed and lowercased) that is empty or holds `/`, `:` or a space.
    #[error("allowed domain {0:?} is not a host name")]
    Domain(String),
}

/// Compiled scope rules.
#[derive(Debug, Clone)]
pub struct Scope {
    domains: Vec<String>,
    any_domain: bool,
    max_depth: u32,
    max_redirects: u8,
    max_url_bytes: usize,
    max_path_segments: usize,
    max_segment_repeats: usize,
    allow: UrlPatterns,
    deny: UrlPatterns,
}

/// Compiled [`UrlPattern`]s: globs and regexes, matched against whole URLs.
#[derive(Debug, Clone)]
pub struct UrlPatterns {
    globs: GlobSet,
    regexes: RegexSet,
}

impl UrlPatterns {
    /// Compiles `list`; a bad glob or regex is an error naming it.
    pub fn build(list: &[UrlPattern]) -> Result<Self, ScopeError> {
        let mut globs = GlobSetBuilder::new();
        let mut regexes = Vec::new();
        for p in list {
            match p {
                UrlPattern::Glob(g) => {
                    // `*` crosses `/`: with path semantics `*logout*` could match no URL at all
                    // (every URL has a `/`), silently.
                    let glob = GlobBuilder::new(g)
                        .literal_separator(false)
                        .build()
                        .map_err(|source| ScopeError::Glob { pattern: g.clone(), source })?;
                    globs.add(glob);
                }
                UrlPattern::Regex(r) => regexes.push(r.clone()),
            }
        }
        let globs = globs.build().map_err(|source| ScopeError::Glob { pattern: "<set>".into(), source })?;
        // Patterns come from users: cap compiled size so a hostile pattern cannot eat memory.
        let regexes = regex::RegexSetBuilder::new(regexes).size_limit(1 << 22).build()?;
        Ok(UrlPatterns { globs, regexes })
    }

    /// Whether there is no pattern at all.
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty() && self.regexes.is_empty()
    }

    /// Whether `url` matches one of the patterns.
    pub fn matches(&self, url: &str) -> bool {
        // Most crawls set no patterns: skip the regex engine's cache checkout entirely.
        (!self.globs.is_empty() && self.globs.is_match(url))
            || (!self.regexes.is_empty() && self.regexes.is_match(url))
    }
}

impl Scope {
    /// Compiles `cfg`; the registrable domains of `seeds` join the allowed domains.
    pub fn new(cfg: &ScopeConfig, seeds: &[Url]) -> Result<Self, ScopeError> {
        let mut domains = Vec::new();
        for d in &cfg.allowed_domains {
            let d = d.trim().trim_start_matches("*.").trim_end_matches('.').to_ascii_lowercase();
            if d.is_empty() || d.contains(['/', ':', ' ']) {
                return Err(ScopeError::Domain(d));
            }
            domains.push(d);
        }
        for s in seeds {
            if let Some(h) = s.host_str() {
                domains.push(registrable_domain(h).to_string());
            }
        }
        domains.sort();
        domains.dedup();
        Ok(Scope {
            domains,
            any_domain: cfg.any_domain,
            max_depth: cfg.max_depth,
            max_redirects: if cfg.max_redirects == 0 { 10 } else { cfg.max_redirects },
            max_url_bytes: if cfg.max_url_bytes == 0 { MAX_URL_BYTES } else { cfg.max_url_bytes },
            max_path_segments: if cfg.max_path_segments == 0 {
                MAX_PATH_SEGMENTS
            } else {
                cfg.max_path_segments
            },
            max_segment_repeats: if cfg.max_segment_repeats == 0 {
                MAX_SEGMENT_REPEATS
            } else {
                cfg.max_segment_repeats
            },
            allow: UrlPatterns::build(&cfg.allow)?,
            deny: UrlPatterns::build(&cfg.deny)?,
        })
    }

    /// The domains accepted, after adding the seeds'.
    pub fn domains(&self) -> &[String] {
        &self.domains
    }

    /// Whether `req` may be fetched, or why not.
    pub fn check(&self, req: &Request) -> Result<(), SkipReason> {
        let url = &req.url;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(SkipReason::Scheme);
        }
        if url.as_str().len() > self.max_url_bytes {
            return Err(SkipReason::UrlTooLong);
        }
        if !self.any_domain && !url.host_str().is_some_and(|h| self.domain_allowed(h)) {
            return Err(SkipReason::Domain);
        }
        if self.max_depth != 0 && req.depth > self.max_depth {
            return Err(SkipReason::Depth);
        }
        if is_trap_path(url.path(), self.max_path_segments, self.max_segment_repeats) {
            return Err(SkipReason::Trap);
        }
        if req.redirects > self.max_redirects {
            return Err(SkipReason::TooManyRedirects);
        }
        let s = url.as_str();
        if (!self.allow.is_empty() && !self.allow.matches(s)) || self.deny.matches(s) {
            return Err(SkipReason::Pattern);
        }
        Ok(())
    }

    /// A host is allowed when it is an allowed domain or a subdomain of one.
    pub fn domain_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        self.domains.iter().any(|d| {
            host.len() >= d.len()
                && host[host.len() - d.len()..].eq_ignore_ascii_case(d)
                && (host.len() == d.len() || host.as_bytes()[host.len() - d.len() - 1] == b'.')
        })
    }
}

/// Whether `path` has more than `max_segments` segments, or a run of one to three segments
/// repeated back to back more than `max_repeats` times. Segments compare exactly; an empty one
/// (from `//` or a trailing `/`) is a segment like any other.
///
/// One pass, no allocation: for each period `p` (1 to 3) it counts how many segments in a row
/// equal the one `p` before. A run repeated `k` times makes `(k - 1)·p` such matches.
fn is_trap_path(path: &str, max_segments: usize, max_repeats: usize) -> bool {
    const PERIODS: usize = 3;
    let path = path.strip_prefix('/').unwrap_or(path);
    // The last segments seen, the latest first.
    let mut last: [&str; PERIODS] = [""; PERIODS];
    let mut matches = [0usize; PERIODS];
    for (i, seg) in path.split('/').enumerate() {
        if i >= max_segments {
            return true;
        }
        for p in 1..=PERIODS {
            if i >= p && seg == last[p - 1] {
                matches[p - 1] += 1;
                if matches[p - 1] >= max_repeats.saturating_mul(p) {
                    return true;
                }
            } else {
                matches[p - 1] = 0;
            }
        }
        last.copy_within(0..PERIODS - 1, 1);
        last[0] = seg;
    }
    false
}

/// The registrable domain (public suffix + one label) of `host`; an IP address or a name
/// without a public suffix (`localhost`) is its own domain.
pub fn registrable_domain(host: &str) -> &str {
    let h = host.trim_end_matches('.');
    if h.starts_with('[') || h.parse::<std::net::Ipv4Addr>().is_ok() {
        return h;
    }
    psl::domain_str(h).unwrap_or(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(url: &str, depth: u32) -> Request {
        let mut r = Request::get(Url::parse(url).unwrap());
        r.depth = depth;
        r
    }

    fn scope(cfg: ScopeConfig, seeds: &[&str]) -> Scope {
        let seeds: Vec<Url> = seeds.iter().map(|s| Url::parse(s).unwrap()).collect();
        Scope::new(&cfg, &seeds).unwrap()
    }

    #[test]
    fn seeds_registrable_domains_are_accepted_with_subdomains() {
        let s = scope(ScopeConfig::default(), &["https://www.example.co.uk/start"]);
        assert_eq!(s.domains(), ["example.co.uk"]);
        assert!(s.check(&req("https://shop.example.co.uk/", 1)).is_ok());
        assert!(s.check(&req("http://example.co.uk/", 1)).is_ok());
        assert_eq!(s.check(&req("https://other.co.uk/", 1)), Err(SkipReason::Domain));
        assert_eq!(s.check(&req("https://badexample.co.uk/", 1)), Err(SkipReason::Domain));
    }

    #[test]
    fn ip_hosts_are_their_own_domain() {
        let s = scope(ScopeConfig::default(), &["http://127.0.0.1:8080/"]);
        assert!(s.check(&req("http://127.0.0.1:9999/x", 1)).is_ok());
        assert_eq!(s.check(&req("http://127.0.0.2:8080/", 1)), Err(SkipReason::Domain));
    }

    #[test]
    fn explicit_domains_add_to_the_seeds() {
        let cfg = ScopeConfig { allowed_domains: vec!["blog.other.org".into()], ..Default::default() };
        let s = scope(cfg, &["http://example.com/"]);
        assert!(s.check(&req("http://blog.other.org/a", 1)).is_ok());
        assert!(s.check(&req("http://x.blog.other.org/a", 1)).is_ok());
        assert_eq!(s.check(&req("http://other.org/a", 1)), Err(SkipReason::Domain));
        assert!(
            Scope::new(&ScopeConfig { allowed_domains: vec!["a/b".into()], ..Default::default() }, &[])
                .is_err()
        );
    }

    #[test]
    fn only_http_and_https() {
        let s = scope(ScopeConfig { any_domain: true, ..Default::default() }, &[]);
        assert!(s.check(&req("https://a.b/", 0)).is_ok());
        for u in
            ["ftp://a.b/", "mailto:x@a.b", "javascript:void(0)", "data:text/plain,x", "file:///etc/passwd"]
        {
            assert_eq!(s.check(&req(u, 0)), Err(SkipReason::Scheme), "{u}");
        }
    }

    #[test]
    fn max_depth_zero_is_unlimited() {
        let s = scope(ScopeConfig::default(), &["http://a.b/"]);
        assert!(s.check(&req("http://a.b/x", 1000)).is_ok());
        let s = scope(ScopeConfig { max_depth: 2, ..Default::default() }, &["http://a.b/"]);
        assert!(s.check(&req("http://a.b/x", 2)).is_ok());
        assert_eq!(s.check(&req("http://a.b/x", 3)), Err(SkipReason::Depth));
    }

    #[test]
    fn allow_and_deny_patterns() {
        let cfg = ScopeConfig {
            any_domain: true,
            allow: vec![UrlPattern::parse("http://a.b/docs/**"), UrlPattern::parse("re:/blog/\\d+$")],
            deny: vec![UrlPattern::parse("**/private/**"), UrlPattern::parse("re:\\.pdf$")],
            ..Default::default()
        };
        let s = scope(cfg, &[]);
        assert!(s.check(&req("http://a.b/docs/x/y", 0)).is_ok());
        assert!(s.check(&req("http://a.b/blog/42", 0)).is_ok());
        assert_eq!(s.check(&req("http://a.b/other", 0)), Err(SkipReason::Pattern));
        assert_eq!(s.check(&req("http://a.b/docs/private/x", 0)), Err(SkipReason::Pattern));
        assert_eq!(s.check(&req("http://a.b/docs/x.pdf", 0)), Err(SkipReason::Pattern));
    }

    #[test]
    fn a_star_matches_across_slashes() {
        let cfg = ScopeConfig {
            any_domain: true,
            deny: vec![UrlPattern::parse("*logout*"), UrlPattern::parse("glob:http://a.b/*.pdf")],
            ..Default::default()
        };
        let s = scope(cfg, &[]);
        assert_eq!(s.check(&req("http://h/a/logout?x", 0)), Err(SkipReason::Pattern));
        assert_eq!(s.check(&req("https://h/logout", 0)), Err(SkipReason::Pattern));
        assert_eq!(s.check(&req("http://a.b/docs/2024/report.pdf", 0)), Err(SkipReason::Pattern));
        assert!(s.check(&req("http://h/a/login", 0)).is_ok());
        assert!(s.check(&req("http://c.d/report.pdf", 0)).is_ok());

        // `**` keeps matching any run of segments, none included.
        let cfg = ScopeConfig {
            any_domain: true,
            allow: vec![UrlPattern::parse("https://*.example.com/docs/**")],
            ..Default::default()
        };
        let s = scope(cfg, &[]);
        assert!(s.check(&req("https://www.example.com/docs/", 0)).is_ok());
        assert!(s.check(&req("https://www.example.com/docs/a/b/c", 0)).is_ok());
        assert_eq!(s.check(&req("https://www.example.com/blog/docs/a", 0)), Err(SkipReason::Pattern));
    }

    #[test]
    fn bad_patterns_are_errors() {
        let bad_re = ScopeConfig { deny: vec![UrlPattern::parse("re:(")], ..Default::default() };
        assert!(matches!(Scope::new(&bad_re, &[]), Err(ScopeError::Regex(_))));
        let bad_glob = ScopeConfig { deny: vec![UrlPattern::parse("a[")], ..Default::default() };
        assert!(matches!(Scope::new(&bad_glob, &[]), Err(ScopeError::Glob { .. })));
    }

    #[test]
    fn urls_longer_than_the_limit_are_skipped() {
        // `http://a.test/` is 14 bytes.
        let long = |n: usize| req(&format!("http://a.test/{}", "x".repeat(n - 14)), 0);
        let at_most = |limit: usize| {
            scope(ScopeConfig { any_domain: true, max_url_bytes: limit, ..Default::default() }, &[])
        };
        let default = at_most(0);
        assert_eq!(default.check(&long(MAX_URL_BYTES)), Ok(()), "8 KiB exactly: fetched");
        assert_eq!(default.check(&long(MAX_URL_BYTES + 1)), Err(SkipReason::UrlTooLong), "one byte more");
        assert_eq!(at_most(100).check(&long(101)), Err(SkipReason::UrlTooLong), "a limit of one's own");
        assert_eq!(at_most(100).check(&long(100)), Ok(()));
    }

    fn trap(s: &Scope, url: &str) -> bool {
        s.check(&req(url, 0)) == Err(SkipReason::Trap)
    }

    #[test]
    fn repeated_path_segments_are_traps() {
        let s = scope(ScopeConfig { any_domain: true, ..Default::default() }, &[]);
        for u in [
            "http://h/a/a/a/",
            "http://h/a/a/a",
            "http://h/docs/a/a/a/b",
            "http://h/x/y/x/y/x/y",
            "http://h/p/x/y/z/x/y/z/x/y/z/q",
            "http://h/a////b",
            "http://h/cal/2024/cal/2024/cal/2024/?m=1",
        ] {
            assert!(trap(&s, u), "{u}: a trap");
        }
        for u in [
            "http://h/",
            "http://h/a/a/",
            "http://h/a/a/b/a",
            "http://h/a/b/a/c",
            "http://h/x/y/x/y/x",
            "http://h/a//b",
            "http://h/a///b",
            "http://h/A/a/A",
            "http://h/2024/01/01/",
            "http://h/a/b/c/d/a/b/c/d/a/b/c/d",
            "http://h/p?x=a/a/a/a",
        ] {
            assert_eq!(s.check(&req(u, 0)), Ok(()), "{u}: not a trap");
        }
    }

    #[test]
    fn paths_deeper_than_the_limit_are_traps() {
        let path = |n: usize| (0..n).map(|i| format!("/s{i}")).collect::<String>();
        let s = scope(ScopeConfig { any_domain: true, ..Default::default() }, &[]);
        assert_eq!(s.check(&req(&format!("http://h{}", path(MAX_PATH_SEGMENTS)), 0)), Ok(()));
        assert!(trap(&s, &format!("http://h{}", path(MAX_PATH_SEGMENTS + 1))));
        assert!(trap(&s, &format!("http://h{}/", path(MAX_PATH_SEGMENTS))), "a trailing / is a segment");
        let s = scope(ScopeConfig { any_domain: true, max_path_segments: 3, ..Default::default() }, &[]);
        assert_eq!(s.check(&req("http://h/a/b/c", 0)), Ok(()));
        assert!(trap(&s, "http://h/a/b/c/d"));
    }

    #[test]
    fn the_repetition_limit_is_a_setting() {
        let s = scope(ScopeConfig { any_domain: true, max_segment_repeats: 1, ..Default::default() }, &[]);
        assert!(trap(&s, "http://h/a/a"));
        assert!(trap(&s, "http://h/x/y/x/y"));
        assert_eq!(s.check(&req("http://h/x/y/x", 0)), Ok(()));
        let s = scope(ScopeConfig { any_domain: true, max_segment_repeats: 4, ..Default::default() }, &[]);
        assert_eq!(s.check(&req("http://h/a/a/a/a", 0)), Ok(()));
        assert!(trap(&s, "http://h/a/a/a/a/a"));
    }

    #[test]
    fn traps_are_checked_after_depth_and_before_patterns() {
        let cfg = ScopeConfig { max_depth: 1, deny: vec![UrlPattern::parse("*/a/*")], ..Default::default() };
        let s = scope(cfg, &["http://h/"]);
        assert_eq!(s.check(&req("http://h/a/a/a", 2)), Err(SkipReason::Depth));
        assert_eq!(s.check(&req("http://h/a/a/a", 1)), Err(SkipReason::Trap));
        assert_eq!(s.check(&req("http://h/a/b", 1)), Err(SkipReason::Pattern));
    }

    #[test]
    fn redirect_chains_are_capped() {
        let s = scope(ScopeConfig { max_redirects: 2, any_domain: true, ..Default::default() }, &[]);
        let mut r = req("http://a.b/", 0);
        r.redirects = 2;
        assert!(s.check(&r).is_ok());
        r.redirects = 3;
        assert_eq!(s.check(&r), Err(SkipReason::TooManyRedirects));
    }
}
