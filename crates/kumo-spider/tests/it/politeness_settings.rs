//! A spider file's politeness settings: the adaptive throttle and per-host limit rules, as
//! they reach the engine, and the mistakes in them named by line and field.

use std::time::Duration;

use kumo_engine::AutoThrottle;
use kumo_spider::{LoadOptions, SpiderConfigError, SpiderFile};

const HEAD: &str = "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:1/\"]\n";

fn file(text: &str) -> SpiderFile {
    SpiderFile::parse(text, "t.toml", &LoadOptions::default()).expect("a valid file")
}

fn err(text: &str) -> SpiderConfigError {
    SpiderFile::parse(text, "t.toml", &LoadOptions::default()).expect_err("should be refused")
}

#[test]
fn auto_throttle_is_off_unless_asked_for() {
    assert_eq!(file(HEAD).sites[0].crawl.auto_throttle, None);
    let on = file(&format!("{HEAD}auto_throttle = {{}}\n"));
    assert_eq!(on.sites[0].crawl.auto_throttle, Some(AutoThrottle::default()), "empty: the defaults");
    let set = file(&format!("{HEAD}auto_throttle = {{ target_concurrency = 2.5, max_delay_ms = 1500 }}\n"));
    assert_eq!(
        set.sites[0].crawl.auto_throttle,
        Some(AutoThrottle {
            target_concurrency: 2.5,
            start_delay: AutoThrottle::default().start_delay,
            max_delay: Duration::from_millis(1500),
        })
    );
}

/// `max_host_pause_secs` caps how long a server may pause a host (Retry-After on 429/503);
/// left out, it is the engine's default.
#[test]
fn the_host_pause_cap_is_a_site_setting() {
    assert_eq!(file(HEAD).sites[0].crawl.max_host_pause, Duration::from_secs(300));
    let set = file(&format!("{HEAD}max_host_pause_secs = 60\n"));
    assert_eq!(set.sites[0].crawl.max_host_pause, Duration::from_secs(60));
}

/// `max_retry_after_secs` sets the longest `Retry-After` believed, as `--max-retry-after` does.
#[test]
fn the_retry_after_cap_is_a_site_setting() {
    assert_eq!(file(HEAD).sites[0].crawl.max_retry_after, Duration::from_secs(120));
    let set = file(&format!("{HEAD}max_retry_after_secs = 5\n"));
    assert_eq!(set.sites[0].crawl.max_retry_after, Duration::from_secs(5));
}

#[test]
fn auto_throttle_mistakes_are_named() {
    let e = err(&format!("{HEAD}auto_throttle = {{ target_concurrency = 0.0 }}\n"));
    assert_eq!(e.field.as_deref(), Some("site \"s\" → auto_throttle"), "{e}");
    assert!(e.message.contains("target concurrency"), "{e}");
    let e = err(&format!("{HEAD}auto_throttle = {{ max_delay = 3 }}\n"));
    assert_eq!(e.line, 4, "{e}");
    assert!(e.to_string().contains("unknown field `max_delay`"), "{e}");
}

#[test]
fn limit_rules_reach_the_engine_with_their_proxies() {
    let f = file(&format!(
        "{HEAD}per_host = 4\ndelay_ms = 100\n\
         [[site.limit]]\nhost = \"*.shop.test\"\nper_host = 1\nproxies = [\"http://127.0.0.1:3128\", \"socks5://127.0.0.1:1080\"]\n\
         headers = {{ \"x-key\" = \"k\" }}\n\
         [[site.limit]]\nregex = '^api\\.'\ndelay_ms = 2000\n"
    ));
    let p = &f.sites[0].crawl.politeness;
    assert_eq!(p.rules.len(), 2);
    let shop = p.rule_for("www.shop.test").expect("the glob rule");
    assert_eq!(shop.proxies(), ["http://127.0.0.1:3128", "socks5://127.0.0.1:1080"]);
    assert_eq!(shop.headers(), [("x-key".to_string(), "k".to_string())]);
    assert_eq!(
        (shop.policy.parallelism, shop.policy.delay),
        (1, Duration::from_millis(100)),
        "delay_ms: the site's"
    );
    let api = p.rule_for("api.example.org").expect("the regex rule");
    assert!(api.is_regex() && api.proxies().is_empty());
    assert_eq!(
        (api.policy.parallelism, api.policy.delay),
        (4, Duration::from_secs(2)),
        "per_host: the site's"
    );
    assert!(p.rule_for("other.test").is_none());
}

#[test]
fn limit_rule_mistakes_are_named() {
    let e = err(&format!("{HEAD}[[site.limit]]\nper_host = 2\n"));
    assert_eq!(e.field.as_deref(), Some("site \"s\" → limit[0]"), "{e}");
    assert!(e.message.contains("exactly one of `host`"), "{e}");
    let e = err(&format!(
        "{HEAD}[[site.limit]]\nhost = \"a.test\"\nproxies = [\"http://127.0.0.1:3128\", \"ftp://x\"]\n"
    ));
    assert_eq!((e.line, e.field.as_deref()), (6, Some("site \"s\" → limit[0].proxies[1]")), "{e}");
    let e = err(&format!("{HEAD}[[site.limit]]\nregex = '(a'\n"));
    assert_eq!((e.line, e.field.as_deref()), (5, Some("site \"s\" → limit[0].regex")), "{e}");
    let e = err(&format!("{HEAD}[[site.limit]]\nhost = \"a.test\"\nper_host = 0\n"));
    assert!(e.to_string().contains("per_host: must be at least 1"), "{e}");
    let e = err(&format!("{HEAD}[[site.limit]]\nhost = \"a.test\"\nproxy = \"http://x\"\n"));
    assert!(e.to_string().contains("unknown field `proxy`"), "{e}");
}

/// `rate_limit` on a site holds for every host, and a `[[site.limit]]` rule's own replaces it
/// for the hosts it matches; a rule without one keeps the site's.
#[test]
fn rate_limits_are_set_per_site_and_per_rule() {
    use kumo_frontier::RateLimit;
    let f = file(&format!(
        "{HEAD}rate_limit = [\"10/s\", \"100/min\"]\n\
         [[site.limit]]\nhost = \"slow.test\"\nrate_limit = [\"5/h\"]\n\
         [[site.limit]]\nhost = \"api.test\"\nper_host = 2\n"
    ));
    let p = &f.sites[0].crawl.politeness;
    let site = [RateLimit::per_second(10), RateLimit::per_minute(100)];
    assert_eq!(p.rate_limits_for("slow.test"), &[RateLimit::per_hour(5)], "the rule's own");
    assert_eq!(p.rate_limits_for("api.test"), &site, "a rule without one keeps the site's");
    assert_eq!(p.rate_limits_for("other.test"), &site, "every other host: the site's");
    assert!(file(HEAD).sites[0].crawl.politeness.rate_limits_for("other.test").is_empty(), "none unless set");

    let e = err(&format!("{HEAD}rate_limit = [\"10/s\", \"often\"]\n"));
    assert_eq!((e.line, e.field.as_deref()), (4, Some("site \"s\" → rate_limit")), "{e}");
    assert!(e.message.contains("expected MAX/PERIOD"), "{e}");
    let e = err(&format!("{HEAD}[[site.limit]]\nhost = \"a.test\"\nrate_limit = [\"0/s\"]\n"));
    assert_eq!((e.line, e.field.as_deref()), (6, Some("site \"s\" → limit[0].rate_limit")), "{e}");
}
