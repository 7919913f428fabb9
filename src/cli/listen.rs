//! `--listen ADDR`: the control server of `kumo crawl` (URLs or a spider file) and `kumo run`,
//! serving each running engine as a site.

use anyhow::Result;
use kumo_control::{ControlError, ControlServer, ListenConfig, Sites};

use super::args::ListenArgs;
use super::outcome::usage;

/// Starts the server `--listen` asks for (none without it), serving `sites`.
pub async fn start(a: &ListenArgs, sites: &Sites) -> Result<Option<ControlServer>> {
    let Some(addr) = a.addr else { return Ok(None) };
    let cfg = ListenConfig { addr, token: a.token.clone() };
    let server = ControlServer::start(cfg, sites.clone()).await.map_err(|e| match e {
        ControlError::Bind { .. } => anyhow::Error::from(e),
        // A token missing or too short: a mistake in the options.
        other => usage(other.into()),
    })?;
    say!(
        "control: http://{}/ (GET /metrics, /api/status|failures|frontier?host=; POST /api/pause|resume|stop|requeue-failures)",
        server.addr()
    );
    Ok(Some(server))
}
