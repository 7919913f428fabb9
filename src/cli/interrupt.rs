//! Ctrl-C: the first press asks for a graceful stop, the second for a stop now. One signal
//! stream for both, so a second press right after the first is not missed.

use anyhow::Result;
use kumo_engine::StopMode;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// Stop requests from Ctrl-C, for `Stopper::follow`.
pub fn stop_requests() -> Result<watch::Receiver<Option<StopMode>>> {
    let mut interrupts = signal(SignalKind::interrupt())?;
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        if interrupts.recv().await.is_some() {
            eprintln!("stopping: finishing what is in flight (Ctrl-C again to stop now)");
            tx.send_replace(Some(StopMode::Graceful));
            if interrupts.recv().await.is_some() {
                eprintln!("stopping now: what was in flight is fetched again on resume");
                tx.send_replace(Some(StopMode::Now));
            }
        }
        // Keep the sender (and the handler) alive for the rest of the process.
        std::future::pending::<()>().await;
    });
    Ok(rx)
}
