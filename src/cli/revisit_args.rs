//! `--revisit-every`, `--revisit`, `--revisit-adaptive` and `--emit` of `kumo crawl URL…
//! --recrawl`: a spider file's `[site.revisit]` on the command line.

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use kumo_engine::{Adaptive, RevisitPolicy, RevisitRule};

/// `kumo crawl URL…`'s re-visit flags.
#[derive(clap::Args, Debug, Clone)]
pub struct RevisitArgs {
    /// With --recrawl: how long a page rests before a later run asks for it again, unless a
    /// --revisit rule says otherwise (default: every run).
    #[arg(long, value_name = "DURATION", requires = "recrawl")]
    pub revisit_every: Option<String>,
    /// With --recrawl: pages whose URL matches REGEX rest DURATION between visits
    /// ('/news/=1h'; `0s`: every run). Repeatable; the first rule that matches wins.
    #[arg(long = "revisit", value_name = "REGEX=DURATION", requires = "recrawl")]
    pub revisit_rules: Vec<String>,
    /// With --recrawl: each page's interval adapts, as Nutch's do: it shrinks by RATE after a
    /// visit that found the page changed and grows by it after one that did not, within
    /// MIN..MAX (alone: 1m,30d,0.2).
    #[arg(long, value_name = "MIN,MAX,RATE", num_args = 0..=1, default_missing_value = "", requires = "recrawl")]
    pub revisit_adaptive: Option<String>,
    /// With --recrawl: what a later run writes of a page that did not change: nothing
    /// (changed, the default: it is asked for with its validators), or its items again (all:
    /// it is asked for whole).
    #[arg(long, value_enum, value_name = "WHAT", requires = "recrawl")]
    pub emit: Option<Emit>,
}

/// `--emit`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Changed,
    All,
}

/// The re-visit policy the flags give, and whether unchanged pages' items are written again.
pub fn from_args(a: &RevisitArgs) -> Result<(RevisitPolicy, bool)> {
    let every = match &a.revisit_every {
        Some(text) => duration("--revisit-every", text)?,
        None => Duration::ZERO,
    };
    let rules = a.revisit_rules.iter().map(|text| rule(text)).collect::<Result<_>>()?;
    let adaptive = a.revisit_adaptive.as_deref().map(adaptive).transpose()?;
    Ok((RevisitPolicy { rules, every, adaptive }, a.emit == Some(Emit::All)))
}

/// A duration as humantime reads it (`0s`: every run).
fn duration(flag: &str, text: &str) -> Result<Duration> {
    humantime::parse_duration(text.trim())
        .map_err(|e| anyhow!("{flag} {text:?}: not a duration ({e}): try \"1h\" or \"7d\""))
}

/// `REGEX=DURATION`, split at the last `=` (a regex may hold one).
fn rule(text: &str) -> Result<RevisitRule> {
    let Some((pattern, every)) = text.rsplit_once('=') else {
        bail!("--revisit {text:?}: write REGEX=DURATION, such as '/news/=1h'");
    };
    let pattern = regex::Regex::new(pattern).map_err(|e| anyhow!("--revisit {text:?}: bad regex: {e}"))?;
    Ok(RevisitRule { pattern, every: duration("--revisit", every)? })
}

/// `MIN,MAX,RATE`, each part optional (`--revisit-adaptive` alone: 1m, 30d and 0.2).
fn adaptive(text: &str) -> Result<Adaptive> {
    let parts: Vec<&str> = match text.trim() {
        "" => Vec::new(),
        t => t.split(',').map(str::trim).collect(),
    };
    if parts.len() > 3 {
        bail!("--revisit-adaptive {text:?}: write MIN,MAX,RATE, such as 1h,30d,0.2");
    }
    let part = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let d = Adaptive::default();
    let bound = |i: usize, default| part(i).map_or(Ok(default), |p| duration("--revisit-adaptive", p));
    let rate = match part(2) {
        None => d.rate,
        Some(p) => {
            p.parse::<f64>().map_err(|_| anyhow!("--revisit-adaptive {text:?}: {p:?} is not a rate"))?
        }
    };
    let adaptive = Adaptive { min: bound(0, d.min)?, max: bound(1, d.max)?, rate };
    adaptive.check().map_err(|e| anyhow!("--revisit-adaptive {text:?}: {e}"))?;
    Ok(adaptive)
}
