//! `script`: a site's JavaScript hooks, run sandboxed (`kumo-script`).
//!
//! ```toml
//! [[site]]
//! script = { file = "rules.js" }          # beside the spider file; or source = """…"""
//! # optional: each call's budget and the script's heap (defaults 20 ms, 16 MiB; at most the
//! # operator's --script-max-call and --script-max-memory, 1 s and 256 MiB unless set)
//! script = { file = "rules.js", call_ms = 50, memory_mb = 32 }
//! ```
//!
//! Hooks, each optional: `allow(url, depth) -> bool`, `priority(url, depth, referrer) -> number`,
//! `rewrite(url) -> url | null`, `item(item, page) -> item | null`, `extract(page) -> [items]`,
//! where `page` is `{url, status, headers, body}`.

use std::path::Path;
use std::time::Duration;

use kumo_script::{Ceiling, Limits, Script};
use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::error::{Lines, SpiderConfigError};

/// A site's JavaScript hooks: a `file` or a `source`, and the budget of each call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScript {
    /// The script's file, relative to the spider file.
    pub file: Option<String>,
    /// The script itself.
    pub source: Option<String>,
    /// Wall-clock milliseconds one call may run (20), at most `--script-max-call`.
    pub call_ms: Option<u64>,
    /// MiB of heap the script's runtime may use (16), at most `--script-max-memory`.
    pub memory_mb: Option<usize>,
}

/// Loads a site's script: a mistake in it is an error at its own file, line and column. What
/// it asks for past `ceiling` is cut to it, with a warning.
pub(super) fn script(
    lines: &Lines,
    at: &str,
    raw: Spanned<RawScript>,
    ceiling: &Ceiling,
) -> Result<Script, SpiderConfigError> {
    let offset = raw.span().start;
    let raw = raw.into_inner();
    let error = |message: String| lines.error(offset, at.to_string(), message);
    let (name, source) = match (raw.file, raw.source) {
        (Some(file), None) => {
            // Beside the spider file, as its author sees them.
            let path = Path::new(lines.file).parent().unwrap_or(Path::new("")).join(&file);
            let source = std::fs::read_to_string(&path)
                .map_err(|e| error(format!("cannot read the script {}: {e}", path.display())))?;
            (path.display().to_string(), source)
        }
        (None, Some(source)) => (format!("{} (script)", lines.file), source),
        _ => {
            return Err(error(
                "give the script as `file = \"…\"` or `source = \"\"\"…\"\"\"`, one of them".into(),
            ));
        }
    };
    let defaults = Limits::default();
    let asked = Limits {
        call: raw.call_ms.map_or(defaults.call, |ms| Duration::from_millis(ms.max(1))),
        memory: raw.memory_mb.map_or(defaults.memory, |mb| mb.max(1).saturating_mul(1 << 20)),
        ..defaults
    };
    let limits = asked.capped(ceiling);
    if raw.call_ms.is_some() && limits.call < asked.call {
        tracing::warn!(
            "{}: {at} → call_ms: {} ms asked, cut to the ceiling of {} ms (--script-max-call)",
            lines.file,
            asked.call.as_millis(),
            limits.call.as_millis()
        );
    }
    if raw.memory_mb.is_some() && limits.memory < asked.memory {
        tracing::warn!(
            "{}: {at} → memory_mb: {} MiB asked, cut to the ceiling of {} MiB (--script-max-memory)",
            lines.file,
            asked.memory >> 20,
            limits.memory >> 20
        );
    }
    Script::load(&name, &source, limits).map_err(|e| error(e.to_string()))
}
