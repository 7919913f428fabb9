//! The response body type: a whole buffer, a "trickle" that sends delayed chunks, or one
//! chunk repeated into a huge body.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::time::Sleep;

use crate::record::InFlight;

/// A response body. One concrete type (rather than a boxed trait object) keeps the hot
/// synthetic-page path free of an extra allocation per response.
#[derive(Debug)]
pub(crate) struct Body {
    kind: Kind,
    /// Dropped when hyper is done with the body, which ends the request's "in flight" span.
    guard: Option<InFlight>,
}

#[derive(Debug)]
enum Kind {
    Full(Option<Bytes>),
    Trickle(Trickle),
    /// `chunk` sent again and again until `left` bytes have gone: a huge body that costs the
    /// server no memory.
    Repeat {
        chunk: Bytes,
        left: u64,
    },
}

#[derive(Debug)]
struct Trickle {
    rest: Bytes,
    chunk: usize,
    delay: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Bytes still to send before the connection is cut (a reset mid-body).
    reset_after: Option<usize>,
}

impl Body {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Body { kind: Kind::Full((!bytes.is_empty()).then_some(bytes)), guard: None }
    }

    pub(crate) fn empty() -> Self {
        Body::full(Bytes::new())
    }

    /// `chunk == 0` sends the body whole; otherwise `chunk` bytes at a time, each after `delay`.
    /// A trickle that errors after `reset_after` bytes, which makes hyper abort the
    /// connection: the client sees the body end early.
    pub(crate) fn trickle_then_reset(
        bytes: Bytes,
        chunk: usize,
        delay: Duration,
        reset_after: Option<usize>,
    ) -> Self {
        if chunk == 0 && reset_after.is_none() {
            return Body::full(bytes);
        }
        let chunk = if chunk == 0 { bytes.len().max(1) } else { chunk };
        Body {
            kind: Kind::Trickle(Trickle { rest: bytes, chunk, delay, sleep: None, reset_after }),
            guard: None,
        }
    }

    /// `total` bytes made of `chunk` repeated (the last copy cut short), with an exact length.
    pub(crate) fn repeat(chunk: Bytes, total: u64) -> Self {
        let left = if chunk.is_empty() { 0 } else { total };
        Body { kind: Kind::Repeat { chunk, left }, guard: None }
    }

    pub(crate) fn attach(&mut self, guard: InFlight) {
        self.guard = Some(guard);
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        let data = match &mut this.kind {
            Kind::Full(bytes) => bytes.take(),
            Kind::Trickle(t) => {
                if t.rest.is_empty() {
                    None
                } else {
                    if !t.delay.is_zero() {
                        let delay = t.delay;
                        let sleep = t.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
                        ready!(sleep.as_mut().poll(cx));
                        t.sleep = None;
                    }
                    let mut n = t.chunk.min(t.rest.len());
                    if let Some(left) = t.reset_after {
                        if left == 0 {
                            return Poll::Ready(Some(Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "fixture: connection reset mid-body",
                            ))));
                        }
                        n = n.min(left);
                        t.reset_after = Some(left - n);
                    }
                    Some(t.rest.split_to(n))
                }
            }
            Kind::Repeat { chunk, left } => {
                let n = (*left).min(chunk.len() as u64) as usize;
                *left -= n as u64;
                (n > 0).then(|| chunk.slice(..n))
            }
        };
        if data.is_none() {
            // Finished: release the in-flight mark now rather than whenever hyper drops us.
            this.guard = None;
        }
        Poll::Ready(data.map(|d| Ok(Frame::data(d))))
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Trickle(t) => t.rest.is_empty(),
            Kind::Repeat { left, .. } => *left == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            // Unknown on purpose: without a Content-Length from the fixture, hyper uses
            // chunked encoding, so each trickled piece goes out as its own chunk.
            Kind::Trickle(_) => SizeHint::default(),
            Kind::Repeat { left, .. } => SizeHint::with_exact(*left),
        }
    }
}
