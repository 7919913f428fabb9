//! robots.txt rules (RFC 9309) for one origin, as the frontier's politeness needs them.
//!
//! What a robots.txt answer means: 2xx → its rules (an unparseable file allows everything);
//! 4xx → no rules, everything allowed; 5xx or no answer → the site is unavailable, so nothing
//! is fetched from it until a later try (RFC 9309 §2.3.1.4). The file itself is parsed by
//! `texting_robots`; this module adds the status rules, the body cap and the crawl-delay cap.

use std::time::Duration;

use kumo_core::Url;
use texting_robots::Robot;

use crate::FAR;

/// The most of a robots.txt that is read (RFC 9309 asks parsers to read at least 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 512 * 1024;

/// The rules of one origin.
#[derive(Debug)]
pub enum RobotsRules {
    /// No robots.txt (4xx), or one that could not be parsed: everything is allowed.
    AllowAll,
    /// Parsed rules for our user-agent.
    Rules(Box<Robot>),
}

/// What fetching robots.txt told us.
#[derive(Debug)]
pub enum RobotsAnswer {
    Rules(RobotsRules),
    /// 5xx or unreachable: fetch nothing from the origin for now.
    Unavailable,
}

impl RobotsAnswer {
    /// Interprets a final (non-redirect) robots.txt response.
    pub fn from_response(status: u16, body: &[u8], agent: &str) -> RobotsAnswer {
        match status {
            200..=299 => {
                let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
                match Robot::new(agent, body) {
                    Ok(r) => RobotsAnswer::Rules(RobotsRules::Rules(Box::new(r))),
                    Err(_) => RobotsAnswer::Rules(RobotsRules::AllowAll),
                }
            }
            400..=499 => RobotsAnswer::Rules(RobotsRules::AllowAll),
            _ => RobotsAnswer::Unavailable,
        }
    }
}

impl RobotsRules {
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            RobotsRules::AllowAll => true,
            RobotsRules::Rules(r) => r.allowed(url.as_str()),
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
    pub status: u16,
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
