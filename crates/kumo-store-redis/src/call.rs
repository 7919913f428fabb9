//! Calls to the frontier's function library: arguments, the connection, retries through an outage, and
//! reading the replies.
//!
//! A call is built once and sent until it gets an answer: every operation of the script is
//! idempotent under retry (see `frontier.lua`), because after a dropped connection the client
//! cannot know whether the script ran.

use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Cmd, ErrorKind, IntoConnectionInfo, RedisError, Value};

use crate::RedisStoreError;

/// The frontier's function library, loaded once per Redis (and again after a restart that
/// lost it), called by name.
pub(crate) struct Script {
    /// `FUNCTION LOAD`'s text: the library named after the hash of its code.
    library: String,
    /// The function's name, `kumo_` and that hash.
    name: String,
}

impl Script {
    pub(crate) fn frontier() -> Self {
        let code = include_str!("frontier.lua");
        let hash = redis::Script::new(code).get_hash()[..12].to_string();
        let name = format!("kumo_{hash}");
        let library = format!("#!lua name={name}\n{}", code.replace("KUMO_FN", &name));
        Script { library, name }
    }
}

/// The arguments of one call: the operation, the incarnation, the id of the crawl the worker
/// joined (empty from outside a crawl: no check), then whatever follows.
#[derive(Debug, Default, Clone)]
pub(crate) struct Args(Vec<Vec<u8>>);

impl Args {
    pub(crate) fn new(op: &str, inc: &str, crawl_id: &str) -> Self {
        let mut a = Args(Vec::with_capacity(16));
        a.s(op).s(inc).s(crawl_id);
        a
    }

    /// A call with an empty prelude (no slots given back, no requests handed back, no host
    /// adjustments, no counters): for calls made outside a worker's flow.
    pub(crate) fn bare(op: &str, inc: &str, crawl_id: &str) -> Self {
        let mut a = Args::new(op, inc, crawl_id);
        a.n(0).n(0).n(0).n(0);
        a
    }

    pub(crate) fn s(&mut self, v: &str) -> &mut Self {
        self.0.push(v.as_bytes().to_vec());
        self
    }

    pub(crate) fn b(&mut self, v: &[u8]) -> &mut Self {
        self.0.push(v.to_vec());
        self
    }

    pub(crate) fn n(&mut self, v: impl std::fmt::Display) -> &mut Self {
        self.0.push(v.to_string().into_bytes());
        self
    }

    /// An optional number: empty when absent.
    pub(crate) fn opt(&mut self, v: Option<u64>) -> &mut Self {
        self.0.push(v.map(|v| v.to_string().into_bytes()).unwrap_or_default());
        self
    }
}

/// A connection to the crawl's Redis, with the time an outage may last.
#[derive(Clone)]
pub(crate) struct Conn {
    url: String,
    con: ConnectionManager,
    prefix: String,
    outage_wait: Duration,
}

/// How a failed call goes on.
enum Failure {
    /// The connection or the server is away for now: send the same call again.
    Transient(String),
    /// An answer: retrying changes nothing.
    Final(RedisStoreError),
}

fn classify(e: RedisError) -> Failure {
    if e.code() == Some("KUMO") {
        let detail = e.detail().unwrap_or_default().to_string();
        return Failure::Final(match detail.split_once(' ') {
            Some(("superseded:", rest)) => RedisStoreError::Superseded(rest.to_string()),
            Some(("lost:", prefix)) => RedisStoreError::StateLost(prefix.to_string()),
            Some(("cleared:", prefix)) => RedisStoreError::Cleared(prefix.to_string()),
            Some(("config:", rest)) => RedisStoreError::OtherConfig(rest.to_string()),
            _ => RedisStoreError::Redis(detail),
        });
    }
    let busy = matches!(e.code(), Some("LOADING" | "BUSY" | "TRYAGAIN" | "MASTERDOWN" | "READONLY"));
    if busy
        || e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.kind() == ErrorKind::Io
    {
        Failure::Transient(e.to_string())
    } else {
        Failure::Final(RedisStoreError::Redis(e.to_string()))
    }
}

impl Conn {
    /// Connects (waiting out an outage up to `outage_wait`). TCP_NODELAY on: a call is one
    /// small request and reply, and Nagle's delay would pace the whole crawl.
    pub(crate) async fn open(
        url: &str,
        prefix: String,
        outage_wait: Duration,
    ) -> Result<Self, RedisStoreError> {
        let bad = |reason: String| RedisStoreError::Url { url: url.to_string(), reason };
        let info = url.into_connection_info().map_err(|e| bad(e.to_string()))?;
        let tcp = redis::io::tcp::TcpSettings::default().set_nodelay(true);
        let client = Client::open(info.set_tcp_settings(tcp)).map_err(|e| bad(e.to_string()))?;
        let config = ConnectionManagerConfig::new()
            // A commit of a big batch may take a while under load; the call is retried
            // after a timeout anyway, so a short one only adds work.
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let con = through_outage(url, outage_wait, || async {
            ConnectionManager::new_with_config(client.clone(), config.clone()).await.map_err(classify)
        })
        .await?;
        Ok(Conn { url: url.to_string(), con, prefix, outage_wait })
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Sends the call until it is answered: through a dropped connection, a restarting
    /// server (LOADING) or a busy one, for up to `outage_wait`.
    pub(crate) async fn call(&self, script: &Script, args: &Args) -> Result<Value, RedisStoreError> {
        through_outage(&self.url, self.outage_wait, || self.try_call(script, args)).await
    }

    async fn try_call(&self, script: &Script, args: &Args) -> Result<Value, Failure> {
        let mut con = self.con.clone();
        let mut cmd = Cmd::new();
        cmd.arg("FCALL").arg(&script.name).arg(1).arg(&self.prefix);
        for a in &args.0 {
            cmd.arg(&a[..]);
        }
        match cmd.query_async::<Value>(&mut con).await {
            Ok(v) => Ok(v),
            Err(e) if e.detail().is_some_and(|d| d.contains("Function not found")) => {
                // Not run (a Redis without the library: new, or restarted without it): load
                // it, send again. REPLACE, so two workers loading it at once both succeed.
                let mut load = Cmd::new();
                load.arg("FUNCTION").arg("LOAD").arg("REPLACE").arg(&script.library);
                load.query_async::<String>(&mut con).await.map_err(classify)?;
                cmd.query_async::<Value>(&mut con).await.map_err(classify)
            }
            Err(e) => Err(classify(e)),
        }
    }

    /// A plain command (CONFIG GET, SCAN, DEL, INFO), retried like a call.
    pub(crate) async fn command(&self, cmd: &Cmd) -> Result<Value, RedisStoreError> {
        through_outage(&self.url, self.outage_wait, || async {
            cmd.query_async::<Value>(&mut self.con.clone()).await.map_err(classify)
        })
        .await
    }
}

/// Runs `attempt` until it succeeds or fails for good, backing off (50 ms doubling to 2 s)
/// while Redis is away, for up to `wait`; says so once when Redis goes away and once when it
/// is back.
async fn through_outage<T, F, Fut>(url: &str, wait: Duration, mut attempt: F) -> Result<T, RedisStoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Failure>>,
{
    let started = Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut warned = false;
    loop {
        match attempt().await {
            Ok(v) => {
                if warned {
                    tracing::warn!(url, after = ?started.elapsed(), "Redis is back");
                }
                return Ok(v);
            }
            Err(Failure::Final(e)) => return Err(e),
            Err(Failure::Transient(last)) if started.elapsed() >= wait => {
                return Err(RedisStoreError::Unreachable {
                    url: url.to_string(),
                    waited: started.elapsed(),
                    last,
                });
            }
            Err(Failure::Transient(last)) => {
                if !warned {
                    tracing::warn!(url, error = %last, "Redis unreachable; pausing and retrying");
                    warned = true;
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}

// Replies ------------------------------------------------------------------------------------

pub(crate) fn array(v: Value) -> Result<Vec<Value>, RedisStoreError> {
    match v {
        Value::Array(a) | Value::Set(a) => Ok(a),
        Value::Nil => Ok(Vec::new()),
        other => Err(RedisStoreError::Protocol(format!("expected an array, got {other:?}"))),
    }
}

pub(crate) fn int(v: &Value) -> Result<i64, RedisStoreError> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| RedisStoreError::Protocol(format!("expected a number, got {b:?}"))),
        other => Err(RedisStoreError::Protocol(format!("expected a number, got {other:?}"))),
    }
}

pub(crate) fn bytes(v: Value) -> Result<Vec<u8>, RedisStoreError> {
    match v {
        Value::BulkString(b) => Ok(b),
        Value::SimpleString(s) => Ok(s.into_bytes()),
        Value::Nil => Ok(Vec::new()),
        other => Err(RedisStoreError::Protocol(format!("expected a string, got {other:?}"))),
    }
}

pub(crate) fn text(v: Value) -> Result<String, RedisStoreError> {
    String::from_utf8(bytes(v)?).map_err(|e| RedisStoreError::Protocol(e.to_string()))
}
