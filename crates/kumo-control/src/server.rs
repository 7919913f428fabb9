//! The HTTP side: one small axum router on the address `--listen` gives.

use std::net::SocketAddr;

use axum::extract::{Request, State};
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
use crate::{Control, ControlError};

/// Where to listen, and the token requests must carry (required off loopback).
#[derive(Debug, Clone)]
pub struct ListenConfig {
    pub addr: SocketAddr,
    pub token: Option<String>,
}

/// A running control server; it stops when dropped.
#[derive(Debug)]
pub struct ControlServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl ControlServer {
    /// Binds `cfg.addr` (port 0: any free port) and serves `control` until dropped.
    pub async fn start(cfg: ListenConfig, control: Control) -> Result<Self, ControlError> {
        if let Some(t) = &cfg.token
            && t.len() < 16
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
            .route("/api/status", get(status))
            .route("/api/pause", post(pause))
            .route("/api/resume", post(resume))
            .route("/api/stop", post(stop))
            .layer(middleware::from_fn_with_state(guard, check))
            .with_state(control);
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "the control server stopped");
            }
        });
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
    match guard.check(req.headers(), query_token) {
        Ok(()) => next.run(req).await,
        Err((status, why)) => (status, why).into_response(),
    }
}

/// Before the run's first summary there is nothing to tell.
fn not_yet() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "the crawl has not started yet\n").into_response()
}

async fn metrics(State(c): State<Control>) -> Response {
    let Some(live) = c.live.borrow().clone() else { return not_yet() };
    let body = crate::metrics::render(live, &c.progress, c.pauser.is_paused());
    let mut resp = body.into_response();
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

async fn failures(State(c): State<Control>) -> Response {
    let Some(live) = c.live.borrow().clone() else { return not_yet() };
    Json(json!({ "recent": live.recent_failures, "total": live.summary.failed })).into_response()
}

async fn status(State(c): State<Control>) -> Response {
    let Some(live) = c.live.borrow().clone() else { return not_yet() };
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
        "state": state, "paused": paused, "summary": summary,
        "hosts": live.hosts, "recent_failures": live.recent_failures,
    });
    Json(body).into_response()
}

async fn pause(State(c): State<Control>) -> Json<serde_json::Value> {
    c.pauser.pause();
    Json(json!({ "paused": true }))
}

async fn resume(State(c): State<Control>) -> Json<serde_json::Value> {
    c.pauser.resume();
    Json(json!({ "paused": false }))
}

async fn stop(State(c): State<Control>) -> Response {
    match c.stopper.stop(StopMode::Graceful) {
        Ok(()) => Json(json!({ "stopping": true })).into_response(),
        Err(e) => (StatusCode::CONFLICT, Json(json!({ "error": e.to_string() }))).into_response(),
    }
}
