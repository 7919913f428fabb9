//! The connections of the control server, bounded so the port can never take the crawl down:
//! at most [`MAX_CONNECTIONS`] are served at once (one more is accepted and closed at once,
//! which frees its file descriptor at once, where leaving it in the kernel's backlog would
//! not), and one that has not sent a whole request head within [`HEADER_TIMEOUT`] (idle
//! keep-alive ones too) is closed. The crawl's storage shares the process's open-files limit.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Connections served at once; the status page needs one or two, scripts a few.
pub const MAX_CONNECTIONS: usize = 64;

/// How long a connection may take to send a request head, or stay idle between requests.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long accepting pauses after it failed (out of file descriptors, most likely), so the
/// loop does not spin while the crawl frees some.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until the task is dropped; its connections go with it.
pub(crate) async fn serve(listener: TcpListener, app: Router) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut conns = JoinSet::new();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::debug!(error = %e, "the control server could not accept a connection");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        while conns.try_join_next().is_some() {}
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!("the control server is full: a connection closed at once");
            drop(stream);
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        conns.spawn(async move {
            let _slot = slot;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
            if let Err(e) = http.serve_connection(TokioIo::new(stream), service).await {
                tracing::trace!(error = %e, "a control connection ended");
            }
        });
    }
}
