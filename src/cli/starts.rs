//! Start URLs as people type them, and start URLs the crawl's own rules would skip: both
//! found before anything is created, and said as mistakes in what was asked (exit 2) rather
//! than a crawl of nothing that exits 0.

use kumo_core::{Request, SkipReason, Url};
use kumo_frontier::{Scope, ScopeConfig, UrlPatterns};
use url::Host;

/// The URL a start written without its scheme probably means: `example.com` →
/// `https://example.com/`; a machine's own or a bare address (a local test server, most
/// likely) → `http://127.0.0.1:8080/x`. `None` when `s` has a scheme or names no host.
pub fn with_scheme(s: &str) -> Option<String> {
    let s = s.trim();
    if s.contains("://") {
        return None;
    }
    // `localhost:8080` parses as the scheme `localhost`: what follows its colon is a port.
    if let Ok(u) = Url::parse(s)
        && !u.path().starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let rest = s.trim_start_matches('/');
    let guess = Url::parse(&format!("https://{rest}")).ok()?;
    let local = match guess.host()? {
        Host::Domain(d) => d.eq_ignore_ascii_case("localhost") || d.is_empty(),
        Host::Ipv4(_) | Host::Ipv6(_) => true,
    };
    if !local {
        return Some(guess.to_string());
    }
    let plain = Url::parse(&format!("http://{rest}")).ok()?;
    Some(plain.to_string())
}

/// Where the crawl's rules were given, for naming them.
#[derive(Clone, Copy)]
pub enum Rules {
    /// `kumo crawl URL` options.
    Flags,
    /// A spider file's `[[site]]` keys.
    SpiderFile,
}

/// Why the crawl's own rules skip `url`, named as the user wrote them; `None` if they let it
/// through.
fn why_skipped(scope: &Scope, cfg: &ScopeConfig, url: &Url, rules: Rules) -> Option<String> {
    let reason = scope.check(&Request::get(url.clone())).err()?;
    let (segments, repeats) = match rules {
        Rules::Flags => ("--max-path-segments", "--max-segment-repeats"),
        Rules::SpiderFile => ("max_path_segments", "max_segment_repeats"),
    };
    Some(match reason {
        SkipReason::Pattern => {
            let denied = UrlPatterns::build(&cfg.deny).is_ok_and(|d| d.matches(url.as_str()));
            match (denied, rules) {
                (true, Rules::Flags) => "a --deny pattern matches it".to_string(),
                (false, Rules::Flags) => "no --allow pattern matches it".to_string(),
                (_, Rules::SpiderFile) => "the site's URL patterns skip it".to_string(),
            }
        }
        SkipReason::Trap => format!(
            "its path looks like a spider trap (more segments than {segments} allows, or one run \
             of them repeated more than {repeats} allows)"
        ),
        SkipReason::UrlTooLong => "it is longer than the longest URL kumo fetches (8 KiB)".to_string(),
        other => format!("it is out of scope ({other})"),
    })
}

/// Refuses a crawl whose own rules skip every start URL (it would fetch nothing and report
/// success), naming the rule that skips each; warns of each start skipped when others remain.
pub fn check_in_scope(cfg: &ScopeConfig, starts: &[Url], rules: Rules) -> anyhow::Result<()> {
    let scope = Scope::new(cfg, starts)?;
    let skipped: Vec<(&Url, String)> =
        starts.iter().filter_map(|u| why_skipped(&scope, cfg, u, rules).map(|why| (u, why))).collect();
    if skipped.is_empty() {
        return Ok(());
    }
    if skipped.len() < starts.len() {
        for (url, why) in &skipped {
            tracing::warn!("start URL {url} is skipped: {why}");
        }
        return Ok(());
    }
    let list: Vec<String> = skipped.iter().map(|(u, why)| format!("{u}: {why}")).collect();
    let what = if starts.len() == 1 { "the start URL" } else { "every start URL" };
    anyhow::bail!("the crawl's own rules skip {what}, so it would fetch nothing:\n  {}", list.join("\n  "))
}

/// [`check_in_scope`] for a spider file's site; a refusal is bad usage, naming the site.
pub fn check_site(site: &kumo_spider::SiteSpec) -> anyhow::Result<()> {
    check_in_scope(&site.crawl.scope, &site.starts(), Rules::SpiderFile)
        .map_err(|e| super::outcome::usage(e.context(format!("site \"{}\"", site.name))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kumo_frontier::UrlPattern;

    #[test]
    fn a_start_without_its_scheme_gets_one_suggested() {
        assert_eq!(with_scheme("example.com").as_deref(), Some("https://example.com/"));
        assert_eq!(with_scheme("example.com/a?b=1").as_deref(), Some("https://example.com/a?b=1"));
        assert_eq!(with_scheme("example.com:8443/x").as_deref(), Some("https://example.com:8443/x"));
        assert_eq!(with_scheme("127.0.0.1:8080/x").as_deref(), Some("http://127.0.0.1:8080/x"));
        assert_eq!(with_scheme("localhost:8080").as_deref(), Some("http://localhost:8080/"));
        assert_eq!(with_scheme("//example.com/").as_deref(), Some("https://example.com/"));
        assert_eq!(with_scheme("[::1]:80/").as_deref(), Some("http://[::1]/"));
        for has_one in ["https://example.com/", "ftp://example.com/", "mailto:a@example.com"] {
            assert_eq!(with_scheme(has_one), None, "{has_one}");
        }
    }

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| Url::parse(u).unwrap()).collect()
    }

    #[test]
    fn rules_that_skip_every_start_are_refused_by_name() {
        let allow = ScopeConfig { allow: vec![UrlPattern::parse("*/author/*")], ..Default::default() };
        let e = check_in_scope(&allow, &urls(&["http://h/"]), Rules::Flags).unwrap_err().to_string();
        assert!(e.contains("http://h/: no --allow pattern matches it"), "{e}");
        let deny = ScopeConfig { deny: vec![UrlPattern::parse("*/h/*")], ..Default::default() };
        let e =
            check_in_scope(&deny, &urls(&["http://h/", "http://h/x"]), Rules::Flags).unwrap_err().to_string();
        assert!(e.contains("every start URL") && e.contains("a --deny pattern matches it"), "{e}");
        let segments = ScopeConfig { max_path_segments: 1, ..Default::default() };
        let e = check_in_scope(&segments, &urls(&["http://h/a/b/c"]), Rules::SpiderFile).unwrap_err();
        assert!(e.to_string().contains("max_path_segments"), "{e}");
    }

    #[test]
    fn rules_that_let_one_start_through_are_no_mistake() {
        let allow = ScopeConfig { allow: vec![UrlPattern::parse("*/a/*")], ..Default::default() };
        check_in_scope(&allow, &urls(&["http://h/", "http://h/a/1"]), Rules::Flags).unwrap();
        check_in_scope(&ScopeConfig::default(), &urls(&["http://h/"]), Rules::Flags).unwrap();
    }
}
