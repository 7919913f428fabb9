//! The buffers between the stages, reported as the seeds' scheduler reports its buffer pool:
//! each one's capacity, what it holds now, the most it held and how many messages it took.
//!
//! A sender is wrapped in [`Gauged`], which counts each message it puts in and notes how full
//! the buffer was right after; what a buffer holds now is read through a weak sender, so the
//! gauge never keeps a channel open (the stages end when their input closes).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use tokio::sync::mpsc;

/// One buffer's figures, in the summary and on `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BufferStats {
    /// `leases` (scheduler → downloaders), `fetched` (downloaders → parsers), `results`
    /// (downloaders and parsers → scheduler), `items` (scheduler → pipeline), `errors` (every
    /// stage → the error stream's reader).
    pub name: String,
    /// The most it holds (`leases`: the crawl's concurrency, which the scheduler never
    /// exceeds).
    pub capacity: u64,
    /// What it holds now (0 once its run has ended).
    pub len: u64,
    /// The most it held right after a message went in.
    pub peak: u64,
    /// Messages put in.
    pub total: u64,
}

/// What a buffer holds now, read without keeping it open; `None` once it is closed.
type Probe = Box<dyn Fn() -> Option<usize> + Send + Sync>;

/// The counts of one buffer, shared by its senders.
pub(crate) struct Gauge {
    name: &'static str,
    capacity: u64,
    peak: AtomicU64,
    total: AtomicU64,
    probe: Probe,
}

impl std::fmt::Debug for Gauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gauge").field("name", &self.name).field("capacity", &self.capacity).finish()
    }
}

impl Gauge {
    fn new(name: &'static str, capacity: usize, probe: Probe) -> Arc<Gauge> {
        Arc::new(Gauge {
            name,
            capacity: capacity as u64,
            peak: AtomicU64::new(0),
            total: AtomicU64::new(0),
            probe,
        })
    }

    /// A message went in, leaving `len` in the buffer.
    pub fn sent(&self, len: usize) {
        self.total.fetch_add(1, Ordering::Relaxed);
        self.peak.fetch_max(len as u64, Ordering::Relaxed);
    }

    pub fn stats(&self) -> BufferStats {
        BufferStats {
            name: self.name.to_string(),
            capacity: self.capacity,
            len: (self.probe)().unwrap_or(0) as u64,
            peak: self.peak.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
        }
    }
}

/// A sender that counts what it sends into its buffer's [`Gauge`].
#[derive(Debug)]
pub(crate) struct Gauged<S> {
    tx: S,
    gauge: Arc<Gauge>,
}

impl<S: Clone> Clone for Gauged<S> {
    fn clone(&self) -> Self {
        Gauged { tx: self.tx.clone(), gauge: self.gauge.clone() }
    }
}

impl<S> Gauged<S> {
    pub fn gauge(&self) -> Arc<Gauge> {
        self.gauge.clone()
    }
}

/// How full a tokio sender's buffer is (permits reserved count as held).
fn tokio_len<T>(tx: &mpsc::Sender<T>) -> usize {
    tx.max_capacity() - tx.capacity()
}

impl<T: Send + 'static> Gauged<mpsc::Sender<T>> {
    pub fn new(name: &'static str, tx: mpsc::Sender<T>) -> Self {
        let weak = tx.downgrade();
        let probe: Probe = Box::new(move || weak.upgrade().map(|tx| tokio_len(&tx)));
        Gauged { gauge: Gauge::new(name, tx.max_capacity(), probe), tx }
    }

    pub async fn send(&self, value: T) -> Result<(), mpsc::error::SendError<T>> {
        self.tx.send(value).await?;
        self.gauge.sent(tokio_len(&self.tx));
        Ok(())
    }

    /// Sends unless the buffer is full or closed.
    pub fn try_send(&self, value: T) -> Result<(), mpsc::error::TrySendError<T>> {
        self.tx.try_send(value)?;
        self.gauge.sent(tokio_len(&self.tx));
        Ok(())
    }
}

impl<T: Send + 'static> Gauged<async_channel::Sender<T>> {
    /// `capacity` is the channel's bound, or for an unbounded one the most its sender ever
    /// puts in at once.
    pub fn new_async(name: &'static str, tx: async_channel::Sender<T>, capacity: usize) -> Self {
        let weak = tx.downgrade();
        let probe: Probe = Box::new(move || weak.upgrade().map(|tx| tx.len()));
        Gauged { gauge: Gauge::new(name, capacity, probe), tx }
    }

    pub async fn send(&self, value: T) -> Result<(), async_channel::SendError<T>> {
        self.tx.send(value).await?;
        self.gauge.sent(self.tx.len());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_buffer_reports_capacity_length_peak_and_total() {
        let (tx, mut rx) = mpsc::channel::<u32>(4);
        let tx = Gauged::new("results", tx);
        for n in 0..3 {
            tx.send(n).await.unwrap();
        }
        rx.recv().await.unwrap();
        tx.send(3).await.unwrap();
        let want = BufferStats { name: "results".into(), capacity: 4, len: 3, peak: 3, total: 4 };
        assert_eq!(tx.gauge().stats(), want);
        let gauge = tx.gauge();
        drop(tx);
        // The gauge keeps no sender: the channel closes, and a closed buffer holds nothing.
        while rx.recv().await.is_some() {}
        assert_eq!(gauge.stats().len, 0);
    }

    #[tokio::test]
    async fn an_async_channel_reports_too() {
        let (tx, rx) = async_channel::unbounded::<u32>();
        let tx = Gauged::new_async("leases", tx, 8);
        tx.send(1).await.unwrap();
        tx.send(2).await.unwrap();
        rx.recv().await.unwrap();
        let s = tx.gauge().stats();
        assert_eq!((s.capacity, s.len, s.peak, s.total), (8, 1, 2, 2));
        drop(tx);
        assert!(rx.recv().await.is_ok() && rx.recv().await.is_err(), "closed once its sender went");
    }
}
