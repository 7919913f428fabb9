//! `--script-max-call` and `--script-max-memory` (`kumo crawl FILE.toml`, `kumo run`): the
//! operator's ceilings on spider files' scripts, which a file may stay under but not pass.

use std::time::Duration;

use kumo_spider::ScriptCeiling;

/// The most a spider file's script may ask for.
#[derive(clap::Args, Debug, Clone)]
pub struct ScriptArgs {
    /// The longest one call of a spider file's script may run (`500ms`, `2s`); a file's
    /// `call_ms` past it is cut to it, with a warning.
    #[arg(long, value_name = "DURATION", default_value_t = ScriptCeiling::default().call.into(), value_parser = call)]
    pub script_max_call: humantime::Duration,
    /// The largest heap of a spider file's script, in MiB (one per site and thread); a file's
    /// `memory_mb` past it is cut to it, with a warning.
    #[arg(long, value_name = "MIB", default_value_t = ScriptCeiling::default().memory >> 20, value_parser = memory)]
    pub script_max_memory: usize,
}

impl ScriptArgs {
    pub fn ceiling(&self) -> ScriptCeiling {
        ScriptCeiling { call: self.script_max_call.into(), memory: self.script_max_memory << 20 }
    }
}

/// A duration as humantime reads it, more than zero and at most a day.
fn call(text: &str) -> Result<humantime::Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a duration ({e}): try \"1s\""))?;
    match d {
        Duration::ZERO => Err("must be more than 0".into()),
        d if d > Duration::from_secs(86_400) => Err("at most a day".into()),
        d => Ok(d.into()),
    }
}

/// MiB, at least 1 and at most 1 TiB (what `usize` holds in bytes on every target kumo runs).
fn memory(text: &str) -> Result<usize, String> {
    let n: usize = text.trim().parse().map_err(|e| format!("{text:?} is not a number of MiB: {e}"))?;
    match n {
        0 => Err("must be at least 1".into()),
        n if n > 1 << 20 => Err("at most 1048576 (1 TiB)".into()),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceilings_are_read_and_bounded() {
        assert_eq!(Duration::from(call("250ms").unwrap()), Duration::from_millis(250));
        assert!(call("0s").is_err() && call("2d").is_err() && call("fast").is_err());
        assert_eq!(memory("64"), Ok(64));
        assert!(memory("0").is_err() && memory("99999999").is_err() && memory("-1").is_err());
    }
}
