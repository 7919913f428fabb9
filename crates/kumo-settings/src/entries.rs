//! Every crawl setting, once: the spider-file key, the flag, the kind, the default, the doc
//! line, the resume rule and the old spellings. Adding a setting is adding an entry here and
//! reading it in `resolve.rs`.

use std::time::Duration;

use crate::Kind;
use crate::table::{Group, Old, OldUnit, Resume, Setting};

const fn s(
    name: &'static str,
    kind: Kind,
    default: &'static str,
    value_name: &'static str,
    group: Group,
    resume: Resume,
    doc: &'static str,
) -> Setting {
    Setting {
        name,
        doc,
        kind,
        default,
        value_name,
        short: None,
        group,
        resume,
        old: &[],
        conflicts: &[],
        requires: None,
        check: None,
    }
}

/// A DNS server's address: an IP with or without a port.
fn check_dns_server(text: &str) -> Result<(), String> {
    crate::resolve::dns_server(text).map(|_| ())
}

/// `HOST=ADDR`, as curl's `--resolve` (without its port).
fn check_resolve(text: &str) -> Result<(), String> {
    crate::resolve::override_of(text).map(|_| ())
}

/// A proxy of a scheme the client really sends through; anything else would be a direct
/// connection in disguise.
fn check_proxy(text: &str) -> Result<(), String> {
    kumo_downloader::check_proxy(text).map(|_| ()).map_err(|e| e.to_string())
}

const COUNT: Kind = Kind::Count { min: 0, max: u64::MAX };
const AT_LEAST_ONE: Kind = Kind::Count { min: 1, max: u64::MAX };
const DURATION: Kind = Kind::Duration { positive: false, max: Duration::MAX };
const POSITIVE: Kind = Kind::Duration { positive: true, max: Duration::MAX };
/// A delay between two requests to a host: at most an hour.
const DELAY: Kind = Kind::Duration { positive: false, max: MAX_DELAY };

/// The longest `delay` and `random_delay`: past an hour between two requests to a host, the
/// value only hides a typo.
pub const MAX_DELAY: Duration = Duration::from_secs(3600);
/// The most requests in flight `concurrency` takes. Memory follows the requests really in
/// flight, not this number, but past a million the limit only hides a typo.
pub const MAX_CONCURRENCY: u64 = 1_000_000;

use Group::*;
use Resume::*;

/// The table.
pub static SETTINGS: &[Setting] = &[
    // What is crawled.
    s(
        "max_depth",
        COUNT,
        "0",
        "N",
        Scope,
        Free,
        "Deepest link depth to follow (start URLs are depth 0); 0: unlimited.",
    ),
    s(
        "max_path_segments",
        COUNT,
        "0",
        "N",
        Scope,
        Free,
        "Skip URLs whose path has more than N segments, as a spider trap; 0: the default, 32.",
    ),
    s(
        "max_segment_repeats",
        COUNT,
        "0",
        "N",
        Scope,
        Free,
        "Skip URLs whose path repeats a run of one to three segments more than N times in a row (/a/a/a), as a spider trap; 0: the default, 2.",
    ),
    Setting {
        old: &[Old { key: Some("allowed_domains"), flag: None, unit: OldUnit::Same }],
        ..s(
            "allow_domain",
            Kind::List,
            "",
            "DOMAIN",
            Scope,
            Fixed,
            "Also accept this domain and its subdomains (the start URLs' domains always are).",
        )
    },
    s("any_domain", Kind::Switch, "false", "", Scope, Fixed, "Accept links to any domain."),
    s(
        "broad",
        Kind::Switch,
        "false",
        "",
        Scope,
        Fixed,
        "A broad crawl of many hosts: any domain, and broad-crawl defaults (256 at once, 1 per host 1s apart, 1 per IP address 100ms after its answer, a Crawl-delay up to 10s, 15s timeout, 1 retry, no cookies, no idle connections kept, 10000 pages per domain), each of which a setting given overrides.",
    ),
    s(
        "allow",
        Kind::List,
        "",
        "PATTERN",
        Scope,
        Fixed,
        "Only follow URLs matching one of these: a glob over the whole URL (`*/docs/*`; `*` matches `/` too), or re:REGEX.",
    ),
    s(
        "deny",
        Kind::List,
        "",
        "PATTERN",
        Scope,
        Fixed,
        "Never follow URLs matching one of these: a glob over the whole URL (`*logout*`), or re:REGEX.",
    ),
    s(
        "sitemap",
        Kind::List,
        "",
        "URL",
        Scope,
        Fixed,
        "Seed the crawl with the pages of this sitemap or sitemap index (plain or gzipped).",
    ),
    s(
        "robots_sitemaps",
        Kind::Switch,
        "false",
        "",
        Scope,
        Free,
        "Also follow the Sitemap: lines of the robots.txt files fetched.",
    ),
    // How URLs are told apart.
    s(
        "strip_param",
        Kind::List,
        "",
        "NAME",
        Dedup,
        Fixed,
        "Drop this query parameter when de-duplicating URLs.",
    ),
    s(
        "sort_query",
        Kind::Switch,
        "false",
        "",
        Dedup,
        Fixed,
        "Sort query parameters when de-duplicating URLs.",
    ),
    s(
        "keep_session_ids",
        Kind::Switch,
        "false",
        "",
        Dedup,
        Fixed,
        "Keep session ids (jsessionid, PHPSESSID, sid…) when de-duplicating URLs; by default they are dropped.",
    ),
    s(
        "non_strict",
        Kind::Switch,
        "false",
        "",
        Dedup,
        Fixed,
        "De-duplicate by URL and source page (Spiderman's non-strict mode).",
    ),
    // How hard hosts are pressed.
    Setting {
        short: Some('c'),
        ..s(
            "concurrency",
            Kind::Count { min: 1, max: MAX_CONCURRENCY },
            "32",
            "N",
            Politeness,
            Free,
            "Requests in flight at once, all hosts together.",
        )
    },
    // 0 is refused by the engine's check ("per-host parallelism must be at least 1").
    s("per_host", COUNT, "8", "N", Politeness, Free, "Requests in flight at once to one host."),
    Setting {
        old: &[Old { key: Some("delay_ms"), flag: Some("delay-ms"), unit: OldUnit::Millis }],
        ..s(
            "delay",
            DELAY,
            "0s",
            "DURATION",
            Politeness,
            Free,
            "Least time between two requests to one host.",
        )
    },
    Setting {
        old: &[Old { key: Some("random_delay_ms"), flag: Some("random-delay-ms"), unit: OldUnit::Millis }],
        ..s(
            "random_delay",
            DELAY,
            "0s",
            "DURATION",
            Politeness,
            Free,
            "A random extra of up to this on each delay.",
        )
    },
    s(
        "per_ip",
        COUNT,
        "0",
        "N",
        Politeness,
        Free,
        "Requests in flight at once to one IP address, whichever of its names is asked (0: no bound); with it or ip_delay, each host is looked up before its first request.",
    ),
    s(
        "ip_delay",
        DELAY,
        "0s",
        "DURATION",
        Politeness,
        Free,
        "Least time between two requests to one IP address, whichever of its names is asked; counted from the last answer too, so with per_ip 1 it holds at the server.",
    ),
    s(
        "rate_limit",
        Kind::List,
        "",
        "MAX/PERIOD",
        Politeness,
        Free,
        "At most MAX requests per PERIOD to each host (10/s, 100/min, 1000/h); every window given holds.",
    ),
    s(
        "auto_throttle",
        Kind::Switch,
        "false",
        "",
        Politeness,
        Free,
        "Adapt each host's delay to how fast it answers (Scrapy's AutoThrottle), never below the delay.",
    ),
    Setting {
        requires: Some("auto_throttle"),
        ..s(
            "auto_throttle_target",
            Kind::Number { min: 0.0, max: f64::INFINITY },
            "1",
            "N",
            Politeness,
            Free,
            "With auto_throttle: requests to aim for in flight at each host.",
        )
    },
    Setting {
        requires: Some("auto_throttle"),
        ..s(
            "auto_throttle_start_delay",
            DURATION,
            "5s",
            "DURATION",
            Politeness,
            Free,
            "With auto_throttle: a host's delay before its first answer.",
        )
    },
    Setting {
        requires: Some("auto_throttle"),
        ..s(
            "auto_throttle_max_delay",
            DURATION,
            "1m",
            "DURATION",
            Politeness,
            Free,
            "With auto_throttle: the longest delay it sets.",
        )
    },
    // When the crawl stops.
    s(
        "max_pages",
        COUNT,
        "0",
        "N",
        Limits,
        Free,
        "Stop after this many pages (robots.txt, retried answers and failures do not count); 0: no limit.",
    ),
    s(
        "max_pages_per_host",
        COUNT,
        "0",
        "N",
        Limits,
        Free,
        "Queue at most N pages of one host over the whole crawl; links past it are skipped as budget (0: no budget).",
    ),
    s(
        "max_pages_per_domain",
        COUNT,
        "0",
        "N",
        Limits,
        Free,
        "Queue at most N pages of one registrable domain, all its hosts together; links past it are skipped as budget (0: no budget).",
    ),
    s(
        "max_items",
        COUNT,
        "0",
        "N",
        Limits,
        Free,
        "Stop gracefully once this many items are written (what is in flight still finishes); 0: no limit.",
    ),
    s(
        "max_errors",
        COUNT,
        "0",
        "N",
        Limits,
        Free,
        "Stop gracefully once this many errors were counted (retried ones too), with exit status 4; 0: no limit.",
    ),
    s("max_duration", POSITIVE, "", "DURATION", Limits, Free, "Stop gracefully after this long."),
    // How pages are fetched.
    s("user_agent", Kind::List, "", "UA", Fetching, Free, "The User-Agent header; several rotate."),
    s(
        "no_cookies",
        Kind::Switch,
        "false",
        "",
        Fetching,
        Free,
        "Keep no cookies: store none a site sets and send none (each crawl keeps its own by default).",
    ),
    Setting {
        conflicts: &["user_agent"],
        ..s(
            "random_user_agent",
            Kind::Switch,
            "false",
            "",
            Fetching,
            Free,
            "A random browser User-Agent for each request.",
        )
    },
    Setting {
        check: Some(check_proxy),
        ..s(
            "proxy",
            Kind::List,
            "",
            "URL",
            Fetching,
            Free,
            "Send requests through this proxy (http, https, socks5, socks5h); with several, each request goes to the least loaded, least failing.",
        )
    },
    s(
        "timeout",
        POSITIVE,
        "30s",
        "DURATION",
        Fetching,
        Free,
        "Time allowed for one whole request, its body included.",
    ),
    s(
        "keep_alive",
        DURATION,
        "90s",
        "DURATION",
        Fetching,
        Free,
        "How long an idle connection is kept open for its host's next request; 0s: each closes after its answer (a broad crawl's default: connections kept idle to many hosts use up the open files).",
    ),
    s(
        "max_connections",
        COUNT,
        "0",
        "N",
        Fetching,
        Free,
        "Most connections in use at once, all hosts together (idle kept-alive ones come on top); 0: half the open files left beside the DNS resolver's sockets.",
    ),
    Setting {
        check: Some(check_dns_server),
        ..s(
            "dns_server",
            Kind::List,
            "",
            "ADDR[:PORT]",
            Fetching,
            Free,
            "Ask only this DNS server (repeatable; port 53 if none), through kumo's own caching resolver, never a fallback.",
        )
    },
    Setting {
        check: Some(check_resolve),
        ..s(
            "resolve",
            Kind::List,
            "",
            "HOST=ADDR",
            Fetching,
            Free,
            "Answer HOST with ADDR without asking DNS (curl's --resolve; repeatable), through kumo's own resolver.",
        )
    },
    s(
        "min_body_rate",
        COUNT,
        "1024",
        "BYTES",
        Fetching,
        Free,
        "A body slower than this many bytes a second over min_body_window is cut as a timeout; 0: no minimum.",
    ),
    s(
        "min_body_window",
        POSITIVE,
        "10s",
        "DURATION",
        Fetching,
        Free,
        "The window over which min_body_rate is measured, window after window.",
    ),
    s(
        "max_body",
        AT_LEAST_ONE,
        "10485760",
        "BYTES",
        Fetching,
        Free,
        "Largest body kept, in bytes after decompression.",
    ),
    // robots.txt, retries and pauses.
    Setting {
        old: &[Old { key: Some("obey_robots"), flag: None, unit: OldUnit::Inverted }],
        ..s("ignore_robots", Kind::Switch, "false", "", Robots, Fixed, "Do not fetch or obey robots.txt.")
    },
    s(
        "max_crawl_delay",
        DURATION,
        "10s",
        "DURATION",
        Robots,
        Free,
        "The longest robots.txt Crawl-delay honoured; a longer one is cut to this.",
    ),
    s(
        "retries",
        COUNT,
        "2",
        "N",
        Robots,
        Free,
        "Retries of a failed fetch (connect errors, timeouts, broken bodies, 429 and 5xx).",
    ),
    Setting {
        old: &[Old { key: Some("max_host_pause_secs"), flag: None, unit: OldUnit::Same }],
        ..s(
            "max_host_pause",
            DURATION,
            "5m",
            "DURATION",
            Robots,
            Free,
            "The longest a server may pause a whole host (a 429, 503s with Retry-After, a robots.txt answering 5xx).",
        )
    },
    Setting {
        old: &[Old { key: Some("max_retry_after_secs"), flag: None, unit: OldUnit::Same }],
        ..s(
            "max_retry_after",
            DURATION,
            "2m",
            "DURATION",
            Robots,
            Free,
            "The longest Retry-After believed: a request told to wait longer retries on its back-off.",
        )
    },
];

/// `kumo crawl` options that are not crawl settings, and why a spider file has no key for
/// them (the flag's long name, the reason).
pub static COMMAND_ONLY: &[(&str, &str)] = &[
    ("output", "a spider file names its outputs in `output`"),
    ("overwrite-output", "a spider file says `output.overwrite`"),
    ("pg-table", "a spider file names its table in `output.postgres`"),
    ("warc", "a spider file names the folder in `output.warc`"),
    ("warc-max-size", "how this machine keeps its archive, for every site"),
    ("warc-cdxj", "how this machine keeps its archive, for every site"),
    ("warc-gzip-level", "how this machine keeps its archive, for every site"),
    ("ca-file", "where this machine finds trust, for every site"),
    ("insecure", "where this machine finds trust, for every site"),
    ("http-cache", "a development cache of this command, shared by every site"),
    ("http-cache-policy", "a development cache of this command, shared by every site"),
    ("recrawl", "a spider file re-crawls under `kumo run`; `[site.revisit]` says when"),
    ("revisit-every", "a spider file writes `[site.revisit]`"),
    ("revisit", "a spider file writes `[site.revisit]`"),
    ("revisit-adaptive", "a spider file writes `[site.revisit]`"),
    ("emit", "a spider file writes `[site.revisit]`"),
    ("render", "a spider file writes `render`"),
    ("render-only", "a spider file writes `render`"),
    ("browser", "a spider file writes `render`"),
    ("browser-tabs", "a spider file writes `render`"),
    ("render-wait", "a spider file writes `render`"),
    ("render-timeout", "a spider file writes `render`"),
    ("render-block", "a spider file writes `render`"),
    ("render-block-url", "a spider file writes `render`"),
    ("screenshots", "a spider file writes `render`"),
    ("script-max-call", "the operator's ceiling on every site's script"),
    ("script-max-memory", "the operator's ceiling on every site's script"),
    ("seed-base", "a spider file has `base`"),
    ("seeds-file", "a spider file lists its `seeds`"),
    ("failure-threshold", "when this command exits with status 4"),
    ("summary-json", "what this command reports"),
    ("no-progress", "what this command shows"),
    ("listen", "this command's control server"),
    ("listen-token", "this command's control server"),
    ("state", "where this command keeps the state"),
    ("memory", "where this command keeps the state"),
    ("fresh", "where this command keeps the state"),
    ("fsync", "where this command keeps the state"),
    ("redis", "where this command keeps the state"),
    ("crawl", "where this command keeps the state"),
    ("worker", "where this command keeps the state"),
    ("dead-after", "where this command keeps the state"),
    ("redis-wait", "where this command keeps the state"),
];
