//! The HTTP side: one small axum router on the address `--listen` gives.

use std::net::SocketAddr;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kumo_engine::StopMode;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::auth::Guard;
use crate::{Control, ControlError, Sites};

/// Where to listen, and the token requests must carry (required off loopback).
#[derive(Debug, Clone)]
pub struct ListenConfig {
    /// The address to listen on; port 0 takes any free one.
    pub addr: SocketAddr,
    /// What every request must carry (`Authorization: Bearer TOKEN`; the status page may
    /// take it as `?token=`), at least 16 bytes; `None` is allowed on loopback only.
    pub token: Option<String>,
}

/// A running control server; it stops when dropped.
#[derive(Debug)]
pub struct ControlServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl ControlServer {
    /// Binds `cfg.addr` (port 0: any free port) and serves `sites` until dropped.
    pub async fn start(cfg: ListenConfig, sites: Sites) -> Result<Self, ControlError> {
        if let Some(t) = &cfg.token
            && t.chars().count() < 16
        {
            return Err(ControlError::WeakToken);
        }
        if cfg.token.is_none() && !cfg.addr.ip().is_loopback() {
            return Err(ControlError::TokenRequired { addr: cfg.addr });
        }
        let listener = TcpListener::bind(cfg.addr)
            .await
            .map_err(|error| ControlError::Bind { addr: cfg.addr, error })?;
        let addr = listener.local_addr().map_err(|error| ControlError::Bind { addr: cfg.addr, error })?;
        let guard = Guard::new(addr, cfg.token);
        let app = Router::new()
            .route("/", get(page))
            .route("/metrics", get(metrics))
            .route("/api/failures", get(failures))
            .route("/api/frontier", get(frontier))
            .route("/api/requeue-failures", post(requeue_failures))
            .route("/api/status", get(status))
            .route("/api/pause", post(pause))
            .route("/api/resume", post(resume))
            .route("/api/stop", post(stop))
            .layer(middleware::from_fn_with_state(guard, check))
            .with_state(sites);
        let task = tokio::spawn(crate::serve::serve(listener, app));
        Ok(ControlServer { addr, task })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Refuses what the guard refuses, before any handler runs.
async fn check(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    // The page itself may carry the token in its address (a browser cannot add a header to
    // what it navigates to); the page's script sends it as a header from then on.
    let query_token = (req.uri().path() == "/")
        .then(|| req.uri().query())
        .flatten()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")));
    match guard.check(req.method(), req.headers(), query_token) {
        Ok(()) => next.run(req).await,
        Err((status, why)) => (status, why).into_response(),
    }
}

/// Before the run's first summary there is nothing to tell.
fn not_yet() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "the crawl has not started yet\n").into_response()
}

/// `?site=NAME`.
#[derive(Debug, Default, serde::Deserialize)]
struct Which {
    site: Option<String>,
}

/// Why a request names nothing to answer about.
enum Missing {
    Site(String),
    NotYet,
}

impl IntoResponse for Missing {
    fn into_response(self) -> Response {
        match self {
            Missing::Site(name) => (StatusCode::NOT_FOUND, format!("no site {name:?}\n")).into_response(),
            Missing::NotYet => not_yet(),
        }
    }
}

/// The sites a request names: the one of `?site=`, else all of them.
fn chosen(sites: &Sites, which: &Which) -> Result<Vec<(String, Control)>, Missing> {
    let all = sites.list();
    match &which.site {
        None => Ok(all),
        Some(name) => match all.into_iter().find(|(n, _)| n == name) {
            Some(one) => Ok(vec![one]),
            None => Err(Missing::Site(name.clone())),
        },
    }
}

async fn metrics(State(sites): State<Sites>) -> Response {
    let snaps: Vec<_> = sites
        .list()
        .into_iter()
        .filter_map(|(name, c)| {
            let live = c.live.borrow().clone()?;
            Some(crate::metrics::SiteSnapshot::new(name, live, &c.progress, c.pauser.is_paused()))
        })
        .collect();
    if snaps.is_empty() {
        return not_yet();
    }
    let mut resp = crate::metrics::render(snaps).into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    resp
}

/// The status page: one file, its script and style inline.
async fn page() -> Response {
    let mut resp = include_str!("status.html").into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    resp
}

/// The first site a request names, with its last publication.
fn one(
    sites: &Sites,
    which: &Which,
) -> Result<(String, Control, std::sync::Arc<kumo_engine::Live>), Missing> {
    let (name, c) = chosen(sites, which)?.into_iter().next().ok_or(Missing::NotYet)?;
    let live = c.live.borrow().clone().ok_or(Missing::NotYet)?;
    Ok((name, c, live))
}

async fn failures(State(sites): State<Sites>, Query(which): Query<Which>) -> Response {
    match one(&sites, &which) {
        Ok((_, _, live)) => {
            Json(json!({ "recent": live.recent_failures, "total": live.summary.failed })).into_response()
        }
        Err(r) => r.into_response(),
    }
}

/// One site's status (the one `?site=` names, else the first), with the names of all.
async fn status(State(sites): State<Sites>, Query(which): Query<Which>) -> Response {
    let names: Vec<String> = sites.list().into_iter().map(|(n, _)| n).collect();
    let (name, c, live) = match one(&sites, &which) {
        Ok(v) => v,
        Err(r) => return r.into_response(),
    };
    let paused = c.pauser.is_paused();
    let state = match c.stopper.status() {
        kumo_engine::Status::Started if paused => "paused".to_string(),
        kumo_engine::Status::Started => "running".to_string(),
        other => other.to_string(),
    };
    let mut summary = serde_json::to_value(&live.summary).unwrap_or_default();
    if let Some(s) = summary.as_object_mut()
        && s.get("status").and_then(|v| v.as_str()) == Some("started")
    {
        // Nothing has stopped it yet.
        s.remove("stopped_by");
    }
    let body = json!({
        "site": name, "sites": names, "state": state, "paused": paused, "summary": summary,
        "hosts": live.hosts, "recent_failures": live.recent_failures, "crawl": live.crawl,
    });
    Json(body).into_response()
}

/// Applies `verb` to the sites the request names (all of them without `?site=`).
fn each(sites: &Sites, which: &Which, verb: impl Fn(&Control) -> Result<(), String>) -> Response {
    let chosen = match chosen(sites, which) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let mut done = Vec::new();
    let mut refused = serde_json::Map::new();
    for (name, c) in &chosen {
        match verb(c) {
            Ok(()) => done.push(name.clone()),
            Err(e) => {
                refused.insert(name.clone(), e.into());
            }
        }
    }
    let status = if done.is_empty() { StatusCode::CONFLICT } else { StatusCode::OK };
    (status, Json(json!({ "sites": done, "refused": refused }))).into_response()
}

/// Requests shown by `/api/frontier` unless `limit` says otherwise, and at most.
const SHOWN: usize = 50;
const SHOWN_MAX: usize = 1000;

/// `?host=HOST[:PORT]&limit=N&site=NAME`.
#[derive(Debug, serde::Deserialize)]
struct HostQuery {
    host: String,
    limit: Option<usize>,
    // Not a flattened `Which`: flattening makes serde read `limit` as text, not a number.
    site: Option<String>,
}

/// What is queued for one host of one site, its next requests first.
async fn frontier(State(sites): State<Sites>, Query(q): Query<HostQuery>) -> Response {
    let (_, c, _) = match one(&sites, &Which { site: q.site.clone() }) {
        Ok(v) => v,
        Err(r) => return r.into_response(),
    };
    match c.steer.host_queue(&q.host, q.limit.unwrap_or(SHOWN).min(SHOWN_MAX)).await {
        Ok(Some(queue)) => Json(queue).into_response(),
        Ok(None) => {
            (StatusCode::NOT_FOUND, format!("no host {:?} in the frontier\n", q.host)).into_response()
        }
        Err(e) => refused(e),
    }
}

/// A steering request the crawl could not carry out: it has ended, or its storage failed.
fn refused(e: kumo_engine::SteerError) -> Response {
    let status = match e {
        kumo_engine::SteerError::NotRunning => StatusCode::CONFLICT,
        kumo_engine::SteerError::Frontier(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, format!("{e}\n")).into_response()
}

/// `?kind=timeout,connect&site=NAME`: the kinds to re-queue (all without).
#[derive(Debug, serde::Deserialize)]
struct KindsQuery {
    kind: Option<String>,
    site: Option<String>,
}

/// Moves failures back to the queue of each site named (all without `?site=`).
async fn requeue_failures(State(sites): State<Sites>, Query(q): Query<KindsQuery>) -> Response {
    let mut kinds = Vec::new();
    for k in q.kind.iter().flat_map(|k| k.split(',')).filter(|k| !k.is_empty()) {
        match k.parse::<kumo_core::ErrorKind>() {
            Ok(kind) => kinds.push(kind),
            Err(e) => return (StatusCode::BAD_REQUEST, format!("kind {k:?}: {e}\n")).into_response(),
        }
    }
    let chosen = match chosen(&sites, &Which { site: q.site }) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let mut done = serde_json::Map::new();
    let mut refused = serde_json::Map::new();
    for (name, c) in &chosen {
        match c.steer.requeue_failures(kinds.clone()).await {
            Ok(report) => {
                done.insert(name.clone(), json!(report));
            }
            Err(e) => {
                refused.insert(name.clone(), e.to_string().into());
            }
        }
    }
    let status = if done.is_empty() { StatusCode::CONFLICT } else { StatusCode::OK };
    (status, Json(json!({ "sites": done, "refused": refused }))).into_response()
}

async fn pause(State(sites): State<Sites>, Query(which): Query<Which>) -> Response {
    each(&sites, &which, |c| {
        c.pauser.pause();
        Ok(())
    })
}

async fn resume(State(sites): State<Sites>, Query(which): Query<Which>) -> Response {
    each(&sites, &which, |c| {
        c.pauser.resume();
        Ok(())
    })
}

async fn stop(State(sites): State<Sites>, Query(which): Query<Which>) -> Response {
    each(&sites, &which, |c| c.stopper.stop(StopMode::Graceful).map_err(|e| e.to_string()))
}
