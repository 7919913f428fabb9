//! Layers resolved once: defaults < spider file < `[[site]]` < library < command line, then
//! turned into the `CrawlConfig` the engine runs on.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use kumo_core::{CanonicalOptions, DedupMode, Url};
use kumo_downloader::{ConnectionLimit, DnsConfig, DnsResolver, DownloaderConfig, UserAgent};
use kumo_engine::{AutoThrottle, CrawlConfig, RobotsConfig};
use kumo_frontier::{Budget, HostPolicy, HostRule, IpPolicy, Politeness, RateLimit, ScopeConfig, UrlPattern};

use crate::layer::{Layer, Source};
use crate::{SettingError, Value};

/// Every setting's value, and where it came from.
#[derive(Debug, Clone)]
pub struct Settings {
    values: BTreeMap<&'static str, (Value, Source)>,
}

impl Settings {
    /// The defaults with `layers` over them, by their [`Source`] (a later source wins, and of
    /// two layers from one source the later given); checks what holds between settings
    /// (conflicts, switches another needs).
    pub fn resolve<'a>(layers: impl IntoIterator<Item = &'a Layer>) -> Result<Settings, SettingError> {
        let mut values = BTreeMap::new();
        let mut layers: Vec<&Layer> = layers.into_iter().collect();
        layers.sort_by_key(|l| l.source); // stable: one source's layers keep their order
        let mut take = |layer: &Layer| {
            for (name, value) in layer.iter() {
                values.insert(name, (value.clone(), layer.source));
            }
        };
        take(&Layer::defaults());
        // A broad crawl's defaults go under everything given, wherever `broad` was set.
        let broad = layers.iter().rev().find_map(|l| l.get("broad"));
        if matches!(broad, Some(Value::Switch(true))) {
            take(&Layer::broad());
        }
        layers.into_iter().for_each(take);
        let settings = Settings { values };
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), SettingError> {
        for s in crate::SETTINGS.iter().filter(|s| self.is_set(s.name)) {
            if let Some(&other) = s.conflicts.iter().find(|o| self.is_set(o)) {
                return Err(SettingError::Conflict { name: s.name, other });
            }
            if let Some(needs) = s.requires
                && self.source(s.name) != Some(Source::Default)
                && !self.switch(needs)
            {
                return Err(SettingError::Needs { name: s.name, needs });
            }
        }
        Ok(())
    }

    /// Set to something other than nothing: on, a non-empty list, any other value.
    fn is_set(&self, name: &str) -> bool {
        match self.values.get(name).map(|(v, _)| v) {
            None | Some(Value::Switch(false)) => false,
            Some(Value::List(l)) => !l.is_empty(),
            Some(_) => true,
        }
    }

    /// A setting's value, by name; `None` when it has no default and nothing gave one.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name).map(|(v, _)| v)
    }

    /// Where a setting's value came from.
    pub fn source(&self, name: &str) -> Option<Source> {
        self.values.get(name).map(|(_, s)| *s)
    }

    /// Every setting of the table by name, as a user would write it (`none`: unset).
    pub fn texts(&self) -> BTreeMap<&'static str, String> {
        crate::SETTINGS
            .iter()
            .map(|s| (s.name, self.get(s.name).map_or_else(|| "none".to_string(), Value::text)))
            .collect()
    }

    /// Whether a switch is on; `false` when unset or not a switch.
    pub fn switch(&self, name: &str) -> bool {
        matches!(self.get(name), Some(Value::Switch(true)))
    }

    /// A whole number; 0 when unset or not a count.
    pub fn count(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Value::Count(n)) => *n,
            _ => 0,
        }
    }

    /// A number; 0 when unset or not a number.
    pub fn number(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(Value::Number(n)) => *n,
            _ => 0.0,
        }
    }

    /// A duration; `None` when unset (a limit that is off).
    pub fn duration(&self, name: &str) -> Option<Duration> {
        match self.get(name) {
            Some(Value::Duration(d)) => Some(*d),
            _ => None,
        }
    }

    /// A list's items; empty when unset or not a list.
    pub fn list(&self, name: &str) -> &[String] {
        match self.get(name) {
            Some(Value::List(l)) => l,
            _ => &[],
        }
    }

    fn duration_or_zero(&self, name: &str) -> Duration {
        self.duration(name).unwrap_or_default()
    }

    fn budget(&self) -> Budget {
        Budget { per_host: self.count("max_pages_per_host"), per_domain: self.count("max_pages_per_domain") }
    }

    /// Politeness per IP address, when `per_ip` or `ip_delay` asks for it.
    fn ip_policy(&self) -> Result<Option<IpPolicy>, SettingError> {
        let parallelism = u32::try_from(self.count("per_ip")).map_err(|_| too_large("per_ip"))?;
        let delay = self.duration_or_zero("ip_delay");
        Ok((parallelism > 0 || !delay.is_zero()).then_some(IpPolicy { parallelism, delay }))
    }

    /// What the engine runs on, with no seeds yet (the caller's: start URLs or a site's).
    pub fn crawl_config(&self) -> Result<CrawlConfig, SettingError> {
        let defaults = CrawlConfig::default();
        let policy = HostPolicy {
            parallelism: u32::try_from(self.count("per_host")).map_err(|_| too_large("per_host"))?,
            delay: self.duration_or_zero("delay"),
            random_delay: self.duration_or_zero("random_delay"),
        };
        let mut rules = Vec::new();
        let rates = self.rate_limits()?;
        if !rates.is_empty() {
            let every = HostRule::new("*", policy).expect("`*` is a glob");
            rules.push(every.with_rate_limits(rates));
        }
        let config = CrawlConfig {
            sitemaps: self.sitemaps()?,
            robots_sitemaps: self.switch("robots_sitemaps"),
            robots: RobotsConfig {
                obey: !self.switch("ignore_robots"),
                max_crawl_delay: self.duration_or_zero("max_crawl_delay"),
                ..Default::default()
            },
            scope: self.scope()?,
            canonical: CanonicalOptions {
                sort_query: self.switch("sort_query"),
                strip_params: self.list("strip_param").to_vec(),
                keep_session_ids: self.switch("keep_session_ids"),
            },
            dedup: if self.switch("non_strict") { DedupMode::NonStrict } else { DedupMode::Strict },
            concurrency: usize::try_from(self.count("concurrency")).map_err(|_| too_large("concurrency"))?,
            politeness: Politeness {
                default: policy,
                rules,
                per_ip: self.ip_policy()?,
                budget: self.budget(),
            },
            auto_throttle: self.auto_throttle()?,
            downloader: self.downloader()?,
            proxies: self.proxies()?,
            max_pages: self.count("max_pages"),
            max_items: self.count("max_items"),
            max_errors: self.count("max_errors"),
            max_duration: self.duration("max_duration"),
            max_retries: u32::try_from(self.count("retries")).map_err(|_| too_large("retries"))?,
            max_host_pause: self.duration("max_host_pause").unwrap_or(defaults.max_host_pause),
            max_retry_after: self.duration("max_retry_after").unwrap_or(defaults.max_retry_after),
            ..defaults
        };
        Ok(config)
    }

    fn scope(&self) -> Result<ScopeConfig, SettingError> {
        let count = |name: &'static str| usize::try_from(self.count(name)).map_err(|_| too_large(name));
        Ok(ScopeConfig {
            allowed_domains: self.list("allow_domain").to_vec(),
            any_domain: self.switch("any_domain"),
            max_depth: u32::try_from(self.count("max_depth")).map_err(|_| too_large("max_depth"))?,
            allow: self.list("allow").iter().map(|p| UrlPattern::parse(p)).collect(),
            deny: self.list("deny").iter().map(|p| UrlPattern::parse(p)).collect(),
            max_redirects: 10,
            // The default: 8 KiB.
            max_url_bytes: 0,
            max_path_segments: count("max_path_segments")?,
            max_segment_repeats: count("max_segment_repeats")?,
        })
    }

    fn downloader(&self) -> Result<DownloaderConfig, SettingError> {
        let agents = self.list("user_agent");
        let dns = self.dns()?;
        // A lookup may hold a socket for each of its two questions (A and AAAA).
        let dns_sockets = dns.as_ref().map_or(0, |d| 2 * d.config().max_in_flight as u64);
        Ok(DownloaderConfig {
            dns,
            timeout: self.duration_or_zero("timeout"),
            cookies: !self.switch("no_cookies"),
            keep_alive: self.duration_or_zero("keep_alive"),
            connections: match usize::try_from(self.count("max_connections")) {
                Ok(0) => ConnectionLimit::from_open_files(dns_sockets).map(Arc::new),
                Ok(n) => Some(Arc::new(ConnectionLimit::new(n))),
                Err(_) => return Err(too_large("max_connections")),
            },
            min_body_rate: self.count("min_body_rate"),
            min_body_window: self.duration_or_zero("min_body_window"),
            max_body_bytes: usize::try_from(self.count("max_body")).map_err(|_| too_large("max_body"))?,
            user_agent: match agents {
                _ if self.switch("random_user_agent") => UserAgent::Random,
                [] => UserAgent::default(),
                [one] => UserAgent::Fixed(one.clone()),
                many => UserAgent::rotate(many.to_vec()),
            },
            ..Default::default()
        })
    }

    /// kumo's own resolver, when DNS servers or overrides are given (else the system's).
    fn dns(&self) -> Result<Option<Arc<DnsResolver>>, SettingError> {
        let (servers, overrides) = (self.list("dns_server"), self.list("resolve"));
        if servers.is_empty() && overrides.is_empty() {
            return Ok(None);
        }
        let bad = |name: &'static str| move |message: String| SettingError::Bad { name, message };
        let cfg = DnsConfig {
            servers: servers
                .iter()
                .map(|s| dns_server(s))
                .collect::<Result<_, _>>()
                .map_err(bad("dns_server"))?,
            overrides: overrides
                .iter()
                .map(|o| override_of(o))
                .collect::<Result<_, _>>()
                .map_err(bad("resolve"))?,
            ..DnsConfig::default()
        };
        let resolver = DnsResolver::new(cfg).map_err(|e| bad("dns_server")(e.to_string()))?;
        Ok(Some(Arc::new(resolver)))
    }

    fn auto_throttle(&self) -> Result<Option<AutoThrottle>, SettingError> {
        if !self.switch("auto_throttle") {
            return Ok(None);
        }
        let t = AutoThrottle {
            target_concurrency: self.number("auto_throttle_target"),
            start_delay: self.duration_or_zero("auto_throttle_start_delay"),
            max_delay: self.duration_or_zero("auto_throttle_max_delay"),
        };
        t.check().map_err(|e| SettingError::Bad { name: "auto_throttle", message: e.to_string() })?;
        Ok(Some(t))
    }

    fn rate_limits(&self) -> Result<Vec<RateLimit>, SettingError> {
        self.list("rate_limit")
            .iter()
            .map(|r| {
                r.parse::<RateLimit>()
                    .map_err(|e| SettingError::Bad { name: "rate_limit", message: format!("{r:?}: {e}") })
            })
            .collect()
    }

    fn proxies(&self) -> Result<Vec<String>, SettingError> {
        let proxies = self.list("proxy");
        for p in proxies {
            kumo_downloader::check_proxy(p)
                .map_err(|e| SettingError::Bad { name: "proxy", message: e.to_string() })?;
        }
        Ok(proxies.to_vec())
    }

    fn sitemaps(&self) -> Result<Vec<Url>, SettingError> {
        self.list("sitemap")
            .iter()
            .map(|s| {
                let bad =
                    |why: String| SettingError::Bad { name: "sitemap", message: format!("{s:?}: {why}") };
                let url = Url::parse(s.trim()).map_err(|e| bad(e.to_string()))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(bad("not http or https".into()));
                }
                if url.host_str().is_none_or(str::is_empty) {
                    return Err(bad("no host".into()));
                }
                Ok(url)
            })
            .collect()
    }
}

/// A DNS server's address: `IP`, `IP:PORT` or `[IPv6]:PORT`; port 53 when none is given.
pub(crate) fn dns_server(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    text.parse::<SocketAddr>()
        .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
        .map_err(|_| format!("{text:?} is not a DNS server's address (IP or IP:PORT)"))
}

/// `HOST=ADDR`: the host answered with that address.
pub(crate) fn override_of(text: &str) -> Result<(String, IpAddr), String> {
    let (host, addr) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: write HOST=ADDR, such as shop.test=127.0.0.2"))?;
    let ip = addr.trim().parse::<IpAddr>().map_err(|_| format!("{text:?}: {addr:?} is not an IP address"))?;
    let host = host.trim().trim_end_matches('.');
    if host.is_empty() {
        return Err(format!("{text:?}: no host before ="));
    }
    Ok((host.to_ascii_lowercase(), ip))
}

fn too_large(name: &'static str) -> SettingError {
    SettingError::Bad { name, message: "too large".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_layers_win_and_say_so() {
        let mut file = Layer::new(Source::Site);
        file.set("delay", "1s").unwrap();
        file.set("max_pages", "10").unwrap();
        let mut flags = Layer::new(Source::Flag);
        flags.set("delay", "20ms").unwrap();
        let s = Settings::resolve([&file, &flags]).unwrap();
        assert_eq!(s.duration("delay"), Some(Duration::from_millis(20)));
        assert_eq!(s.source("delay"), Some(Source::Flag));
        assert_eq!((s.count("max_pages"), s.source("max_pages")), (10, Some(Source::Site)));
        assert_eq!(s.source("timeout"), Some(Source::Default));
        let given_first = Settings::resolve([&flags, &file]).unwrap();
        assert_eq!(given_first.source("delay"), Some(Source::Flag), "a flag wins, wherever it is given");
    }

    /// `broad` changes the defaults only: a setting a spider file or a flag gives holds,
    /// whichever layer set `broad`.
    #[test]
    fn broad_sets_defaults_that_anything_given_overrides() {
        let mut file = Layer::new(Source::File);
        file.set("delay", "250ms").unwrap();
        let mut flags = Layer::new(Source::Flag);
        flags.set("broad", "true").unwrap();
        let c = Settings::resolve([&file, &flags]).unwrap().crawl_config().unwrap();
        assert!(c.scope.any_domain && !c.downloader.cookies);
        assert_eq!((c.concurrency, c.max_retries), (256, 1));
        assert_eq!(c.politeness.default.parallelism, 1);
        assert_eq!(c.politeness.default.delay, Duration::from_millis(250), "the file's delay holds");
        assert_eq!(c.politeness.per_ip, Some(IpPolicy { parallelism: 1, delay: Duration::from_millis(100) }));
        assert_eq!(c.politeness.budget, Budget { per_host: 0, per_domain: 10_000 });
        assert_eq!(
            (c.downloader.timeout, c.robots.max_crawl_delay),
            (Duration::from_secs(15), Duration::from_secs(10))
        );
        assert!(
            !c.robots_sitemaps && c.sitemaps.is_empty(),
            "nothing asked of a host but robots.txt and its links"
        );
        let plain = Settings::resolve([&file]).unwrap().crawl_config().unwrap();
        assert!(!plain.scope.any_domain && plain.downloader.cookies && plain.politeness.per_ip.is_none());
    }

    #[test]
    fn the_defaults_are_the_engines() {
        let c = Settings::resolve([]).unwrap().crawl_config().unwrap();
        let d = CrawlConfig::default();
        assert_eq!((c.concurrency, c.max_retries), (d.concurrency, d.max_retries));
        assert_eq!((c.max_host_pause, c.max_retry_after), (d.max_host_pause, d.max_retry_after));
        assert_eq!(c.politeness.default.parallelism, 8);
        assert_eq!(c.downloader.timeout, DownloaderConfig::default().timeout);
        assert_eq!(c.downloader.max_body_bytes, DownloaderConfig::default().max_body_bytes);
        assert_eq!(c.robots.max_crawl_delay, RobotsConfig::default().max_crawl_delay);
        assert!(c.robots.obey && c.max_duration.is_none() && c.auto_throttle.is_none());
    }

    #[test]
    fn settings_that_exclude_each_other_are_refused_by_name() {
        let mut l = Layer::new(Source::Flag);
        l.set("random_user_agent", "true").unwrap();
        l.set("user_agent", "kumo").unwrap();
        let e = Settings::resolve([&l]).unwrap_err();
        assert_eq!(e.to_string(), "random_user_agent cannot be set together with user_agent");
        let mut l = Layer::new(Source::Flag);
        l.set("auto_throttle_target", "2").unwrap();
        assert_eq!(
            Settings::resolve([&l]).unwrap_err().to_string(),
            "auto_throttle_target needs auto_throttle"
        );
    }
}
