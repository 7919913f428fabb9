//! `/metrics`: the crawl's numbers in the Prometheus text format, read from the engine's last
//! published summary and its progress counters on each scrape (nothing is kept here, so many
//! engines in one process never share a registry).

use std::sync::atomic::Ordering;

use kumo_engine::{Live, Progress};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

/// One scrape's numbers.
#[derive(Debug)]
struct Snapshot {
    live: std::sync::Arc<Live>,
    in_flight: u64,
    paused: bool,
}

/// Writes a counter family: one sample per label value (`label`), or one without labels.
fn counter(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    label: &str,
    values: impl IntoIterator<Item = (String, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut m = e.encode_descriptor(name, help, None, ConstCounter::new(0u64).metric_type())?;
    for (value, n) in values {
        let labels = [(label, value)];
        ConstCounter::new(n).encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

fn plain_counter(e: &mut DescriptorEncoder, name: &str, help: &str, n: u64) -> Result<(), std::fmt::Error> {
    let m = e.encode_descriptor(name, help, None, ConstCounter::new(0u64).metric_type())?;
    ConstCounter::new(n).encode(m)
}

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, n: i64) -> Result<(), std::fmt::Error> {
    let m = e.encode_descriptor(name, help, None, ConstGauge::new(0i64).metric_type())?;
    ConstGauge::new(n).encode(m)
}

fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

impl Collector for Snapshot {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = &self.live.summary;
        plain_counter(
            &mut e,
            "kumo_pages",
            "Pages fetched and handled (robots.txt and retried answers aside)",
            s.pages,
        )?;
        plain_counter(&mut e, "kumo_body_bytes", "Body bytes received, after decoding", s.bytes)?;
        plain_counter(&mut e, "kumo_items", "Items extracted", s.items)?;
        plain_counter(&mut e, "kumo_retries", "Fetches tried again", s.retries)?;
        plain_counter(&mut e, "kumo_failed", "Requests given up after their retries", s.failed)?;
        counter(
            &mut e,
            "kumo_responses",
            "Answers by HTTP status",
            "status",
            s.by_status.iter().map(|(k, n)| (k.to_string(), *n)),
        )?;
        counter(
            &mut e,
            "kumo_responses_by_class",
            "Answers by HTTP status class",
            "class",
            ["1xx", "2xx", "3xx", "4xx", "5xx"].iter().enumerate().map(|(i, c)| {
                let lo = 100 * (i as u16 + 1);
                (c.to_string(), s.by_status.range(lo..lo + 100).map(|(_, n)| n).sum())
            }),
        )?;
        counter(
            &mut e,
            "kumo_errors",
            "Errors by stage and kind (stage:kind)",
            "error",
            s.errors.iter().map(|(k, n)| (k.clone(), *n)),
        )?;
        counter(
            &mut e,
            "kumo_skipped",
            "Links not followed, by reason",
            "reason",
            s.skipped.iter().map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        let c = &s.changes;
        counter(
            &mut e,
            "kumo_recrawl_pages",
            "Pages of a re-crawl by what they were found to be",
            "change",
            [("new", c.new), ("changed", c.changed), ("unchanged", c.unchanged), ("gone", c.gone)]
                .into_iter()
                .map(|(k, n)| (k.to_string(), n)),
        )?;
        let modules = s.modules.downloaders.iter().chain(&s.modules.analyzers).chain(&s.modules.pipelines);
        let mut m = e.encode_descriptor(
            "kumo_module_calls",
            "Calls of the status machine's modules (D: downloaders, A: analyzers, P: pipelines), by step",
            None,
            ConstCounter::new(0u64).metric_type(),
        )?;
        for module in modules.clone() {
            let id = module.id.to_string();
            for (step, n) in [
                ("called", module.counts.called),
                ("accepted", module.counts.accepted),
                ("completed", module.counts.completed),
            ] {
                let labels = [("module", id.clone()), ("step", step.to_string())];
                ConstCounter::new(n).encode(m.encode_family(&labels)?)?;
            }
        }
        let mut m = e.encode_descriptor(
            "kumo_module_handling",
            "Calls each module is handling now",
            None,
            ConstGauge::new(0i64).metric_type(),
        )?;
        for module in modules {
            let labels = [("module", module.id.to_string())];
            ConstGauge::new(int(module.counts.handling)).encode(m.encode_family(&labels)?)?;
        }
        gauge(&mut e, "kumo_queued", "Requests waiting in the frontier", int(s.frontier.queued))?;
        gauge(&mut e, "kumo_leased", "Requests handed out and not yet completed", int(s.frontier.leased))?;
        gauge(
            &mut e,
            "kumo_in_flight",
            "Requests this process is fetching or handling",
            int(self.in_flight),
        )?;
        gauge(&mut e, "kumo_hosts", "Hosts the frontier knows", int(s.frontier.hosts))?;
        gauge(&mut e, "kumo_paused", "1 while the crawl is paused", i64::from(self.paused))?;
        let m = e.encode_descriptor(
            "kumo_elapsed_seconds",
            "Seconds since this run started",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        ConstGauge::new(s.elapsed_secs).encode(m)?;
        Ok(())
    }
}

/// The metrics of one engine, in the Prometheus text format.
pub fn render(live: std::sync::Arc<Live>, progress: &Progress, paused: bool) -> String {
    let mut registry = Registry::default();
    let in_flight = progress.in_flight.load(Ordering::Relaxed);
    registry.register_collector(Box::new(Snapshot { live, in_flight, paused }));
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
    out
}
