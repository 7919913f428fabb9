//! A site's crawl settings: the file's crawl-wide keys, the site's own and the command
//! line's, resolved by kumo-settings' table; then the site's `[[site.limit]]` rules over them.

use std::collections::BTreeMap;

use kumo_engine::CrawlConfig;
use kumo_frontier::{HostPolicy, HostRule, RateLimit};
use kumo_settings::{Layer, SettingError, Settings, Source, Value};
use toml::Spanned;

use super::build::Context;
use super::error::{Lines, SpiderConfigError};
use super::raw::{RawLimit, RawSite};

/// A layer of a table's settings (`site`: which `[[site]]`, or none for the crawl-wide ones);
/// a refused key is placed at its line.
pub(super) fn layer(
    lines: &Lines,
    site: Option<usize>,
    source: Source,
    table: &BTreeMap<String, toml::Value>,
    here: &dyn Fn(&str) -> String,
) -> Result<Layer, SpiderConfigError> {
    let mut layer = Layer::new(source);
    for (key, value) in table {
        layer.set_toml(key, value).map_err(|e| lines.error(lines.key(site, key), here(key), e))?;
    }
    Ok(layer)
}

/// The site's `CrawlConfig` (without its seeds): its settings resolved, its limit rules
/// first among the host rules; and the settings, for the state's record.
pub(super) fn crawl(
    cx: &Context,
    raw: &RawSite,
    here: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Result<(CrawlConfig, Settings), SpiderConfigError> {
    let lines = cx.lines;
    let own = layer(lines, Some(cx.index), Source::Site, &raw.settings, here)?;
    let site = format!("site \"{}\"", raw.name);
    warnings.extend(own.warnings().iter().map(|w| format!("{site}: {w}")));
    let layers = std::iter::once(cx.file).chain([&own]).chain(cx.opts.flags.as_ref());
    let settings = Settings::resolve(layers).map_err(|e| refused(cx, &e, here))?;
    let mut crawl = settings.crawl_config().map_err(|e| refused(cx, &e, here))?;
    let policy = crawl.politeness.default;
    let site_rates: Vec<RateLimit> =
        crawl.politeness.rules.iter().flat_map(|r| r.rate_limits().to_vec()).collect();
    let mut rules = raw
        .limit
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let at = here(&format!("limit[{i}]"));
            limit_rule(lines, &at, l.span().start, l.get_ref(), policy, &site_rates, warnings)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The site's rule for every host (its rate limits) goes last: the first match wins.
    rules.append(&mut crawl.politeness.rules);
    crawl.politeness.rules = rules;
    Ok((crawl, settings))
}

/// A setting refused when the layers are resolved, placed at the key that set it (the site's,
/// else the file's; a flag's has no line).
fn refused(cx: &Context, e: &SettingError, here: &dyn Fn(&str) -> String) -> SpiderConfigError {
    let name = e.name();
    let at = [Some(cx.index), None]
        .into_iter()
        .map(|site| cx.lines.key(site, name))
        .find(|&at| at > 0)
        .unwrap_or(0);
    cx.lines.error(at, here(name), e)
}

/// A `delay`/`random_delay` of a limit rule, or its old `_ms` spelling.
fn rule_delay(
    name: &str,
    new: Option<&toml::Value>,
    old_ms: Option<u64>,
    warnings: &mut Vec<String>,
    at: &str,
) -> Result<Option<std::time::Duration>, String> {
    let mut layer = Layer::new(Source::Site);
    match (new, old_ms) {
        (Some(_), Some(_)) => return Err(format!("give {name} or {name}_ms, not both")),
        (Some(v), None) => layer.set_toml(name, v).map_err(|e| e.to_string())?,
        (None, Some(ms)) => layer
            .set_toml(&format!("{name}_ms"), &toml::Value::Integer(ms as i64))
            .map_err(|e| e.to_string())?,
        (None, None) => return Ok(None),
    }
    warnings.extend(layer.warnings().iter().map(|w| format!("{at}: {w}")));
    Ok(match layer.get(name) {
        Some(Value::Duration(d)) => Some(*d),
        _ => None,
    })
}

/// Reads `rate_limit` values, with an error at the bad one.
fn rate_limits(
    lines: &Lines,
    at: &str,
    raw: &[Spanned<String>],
) -> Result<Vec<RateLimit>, SpiderConfigError> {
    raw.iter()
        .map(|r| r.get_ref().parse::<RateLimit>().map_err(|e| lines.error(r.span().start, at, e)))
        .collect()
}

/// Builds one limit rule over the site's default `policy` and rate limits.
fn limit_rule(
    lines: &Lines,
    at: &str,
    rule_at: usize,
    raw: &RawLimit,
    policy: HostPolicy,
    site_rates: &[RateLimit],
    warnings: &mut Vec<String>,
) -> Result<HostRule, SpiderConfigError> {
    let delay = |name: &str, new: Option<&toml::Value>, old: Option<u64>, warnings: &mut Vec<String>| {
        rule_delay(name, new, old, warnings, at).map_err(|e| lines.error(rule_at, format!("{at}.{name}"), e))
    };
    let policy = HostPolicy {
        parallelism: raw.per_host.unwrap_or(policy.parallelism),
        delay: delay("delay", raw.delay.as_ref(), raw.delay_ms, warnings)?.unwrap_or(policy.delay),
        random_delay: delay("random_delay", raw.random_delay.as_ref(), raw.random_delay_ms, warnings)?
            .unwrap_or(policy.random_delay),
    };
    if policy.parallelism == 0 {
        return Err(lines.error(rule_at, format!("{at}.per_host"), "must be at least 1"));
    }
    let mut rule = match (&raw.host, &raw.regex) {
        (Some(glob), None) => HostRule::new(glob.get_ref(), policy)
            .map_err(|e| lines.error(glob.span().start, format!("{at}.host"), format!("bad glob: {e}")))?,
        (None, Some(re)) => HostRule::regex(re.get_ref(), policy)
            .map_err(|e| lines.error(re.span().start, format!("{at}.regex"), format!("bad regex: {e}")))?,
        _ => {
            return Err(lines.error(
                rule_at,
                at,
                "a limit rule needs exactly one of `host` (a glob) and `regex`",
            ));
        }
    };
    rule = match &raw.rate_limit {
        Some(own) => rule.with_rate_limits(rate_limits(lines, &format!("{at}.rate_limit"), own)?),
        None => rule.with_rate_limits(site_rates.iter().copied()),
    };
    for (name, value) in &raw.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err()
            || http::HeaderValue::from_str(value).is_err()
        {
            return Err(lines.error(
                rule_at,
                format!("{at}.headers"),
                format!("bad header {name:?}: {value:?}"),
            ));
        }
        rule = rule.with_header(name, value);
    }
    for (i, p) in raw.proxies.iter().enumerate() {
        if let Err(e) = kumo_downloader::check_proxy(p.get_ref()) {
            return Err(lines.error(p.span().start, format!("{at}.proxies[{i}]"), e.to_string()));
        }
        rule = rule.with_proxy(p.get_ref());
    }
    Ok(rule)
}
