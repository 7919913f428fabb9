//! A host that speaks broken HTTP on purpose, which a well-behaved server library will not:
//! a reset in the middle of the response head, a `Content-Length` that lies either way, an
//! answer that is not HTTP at all, a server that never answers. One request per connection.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::server::accept_each;

/// A reset after part of the status line and headers.
pub(crate) const RESET_IN_HEAD: &str = "/f/reset-in-head.html";
/// `Content-Length: 10000`, 300 bytes, then the connection closes.
pub(crate) const LENGTH_TOO_LONG: &str = "/f/length-too-long.html";
/// `Content-Length` shorter than the page sent: the reader stops early, on a page that still
/// parses.
pub(crate) const LENGTH_TOO_SHORT: &str = "/f/length-too-short.html";
/// An SSH banner where an HTTP answer belongs.
pub(crate) const NOT_HTTP: &str = "/f/not-http.html";
/// Reads the request and never answers.
pub(crate) const SILENT: &str = "/f/silent.html";

/// What the host does when asked for `/robots.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawRobots {
    /// `404`: no rules, everything allowed.
    NotFound,
    /// The connection is reset: robots.txt is unreachable, which RFC 9309 reads as
    /// "disallow everything".
    Reset,
}

/// A running raw host; it stops when shut down or dropped.
#[derive(Debug)]
pub(crate) struct RawHost {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    stop: watch::Sender<()>,
    task: JoinHandle<()>,
}

impl RawHost {
    pub(crate) async fn start(robots: RawRobots) -> io::Result<RawHost> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let hits = Arc::new(Mutex::new(Vec::new()));
        let (stop, stop_rx) = watch::channel(());
        let log = Arc::clone(&hits);
        // No grace at the end: dropping the connections cuts the silent ones too.
        let serve = move |stream, stop| serve(stream, robots, Arc::clone(&log), stop);
        let task = tokio::spawn(accept_each(listener, stop_rx, Duration::ZERO, serve));
        Ok(RawHost { addr, hits, stop, task })
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request targets received, in arrival order.
    pub(crate) fn hits(&self) -> Vec<String> {
        lock(&self.hits).clone()
    }

    pub(crate) async fn shutdown(self) {
        drop(self.stop);
        let _ = self.task.await;
    }
}

fn lock(hits: &Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
    // A push cannot leave the log half-written, so a poisoned lock still holds a good log.
    hits.lock().unwrap_or_else(|p| p.into_inner())
}

async fn serve(
    mut stream: TcpStream,
    robots: RawRobots,
    hits: Arc<Mutex<Vec<String>>>,
    mut stop: watch::Receiver<()>,
) {
    let Some(target) = read_target(&mut stream).await else { return };
    lock(&hits).push(target.clone());
    let path = target.split('?').next().unwrap_or(&target);
    let page = |n: usize| format!("<!DOCTYPE html><title>Raw {n}</title><p>{}</p>\n", "x".repeat(n));
    let answer = match path {
        "/robots.txt" if robots == RawRobots::Reset => return reset(stream),
        RESET_IN_HEAD => {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/ht").await;
            return reset(stream);
        }
        LENGTH_TOO_LONG => {
            let body = page(250);
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000\r\n\r\n{body}")
        }
        LENGTH_TOO_SHORT => {
            let body = page(3000);
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 80\r\nConnection: close\r\n\r\n{body}"
            )
        }
        NOT_HTTP => "SSH-2.0-OpenSSH_9.6\r\n".to_owned(),
        SILENT => {
            // Holds the connection open, answering nothing, until the host stops.
            let _ = stop.changed().await;
            return;
        }
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
    };
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Sends a TCP reset instead of a clean close.
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

/// The target of the request line, once the whole head has arrived (at most 16 KiB, 10 s).
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let read = async {
        let mut chunk = [0u8; 2048];
        // Bounded: the head may not pass 16 KiB.
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.ok()??;
    let line = buf.split(|&b| b == b'\n').next()?;
    let target = String::from_utf8_lossy(line).split_whitespace().nth(1)?.to_owned();
    Some(target)
}
