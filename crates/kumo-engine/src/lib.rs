//! kumo's engine (the seeds' scheduler): it wires frontier → downloader → analyzers →
//! pipeline with bounded channels, runs the status machine, ends the crawl exactly when the
//! frontier is empty and nothing is in flight, and reports errors and a summary.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use kumo_engine::{CrawlConfig, Engine};
//! use kumo_frontier::{MemoryFrontier, MemoryFrontierConfig};
//! use kumo_pipeline::JsonLinesSink;
//!
//! let cfg = CrawlConfig { seeds: vec!["http://127.0.0.1:8080/".parse()?], ..Default::default() };
//! let mut engine = Engine::new();
//! engine.init(cfg, Arc::new(MemoryFrontier::new(MemoryFrontierConfig::default())), vec![Box::new(JsonLinesSink::stdout())])?;
//! engine.start().await?;
//! let summary = engine.wait().await?;
//! println!("{summary}");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod analyze;
mod analyzer_registrar;
mod archive;
mod buffers;
mod commit;
mod config;
mod departures;
mod engine;
mod errors;
mod group;
mod histogram;
mod limits;
pub mod listener;
mod live;
mod pauses;
pub mod registrar;
mod render;
mod results;
mod revisit;
mod robots;
mod run;
mod scheduler;
mod stages;
mod status;
mod steer;
mod summary;
mod throttle;
mod traps;
mod writer;

pub use analyze::{Analysis, Analyzer, PageAnalyzer, ScriptFailure};
pub use buffers::BufferStats;
pub use config::{ConfigError, CrawlConfig};
pub use engine::{Engine, EngineError, Pauser, StopMode, Stopper};
pub use errors::{CrawlError, ErrorStream};
pub use histogram::{Histogram, LATENCY_BOUNDS};
/// kumo's own resolver's figures, as the summary carries them.
pub use kumo_downloader::DnsSnapshot;
pub use listener::{Listener, Listeners};
pub use live::{CrawlTotals, LIVE_FAILURES, LIVE_HOSTS, Live, LiveHost};
pub use registrar::{DownloaderLoad, ModuleLoad, Registrar, RegistrarError, ScoreFn, default_score};
pub use render::Rendering;
pub use revisit::{Adaptive, RevisitPolicy, RevisitRule, Visit};
pub use robots::{RobotsConfig, RobotsStats};
pub use status::{Status, StatusCell, TransitionError, check_transition};
pub use steer::{Steer, SteerError};
pub use summary::{Changes, Modules, Progress, StopCause, Summary, peak_memory};
pub use throttle::AutoThrottle;
