//! The progress bar on a terminal: pages/s, queued, in flight, errors. Hidden otherwise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kumo_engine::Progress;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub struct ProgressBar {
    done: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl ProgressBar {
    /// Starts redrawing from `progress` every 200 ms (indicatif hides it when standard error
    /// is not a terminal).
    pub fn start(progress: Arc<Progress>) -> Self {
        let (done, mut rx) = oneshot::channel();
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = &mut rx => break,
                }
                let pages = Progress::get(&progress.pages);
                let rate = pages as f64 / started.elapsed().as_secs_f64().max(1e-3);
                bar.set_message(format!(
                    "{pages} pages ({rate:.0}/s), {} queued, {} in flight, {} errors, {} items",
                    Progress::get(&progress.queued),
                    Progress::get(&progress.in_flight),
                    Progress::get(&progress.errors),
                    Progress::get(&progress.items),
                ));
                bar.tick();
            }
            bar.finish_and_clear();
        });
        ProgressBar { done, task }
    }

    pub async fn finish(self) {
        let _ = self.done.send(());
        let _ = self.task.await;
    }
}
