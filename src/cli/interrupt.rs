//! Ctrl-C (SIGINT) and SIGTERM: the first of either asks for a graceful stop, the second for a
//! stop now. SIGTERM is what `kill`, service managers and container runtimes send to end a
//! process, so it must commit like Ctrl-C, not kill the crawl mid-write. One stream for both
//! signals, so a second one right after the first is not missed.

use anyhow::Result;
use kumo_engine::StopMode;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

/// Stop requests from SIGINT and SIGTERM, for `Stopper::follow`. Call it early: from then
/// on the signals no longer end the process, and a request made before the crawl starts
/// waits in the channel.
pub fn stop_requests() -> Result<watch::Receiver<Option<StopMode>>> {
    let mut interrupts = signal(SignalKind::interrupt())?;
    let mut terms = signal(SignalKind::terminate())?;
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        if let Some(name) = next(&mut interrupts, &mut terms).await {
            say!("stopping ({name}): finishing what is in flight (Ctrl-C or SIGTERM again to stop now)");
            tx.send_replace(Some(StopMode::Graceful));
            if let Some(name) = next(&mut interrupts, &mut terms).await {
                say!("stopping now ({name}): what was in flight is fetched again on resume");
                // A script call in a loop would hold its worker until its budget ends: cut now.
                // (A graceful stop lets calls end within their budget, capped by the ceiling.)
                kumo_spider::interrupt_scripts();
                tx.send_replace(Some(StopMode::Now));
            }
        }
        // Keep the sender (and the handlers) alive for the rest of the process.
        std::future::pending::<()>().await;
    });
    Ok(rx)
}

/// The next of the two signals, by name; `None` once neither can arrive any more.
async fn next(interrupts: &mut Signal, terms: &mut Signal) -> Option<&'static str> {
    tokio::select! {
        Some(()) = interrupts.recv() => Some("Ctrl-C"),
        Some(()) = terms.recv() => Some("SIGTERM"),
        else => None,
    }
}
