//! kumo's spiders: what turns pages into data, on the engine's [`Analyzer`] plug-in point.
//!
//! - [`config`]: configured spiders — a TOML file of sites with rules and extraction models
//!   ([`SpiderFile`]), each site run on its own engine (in memory: [`run_site`]).
//! - [`Spider`]: a trait for spiders written in Rust (start requests; parse a response into
//!   requests and items), run through [`SpiderAnalyzer`].
//! - [`schedule`]: when `kumo run` runs a site again (`[site.schedule]`: every, cron, start,
//!   times), from the record of its runs so far.
//! - [`Collector`]: a Colly-style builder of callbacks (`on_html` by CSS selector, `on_xpath`
//!   on HTML and XML, `on_response`, `on_error`, `on_scraped`) with request-scoped typed
//!   context.
//!
//! Features, both on by default: `script` (a site's JavaScript hooks, on kumo-script) and
//! `postgres` (`output.postgres`). A spider file that asks for one this build lacks is refused.
//!
//! [`Analyzer`]: kumo_engine::Analyzer

#![warn(missing_docs)]

pub mod collector;
pub mod config;
mod configured;
mod explain;
mod rules;
mod run;
pub mod schedule;
#[cfg(feature = "script")]
mod scripted;
mod spider;

pub use collector::{Collector, Ctx, Element, XPathError, XPathNode};
#[cfg(feature = "postgres")]
pub use config::PostgresOutput;
pub use config::{
    LoadError, LoadOptions, OutputSpec, RenderSpec, SiteSpec, SpiderConfigError, SpiderFile,
    spider_file_schema,
};
pub use configured::{ConfigSpider, Priorities, SiteModel};
pub use explain::{InvalidReport, LinkReport, ModelReport, PageReport, RuleMatches, ScriptReport};
/// For the command line: the operator's ceilings on scripts, and stopping them all now.
#[cfg(feature = "script")]
pub use kumo_script::{Ceiling as ScriptCeiling, interrupt_all as interrupt_scripts};
pub use rules::UrlRules;
pub use run::{SiteState, StopSignal, open_sinks, run_site};
pub use spider::{Spider, SpiderAnalyzer, crawl, crawl_spider};
