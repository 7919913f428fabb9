//! robots.txt rules (RFC 9309) for one origin, as the frontier's politeness needs them.
//!
//! What a robots.txt answer means: 2xx → its rules; 4xx → no rules, everything allowed; 5xx or
//! no answer → the site is unavailable, so nothing is fetched from it until a later try
//! (RFC 9309 §2.3.1.4). The file is parsed by `rules`, our own small parser: a line it does
//! not understand is skipped alone, never the whole file, and every rule is kept whatever its
//! pattern (no pattern is "too complex": wildcards are matched greedily, in time linear in the
//! path and the pattern, not compiled to a regex with a size limit). Of a file longer than
//! [`MAX_ROBOTS_BYTES`] the first [`MAX_ROBOTS_BYTES`] are parsed, up to their last whole line
//! (a cut rule could allow more than the whole one), and the rest is ignored (§2.5).

use std::time::Duration;

use kumo_core::Url;

mod rules;

pub use rules::Robot;

use crate::FAR;

/// The most of a robots.txt that is read (RFC 9309 asks parsers to read at least 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// The rules of one origin.
#[derive(Debug)]
pub enum RobotsRules {
    /// No robots.txt (4xx): everything is allowed.
    AllowAll,
    /// Parsed rules for our user-agent.
    Rules(Box<Robot>),
}

/// What fetching robots.txt told us.
#[derive(Debug)]
pub enum RobotsAnswer {
    /// An answer that says what may be fetched (2xx: its rules; 4xx: everything).
    Rules(RobotsRules),
    /// 5xx or unreachable: fetch nothing from the origin for now.
    Unavailable,
}

impl RobotsAnswer {
    /// Interprets a final (non-redirect) robots.txt response.
    pub fn from_response(status: u16, body: &[u8], agent: &str) -> RobotsAnswer {
        match status {
            200..=299 => RobotsAnswer::Rules(RobotsRules::Rules(Box::new(Robot::new(agent, capped(body))))),
            400..=499 => RobotsAnswer::Rules(RobotsRules::AllowAll),
            _ => RobotsAnswer::Unavailable,
        }
    }
}

/// The part of a robots.txt body that is parsed: all of it up to [`MAX_ROBOTS_BYTES`]; of a
/// longer one (or one of exactly that size: a cut one looks so), its first
/// [`MAX_ROBOTS_BYTES`] up to the last line break in them.
pub fn capped(body: &[u8]) -> &[u8] {
    if body.len() < MAX_ROBOTS_BYTES {
        return body;
    }
    let head = &body[..MAX_ROBOTS_BYTES];
    let end = head.iter().rposition(|&b| matches!(b, b'\n' | b'\r')).map_or(0, |i| i + 1);
    &head[..end]
}

impl RobotsRules {
    /// Whether `url` (its path and query) may be fetched.
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::Rules(r) => r.allowed(&url[url::Position::BeforePath..url::Position::AfterQuery]),
        }
    }

    /// The `Crawl-delay` for our agent, if any and sane; one too long for a `Duration`
    /// (`Crawl-delay: 1e30`) is [`FAR`] (callers cap it), never a panic.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsRules::Rules(r) => r
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::try_from_secs_f64(d as f64).unwrap_or(FAR)),
            RobotsRules::AllowAll => None,
        }
    }

    /// The `Sitemap:` URLs the file lists.
    pub fn sitemaps(&self) -> &[String] {
        match self {
            RobotsRules::Rules(r) => &r.sitemaps,
            RobotsRules::AllowAll => &[],
        }
    }
}

/// The robots.txt URL of `url`'s origin.
pub fn robots_url(url: &Url) -> Option<Url> {
    let mut u = url.clone();
    u.set_path("/robots.txt");
    u.set_query(None);
    u.set_fragment(None);
    (u.host_str().is_some() && matches!(u.scheme(), "http" | "https")).then_some(u)
}

/// The product token of a User-Agent string (`kumo/0.1 (+…)` → `kumo`), which robots.txt
/// groups are matched against.
pub fn agent_token(user_agent: &str) -> &str {
    user_agent.split(['/', ' ']).next().filter(|t| !t.is_empty()).unwrap_or("*")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn statuses_decide_before_the_body() {
        let txt = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: http://h/sitemap.xml\n";
        let RobotsAnswer::Rules(r) = RobotsAnswer::from_response(200, txt, "kumo") else { panic!() };
        assert!(!r.allowed(&url("http://h/private/x")));
        assert!(r.allowed(&url("http://h/public")));
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(2)));
        assert_eq!(r.sitemaps(), ["http://h/sitemap.xml"]);
        let RobotsAnswer::Rules(r) = RobotsAnswer::from_response(404, txt, "kumo") else { panic!() };
        assert!(r.allowed(&url("http://h/private/x")), "4xx allows everything");
        assert!(matches!(RobotsAnswer::from_response(503, txt, "kumo"), RobotsAnswer::Unavailable));
    }

    #[test]
    fn a_crawl_delay_too_long_for_a_duration_is_far_not_a_panic() {
        for delay in ["1e30", "340282346638528859811704183484516925440", "99999999999999999999"] {
            let txt = format!("User-agent: *\nCrawl-delay: {delay}\n");
            let RobotsAnswer::Rules(r) = RobotsAnswer::from_response(200, txt.as_bytes(), "kumo") else {
                panic!()
            };
            assert_eq!(r.crawl_delay(), Some(FAR), "{delay}");
        }
    }

    #[test]
    fn groups_match_our_token() {
        let txt = b"User-agent: kumo\nDisallow: /\n\nUser-agent: *\nAllow: /\n";
        let RobotsAnswer::Rules(r) = RobotsAnswer::from_response(200, txt, "kumo") else { panic!() };
        assert!(!r.allowed(&url("http://h/x")));
        let RobotsAnswer::Rules(r) = RobotsAnswer::from_response(200, txt, "otherbot") else { panic!() };
        assert!(r.allowed(&url("http://h/x")));
    }

    /// The QA's file (F9): a rule of 40 `*` after a plain one.
    fn wildcards(n: usize) -> String {
        format!("/{}$", "*a".repeat(n))
    }

    fn rules(txt: &[u8]) -> RobotsRules {
        match RobotsAnswer::from_response(200, txt, "kumo") {
            RobotsAnswer::Rules(r) => r,
            RobotsAnswer::Unavailable => panic!("a 200 has rules"),
        }
    }

    #[test]
    fn a_rule_of_many_wildcards_holds_and_voids_nothing() {
        for n in [30, 40, 45] {
            let txt = format!("User-agent: *\nDisallow: /private/\nDisallow: {}\n", wildcards(n));
            let r = rules(txt.as_bytes());
            assert!(!r.allowed(&url("http://h/private/x")), "{n} wildcards");
            assert!(r.allowed(&url("http://h/public")), "{n} wildcards");
            // The wildcard rule applies too: a path ending in `a` with n `a`s before it.
            let hit = format!("http://h/{}", "xa".repeat(n));
            assert!(!r.allowed(&url(&hit)), "{n} wildcards: the rule itself holds");
            let miss = format!("http://h/{}b", "xa".repeat(n));
            assert!(r.allowed(&url(&miss)), "{n} wildcards: `$` anchors it");
        }
    }

    #[test]
    fn two_hundred_rules_of_two_thousand_wildcards_parse_and_the_plain_rule_holds() {
        let mut txt = String::from("User-agent: *\nDisallow: /private/\n");
        for _ in 0..200 {
            txt.push_str(&format!("Disallow: {}\n", wildcards(2000)));
        }
        let r = rules(txt.as_bytes());
        assert!(!r.allowed(&url("http://h/private/x")));
        assert!(r.allowed(&url("http://h/public")));
        let long = format!("http://h/{}", "a".repeat(1999));
        assert!(r.allowed(&url(&long)), "1999 `a`s cannot fill 2000 wildcards");
        let long = format!("http://h/{}", "a".repeat(2000));
        assert!(!r.allowed(&url(&long)));
    }

    #[test]
    fn a_long_path_against_many_wildcards_is_decided() {
        // Backtracking would take exponential time here; the greedy matcher scans once.
        let txt = format!("User-agent: *\nDisallow: /{}b$\n", "*a".repeat(5000));
        let r = rules(txt.as_bytes());
        let path = format!("http://h/{}", "a".repeat(8000));
        assert!(r.allowed(&url(&path)));
        assert!(!r.allowed(&url(&format!("{path}b"))));
    }

    #[test]
    fn a_file_over_the_cap_is_read_up_to_it() {
        let mut txt = String::from("User-agent: *\nDisallow: /private/\n");
        while txt.len() < 2 * MAX_ROBOTS_BYTES {
            txt.push_str("# filler filler filler filler filler filler filler filler filler\n");
        }
        txt.push_str("Disallow: /beyond/\n");
        let r = rules(txt.as_bytes());
        assert!(!r.allowed(&url("http://h/private/x")), "the early rules hold");
        assert!(r.allowed(&url("http://h/beyond/x")), "past the cap is ignored");
        // A rule cut by the cap is dropped, not read as a shorter one.
        let mut txt = "User-agent: *\nDisallow: /a\n".to_string();
        txt.push_str(&"#".repeat(MAX_ROBOTS_BYTES - txt.len() - "\nAllow: /a".len()));
        txt.push_str("\nAllow: /abc\n");
        assert_eq!(capped(txt.as_bytes()).len(), MAX_ROBOTS_BYTES - "Allow: /a".len());
        assert!(!rules(txt.as_bytes()).allowed(&url("http://h/a/x")), "not `Allow: /a`");
        assert_eq!(capped(b"short"), b"short");
    }

    #[test]
    fn tokens_and_urls() {
        assert_eq!(agent_token("kumo/0.1 (+https://x)"), "kumo");
        assert_eq!(agent_token("Mozilla/5.0"), "Mozilla");
        assert_eq!(robots_url(&url("http://h:8080/a/b?c#d")).unwrap().as_str(), "http://h:8080/robots.txt");
    }
}

/// A robots.txt answer as workers of one crawl share it: the final status and the body (at
/// most [`MAX_ROBOTS_BYTES`]). Each worker reads it for its own user-agent token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedRobots {
    /// The HTTP status of the final answer.
    pub status: u16,
    /// The answer's body, at most [`MAX_ROBOTS_BYTES`].
    pub body: Vec<u8>,
}

/// What a shared store says when a worker needs an origin's robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsClaim {
    /// Another worker fetched it: use this answer.
    Known(SharedRobots),
    /// Nobody has it: this worker fetches it, and shares what it got.
    Fetch,
    /// Another worker is fetching it now: wait a moment and ask again.
    Wait,
}

/// Where the workers of one crawl share robots.txt answers, so each origin's is fetched once
/// for the whole crawl. Only answers that hold rules are shared; an unavailable robots.txt
/// (5xx, no answer) is retried by each worker on its own back-off.
#[async_trait::async_trait]
pub trait RobotsStore: Send + Sync {
    /// The answer for `origin` if a worker shared one, or the right to fetch it (held for
    /// `fetch_for`, after which another worker may try), or "someone else is fetching".
    async fn claim(
        &self,
        origin: &str,
        fetch_for: std::time::Duration,
    ) -> Result<RobotsClaim, crate::FrontierError>;

    /// Shares what this worker fetched (`None`: nothing worth sharing, the claim is given
    /// back), trusted for `ttl`.
    async fn share(
        &self,
        origin: &str,
        robots: Option<&SharedRobots>,
        ttl: std::time::Duration,
    ) -> Result<(), crate::FrontierError>;
}
