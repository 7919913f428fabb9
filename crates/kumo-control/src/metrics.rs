//! `/metrics`: the crawl's numbers in the Prometheus text format, read from each engine's last
//! publication and its progress counters on each scrape (nothing is kept here, so many engines
//! in one process never share a registry). Every sample carries its `site` label.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use kumo_engine::{Histogram, Live, Progress, Summary};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// One engine's numbers for one scrape.
#[derive(Debug)]
pub struct SiteSnapshot {
    site: String,
    live: Arc<Live>,
    in_flight: u64,
    paused: bool,
}

impl SiteSnapshot {
    /// Site `site`'s numbers: the engine's last publication `live`, its requests in flight
    /// as `progress` has them now, and whether it is `paused`.
    pub fn new(site: String, live: Arc<Live>, progress: &Progress, paused: bool) -> Self {
        SiteSnapshot { site, live, in_flight: progress.in_flight.load(Ordering::Relaxed), paused }
    }
}

/// A family's samples for one site: extra labels (name, value) and the number.
type Samples = Vec<(Vec<(&'static str, String)>, f64)>;

/// One metric family: its name, help, type and how to read its samples off a site.
struct Family {
    name: &'static str,
    help: &'static str,
    counter: bool,
    read: fn(&SiteSnapshot) -> Samples,
}

fn plain(n: u64) -> Samples {
    vec![(Vec::new(), n as f64)]
}

fn by(label: &'static str, values: impl IntoIterator<Item = (String, u64)>) -> Samples {
    values.into_iter().map(|(v, n)| (vec![(label, v)], n as f64)).collect()
}

/// One of a shared crawl's totals; no sample when the crawl is this process's own.
fn crawl(s: &SiteSnapshot, pick: fn(&kumo_engine::CrawlTotals) -> u64) -> Samples {
    s.live.crawl.as_ref().map(|t| plain(pick(t))).unwrap_or_default()
}

fn summary(s: &SiteSnapshot) -> &Summary {
    &s.live.summary
}

/// One figure of each of a site's buffers, labelled by buffer.
fn buffers(s: &SiteSnapshot, pick: fn(&kumo_engine::BufferStats) -> u64) -> Samples {
    by("buffer", summary(s).buffers.iter().map(|b| (b.name.clone(), pick(b))))
}

/// One of kumo's own resolver's figures; no sample when the crawl uses the system's.
fn dns(s: &SiteSnapshot, pick: fn(&kumo_engine::DnsSnapshot) -> u64) -> Samples {
    summary(s).dns.as_ref().map(|d| plain(pick(d))).unwrap_or_default()
}

fn modules(s: &SiteSnapshot) -> impl Iterator<Item = &kumo_core::ModuleSummary> {
    let m = &summary(s).modules;
    m.downloaders.iter().chain(&m.analyzers).chain(&m.pipelines)
}

const FAMILIES: &[Family] = &[
    Family {
        name: "kumo_pages",
        help: "Answers handled: pages, and 429 and 5xx answers that are retried (robots.txt aside)",
        counter: true,
        read: |s| plain(summary(s).pages),
    },
    Family {
        name: "kumo_body_bytes",
        help: "Body bytes received, after decoding",
        counter: true,
        read: |s| plain(summary(s).bytes),
    },
    Family { name: "kumo_items", help: "Items extracted", counter: true, read: |s| plain(summary(s).items) },
    Family {
        name: "kumo_retries",
        help: "Fetches tried again",
        counter: true,
        read: |s| plain(summary(s).retries),
    },
    Family {
        name: "kumo_failed",
        help: "Requests given up after their retries",
        counter: true,
        read: |s| plain(summary(s).failed),
    },
    Family {
        name: "kumo_responses",
        help: "Answers by HTTP status",
        counter: true,
        read: |s| by("status", summary(s).by_status.iter().map(|(k, n)| (k.to_string(), *n))),
    },
    Family {
        name: "kumo_responses_by_class",
        help: "Answers by HTTP status class",
        counter: true,
        read: |s| {
            let st = &summary(s).by_status;
            by(
                "class",
                (1..=5u16)
                    .map(|c| (format!("{c}xx"), st.range(c * 100..(c + 1) * 100).map(|(_, n)| n).sum())),
            )
        },
    },
    Family {
        name: "kumo_errors",
        help: "Errors by stage and kind (stage:kind)",
        counter: true,
        read: |s| by("error", summary(s).errors.iter().map(|(k, n)| (k.clone(), *n))),
    },
    Family {
        name: "kumo_skipped",
        help: "Links not followed, by reason",
        counter: true,
        read: |s| by("reason", summary(s).skipped.iter().map(|(k, n)| (k.as_str().to_string(), *n))),
    },
    Family {
        name: "kumo_recrawl_pages",
        help: "Pages of a re-crawl by what they were found to be",
        counter: true,
        read: |s| {
            let c = &summary(s).changes;
            by(
                "change",
                [("new", c.new), ("changed", c.changed), ("unchanged", c.unchanged), ("gone", c.gone)]
                    .map(|(k, n)| (k.to_string(), n)),
            )
        },
    },
    Family {
        name: "kumo_module_calls",
        help: "Calls of the status machine's modules (D: downloaders, A: analyzers, P: pipelines), by step",
        counter: true,
        read: |s| {
            modules(s)
                .flat_map(|m| {
                    let id = m.id.to_string();
                    [
                        ("called", m.counts.called),
                        ("accepted", m.counts.accepted),
                        ("completed", m.counts.completed),
                    ]
                    .map(|(step, n)| (vec![("module", id.clone()), ("step", step.to_string())], n as f64))
                })
                .collect()
        },
    },
    Family {
        name: "kumo_module_handling",
        help: "Calls each module is handling now",
        counter: false,
        read: |s| {
            modules(s).map(|m| (vec![("module", m.id.to_string())], m.counts.handling as f64)).collect()
        },
    },
    Family {
        name: "kumo_queued",
        help: "Requests waiting in the frontier",
        counter: false,
        read: |s| plain(summary(s).frontier.queued as u64),
    },
    Family {
        name: "kumo_leased",
        help: "Requests handed out and not yet completed",
        counter: false,
        read: |s| plain(summary(s).frontier.leased as u64),
    },
    Family {
        name: "kumo_in_flight",
        help: "Requests this process is fetching or handling",
        counter: false,
        read: |s| plain(s.in_flight),
    },
    Family {
        name: "kumo_hosts",
        help: "Hosts the frontier knows",
        counter: false,
        read: |s| plain(summary(s).frontier.hosts as u64),
    },
    Family {
        name: "kumo_hosts_with_work",
        help: "Hosts with requests queued or out (counted every 2 s while watched; 0 until then)",
        counter: false,
        read: |s| plain(summary(s).hosts.map_or(0, |h| h.with_work as u64)),
    },
    Family {
        name: "kumo_hosts_crawled",
        help: "Hosts this run completed a request of",
        counter: false,
        read: |s| plain(summary(s).hosts.map_or(0, |h| h.crawled as u64)),
    },
    Family {
        name: "kumo_hosts_failed",
        help: "Hosts whose requests this run all failed",
        counter: false,
        read: |s| plain(summary(s).hosts.map_or(0, |h| h.failed as u64)),
    },
    Family {
        name: "kumo_addresses",
        help: "IP addresses the hosts are on (per-IP politeness)",
        counter: false,
        read: |s| plain(summary(s).hosts.map_or(0, |h| h.addresses as u64)),
    },
    Family {
        name: "kumo_paused",
        help: "1 while the crawl is paused",
        counter: false,
        read: |s| plain(u64::from(s.paused)),
    },
    Family {
        name: "kumo_politeness_wait_seconds",
        help: "Seconds this run had free slots and queued work but every host with work had to wait \
               (its delay, a pause, its rate limits, a retry's back-off)",
        counter: true,
        read: |s| vec![(Vec::new(), summary(s).politeness_wait_secs)],
    },
    Family {
        name: "kumo_crawl_workers",
        help: "Workers that have committed to the shared crawl (--redis), those that left included",
        counter: false,
        read: |s| crawl(s, |t| t.workers as u64),
    },
    Family {
        name: "kumo_crawl_pages",
        help: "Pages of the whole shared crawl (--redis): every worker's",
        counter: true,
        read: |s| crawl(s, |t| t.pages),
    },
    Family {
        name: "kumo_crawl_body_bytes",
        help: "Body bytes of the whole shared crawl (--redis)",
        counter: true,
        read: |s| crawl(s, |t| t.bytes),
    },
    Family {
        name: "kumo_crawl_items",
        help: "Items of the whole shared crawl (--redis)",
        counter: true,
        read: |s| crawl(s, |t| t.items),
    },
    Family {
        name: "kumo_crawl_retries",
        help: "Fetches tried again in the whole shared crawl (--redis)",
        counter: true,
        read: |s| crawl(s, |t| t.retries),
    },
    Family {
        name: "kumo_crawl_failed",
        help: "Requests given up in the whole shared crawl (--redis)",
        counter: true,
        read: |s| crawl(s, |t| t.failed),
    },
    Family {
        name: "kumo_crawl_errors",
        help: "Errors counted in the whole shared crawl (--redis), any stage",
        counter: true,
        read: |s| crawl(s, |t| t.errors),
    },
    Family {
        name: "kumo_buffer_capacity",
        help: "The most each buffer between the stages holds",
        counter: false,
        read: |s| buffers(s, |b| b.capacity),
    },
    Family {
        name: "kumo_buffer_length",
        help: "What each buffer between the stages holds now",
        counter: false,
        read: |s| buffers(s, |b| b.len),
    },
    Family {
        name: "kumo_buffer_peak",
        help: "The most each buffer between the stages has held, this run",
        counter: false,
        read: |s| buffers(s, |b| b.peak),
    },
    Family {
        name: "kumo_buffer_messages",
        help: "Messages put into each buffer between the stages, this run",
        counter: true,
        read: |s| buffers(s, |b| b.total),
    },
    Family {
        name: "kumo_dns_lookups",
        help: "Host names looked up by kumo's own resolver (--dns-server, --resolve)",
        counter: true,
        read: |s| dns(s, |d| d.lookups),
    },
    Family {
        name: "kumo_dns_cache_hits",
        help: "Lookups answered from the resolver's cache",
        counter: true,
        read: |s| dns(s, |d| d.cache_hits),
    },
    Family {
        name: "kumo_dns_queries",
        help: "Questions put to the name servers",
        counter: true,
        read: |s| dns(s, |d| d.queries),
    },
    Family {
        name: "kumo_dns_failures",
        help: "Lookups that found no address, by kind",
        counter: true,
        read: |s| {
            let f = summary(s).dns.as_ref().map(|d| d.failures).unwrap_or_default();
            if summary(s).dns.is_none() {
                return Vec::new();
            }
            by(
                "kind",
                [
                    ("no-such-name", f.no_such_name),
                    ("no-address", f.no_address),
                    ("timeout", f.timeout),
                    ("server-failure", f.server_failure),
                    ("other", f.other),
                ]
                .map(|(k, n)| (k.to_string(), n)),
            )
        },
    },
    Family {
        name: "kumo_elapsed_seconds",
        help: "Seconds since this run started",
        counter: false,
        read: |s| vec![(Vec::new(), summary(s).elapsed_secs)],
    },
];

/// The latency histograms: name, help, and which of a site's.
type HistogramFamily = (&'static str, &'static str, fn(&SiteSnapshot) -> &Histogram);

const HISTOGRAMS: &[HistogramFamily] = &[
    ("kumo_fetch_latency_seconds", "How long answers took to their headers, this run", |s| {
        &summary(s).fetch_latency
    }),
    ("kumo_commit_latency_seconds", "How long each commit to the frontier took, this run", |s| {
        &summary(s).commit_latency
    }),
];

#[derive(Debug)]
struct Scrape(Vec<SiteSnapshot>);

impl Collector for Scrape {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in FAMILIES {
            let kind = if f.counter { MetricType::Counter } else { MetricType::Gauge };
            let mut m = e.encode_descriptor(f.name, f.help, None, kind)?;
            for site in &self.0 {
                for (extra, v) in (f.read)(site) {
                    let mut labels = vec![("site", site.site.clone())];
                    labels.extend(extra);
                    let sample = m.encode_family(&labels)?;
                    // Whole numbers as integers (`155`, not `155.0`).
                    let whole = v.fract() == 0.0 && (0.0..9.0e15).contains(&v);
                    match (f.counter, whole) {
                        (true, true) => ConstCounter::new(v as u64).encode(sample)?,
                        (true, false) => ConstCounter::new(v).encode(sample)?,
                        (false, true) => ConstGauge::new(v as i64).encode(sample)?,
                        (false, false) => ConstGauge::new(v).encode(sample)?,
                    }
                }
            }
        }
        for (name, help, pick) in HISTOGRAMS {
            let mut m = e.encode_descriptor(name, help, None, MetricType::Histogram)?;
            for site in &self.0 {
                let h = pick(site);
                let labels = [("site", site.site.clone())];
                m.encode_family(&labels)?.encode_histogram::<NoLabelSet>(
                    h.sum_secs,
                    h.count,
                    &h.buckets(),
                    None,
                )?;
            }
        }
        Ok(())
    }
}

/// The metrics of the engines of `sites`, in the Prometheus text format.
pub fn render(sites: Vec<SiteSnapshot>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape(sites)));
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
    out
}
