//! A throwaway Redis server for tests: `redis-server` on a free loopback port and a Unix socket
//! in a temporary directory, with an append-only file so a killed server can be restarted with
//! its data (or, with `appendonly: false`, none: a restart comes back empty).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let mut redis = kumo_testsite::services::Redis::start().await?;
//! redis.command(&["SET", "k", "v"])?;
//! redis.kill()?; // a crash: SIGKILL, nothing flushed but what the AOF already has
//! redis.restart().await?; // replays the AOF
//! assert_eq!(redis.command(&["GET", "k"])?, "v");
//! drop(redis); // stops the server and removes its directory
//! # Ok(())
//! # }
//! ```

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::services::process::{Reaper, is_executable, on_path, wait_for};

/// How long a started server may take to answer PING (replaying a test's AOF is quick).
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Attempts at a free port: another process may take the one we picked before Redis binds it.
const PORT_ATTEMPTS: usize = 5;
/// How long a SIGKILLed server may take to be gone.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connect, read and write bound of one command: a stopped server fails it instead of hanging.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// Readiness probes are quick: a slow one is just tried again.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// How often readiness is probed.
const POLL: Duration = Duration::from_millis(20);
/// Longest reply line read (status, error, length header).
const MAX_LINE: u64 = 64 * 1024;
/// Longest bulk string Redis sends (its `proto-max-bulk-len` default).
const MAX_BULK: usize = 512 * 1024 * 1024;
/// Deepest nesting of arrays rendered: replies of the commands tests send nest little.
const MAX_DEPTH: usize = 8;
/// `sun_path` holds 108 bytes with the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

const SOCKET: &str = "redis.sock";
const LOG: &str = "redis.log";
const PID_FILE: &str = "redis.pid";
const FALLBACK: &str = "/usr/bin/redis-server";

const MISSING: &str = "redis-server is neither on PATH nor at /usr/bin/redis-server: run \
     scripts/test.sh, which installs it (apt-get install redis-server)";

/// When Redis fsyncs its append-only file (`appendfsync`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Appendfsync {
    /// Before every reply: a killed server has lost nothing it acknowledged.
    #[default]
    Always,
    /// Once a second: a killed server may lose about the last second of writes.
    Everysec,
    /// When the operating system flushes: a killed server may lose more.
    No,
}

impl Appendfsync {
    fn as_str(self) -> &'static str {
        match self {
            Appendfsync::Always => "always",
            Appendfsync::Everysec => "everysec",
            Appendfsync::No => "no",
        }
    }
}

/// How the server is configured.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// The append-only file (on by default). Off, the server keeps no data at all (`--appendonly
    /// no --save ""`): a restart comes back empty, as a server run without persistence does.
    pub appendonly: bool,
    /// When the append-only file is fsynced ([`Appendfsync::Always`] by default).
    pub appendfsync: Appendfsync,
    /// `maxmemory-policy`; `None` leaves the server's default (`noeviction`).
    pub maxmemory_policy: Option<String>,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions { appendonly: true, appendfsync: Appendfsync::default(), maxmemory_policy: None }
    }
}

/// A running Redis server; dropping it stops the server and removes its files.
pub struct Redis {
    port: u16,
    dir: PathBuf,
    binary: PathBuf,
    options: RedisOptions,
    server: Option<Child>,
    reaper: Reaper,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("port", &self.port).field("dir", &self.dir).finish()
    }
}

impl Redis {
    /// Starts a server with the default options (`appendfsync always`). Fails (never skips)
    /// when `redis-server` is missing, saying how to install it.
    pub async fn start() -> io::Result<Redis> {
        Redis::start_with(RedisOptions::default()).await
    }

    /// Starts a server on a free port of 127.0.0.1 and on `redis.sock` in its directory.
    pub async fn start_with(options: RedisOptions) -> io::Result<Redis> {
        tokio::task::spawn_blocking(move || start_blocking(options)).await.map_err(io::Error::other)?
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// `redis+unix:///abs/path/redis.sock`.
    pub fn unix_url(&self) -> String {
        format!("redis+unix://{}", self.dir.join(SOCKET).display())
    }

    /// The server's TCP port on 127.0.0.1 (the same after [`Redis::restart`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the socket, the append-only files, the log and pid file.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's log so far (every run of it), for a failing test's message.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join(LOG)).unwrap_or_default()
    }

    /// The server's process id; `None` after [`Redis::kill`] until [`Redis::restart`].
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until it is gone. The
    /// directory and its append-only file stay for [`Redis::restart`].
    pub fn kill(&mut self) -> io::Result<()> {
        let mut server = self.server.take().ok_or_else(not_running)?;
        server.kill()?;
        if wait_for(&mut server, EXIT_TIMEOUT)?.is_none() {
            self.server = Some(server);
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("redis-server did not exit within {EXIT_TIMEOUT:?} of SIGKILL"),
            ));
        }
        // A stale pid would point the reaper at whatever process gets the number next.
        match fs::remove_file(self.dir.join(PID_FILE)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Starts the server again on the same port, socket, directory and options (killing it
    /// first if it runs), so it replays its append-only file (without one it starts empty);
    /// returns once it answers PING.
    /// Fails, with [`io::ErrorKind::AddrInUse`], if another process took the port meanwhile.
    pub async fn restart(&mut self) -> io::Result<()> {
        if self.server.is_some() {
            self.kill()?;
        }
        let (binary, dir, port, options) =
            (self.binary.clone(), self.dir.clone(), self.port, self.options.clone());
        let server = tokio::task::spawn_blocking(move || launch(&binary, &dir, port, &options))
            .await
            .map_err(io::Error::other)??;
        self.server = Some(server);
        Ok(())
    }

    /// Freezes the server (SIGSTOP): connections are accepted by the kernel but not answered.
    pub fn stop_process(&self) -> io::Result<()> {
        self.signal("STOP")
    }

    /// Lets a frozen server go on (SIGCONT).
    pub fn cont_process(&self) -> io::Result<()> {
        self.signal("CONT")
    }

    /// The text of `INFO section`.
    pub fn info(&self, section: &str) -> io::Result<String> {
        self.command(&["INFO", section])
    }

    /// Sends one command over a new TCP connection and renders its reply as text: simple
    /// strings, integers and bulk strings as they are, errors with their leading `-`, nil as
    /// `(nil)`, arrays one element per line. Each step is bounded by 5 s.
    pub fn command(&self, args: &[&str]) -> io::Result<String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        stream.write_all(&request)?;
        read_reply(&mut BufReader::new(stream), 0)
    }

    /// Sends `signal` with the shell's `kill` (no unsafe code here). The server stays our
    /// unreaped child until [`Redis::kill`], so its pid cannot have gone to another process.
    fn signal(&self, signal: &str) -> io::Result<()> {
        let pid = self.pid().ok_or_else(not_running)?;
        let out = Command::new("/bin/sh")
            .args(["-c", r#"kill -s "$1" "$2""#, "kumo-kill", signal, &pid.to_string()])
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(io::Error::other(format!("kill -s {signal} {pid} failed: {}", err.trim())));
        }
        Ok(())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.reaper.finish(self.server.as_mut());
    }
}

fn not_running() -> io::Error {
    io::Error::other("redis-server is not running (killed; restart() starts it again)")
}

/// `redis-server` from PATH, else where Debian's package puts it.
fn binary() -> io::Result<PathBuf> {
    on_path("redis-server")
        .or_else(|| Some(PathBuf::from(FALLBACK)).filter(|p| is_executable(p)))
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, MISSING))
}

fn start_blocking(options: RedisOptions) -> io::Result<Redis> {
    let binary = binary()?;
    let tmp = tempfile::Builder::new().prefix("kumo-redis-").tempdir()?;
    // Absolute: Redis changes into `--dir` before it opens the log, pid file and socket.
    let dir = std::path::absolute(tmp.path())?;
    let _ = tmp.keep();
    // From here on the reaper owns the directory: it goes away with the server, or with this
    // process if it dies before the server is stopped. SIGKILL: the data is thrown away anyway,
    // and it stops a server frozen with SIGSTOP too.
    let reaper = match Reaper::spawn_with_signal(&dir, &dir.join(PID_FILE), "KILL") {
        Ok(r) => r,
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let mut redis = Redis { port: 0, dir, binary, options, server: None, reaper };
    let socket = redis.dir.join(SOCKET);
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(io::Error::other(format!(
            "the socket path {} is longer than {MAX_SOCKET_PATH} bytes: set a shorter TMPDIR",
            socket.display()
        )));
    }
    let mut attempt = 1;
    loop {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port();
        match launch(&redis.binary, &redis.dir, port, &redis.options) {
            Ok(server) => {
                redis.server = Some(server);
                redis.port = port;
                return Ok(redis);
            }
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && attempt < PORT_ATTEMPTS => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Starts `redis-server` on `port` and waits until it answers PING; stops it again if not.
fn launch(binary: &Path, dir: &Path, port: u16, options: &RedisOptions) -> io::Result<Child> {
    let log = dir.join(LOG);
    // Appended to by Redis itself too (`--logfile`), so a restart's lines follow the first run's.
    let log_file = OpenOptions::new().create(true).append(true).open(&log)?;
    let log_start = log_file.metadata()?.len();
    let mut cmd = Command::new(binary);
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--unixsocket")
        .arg(dir.join(SOCKET))
        .arg("--dir")
        .arg(dir)
        .args(["--save", "", "--appendonly", if options.appendonly { "yes" } else { "no" }])
        .args(["--appendfsync", options.appendfsync.as_str()])
        .args(["--daemonize", "no"])
        .arg("--logfile")
        .arg(&log)
        .arg("--pidfile")
        .arg(dir.join(PID_FILE));
    if let Some(policy) = &options.maxmemory_policy {
        cmd.args(["--maxmemory-policy", policy]);
    }
    let mut server = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        // Errors before the log file is open (a bad option) go to stderr.
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()?;
    match wait_ready(&mut server, port, &log, log_start) {
        Ok(()) => Ok(server),
        Err(e) => {
            let _ = server.kill();
            let _ = wait_for(&mut server, EXIT_TIMEOUT);
            Err(e)
        }
    }
}

/// Waits until the server answers PING with PONG (it answers `-LOADING` while it replays its
/// append-only file); fails at once if it exits.
fn wait_ready(server: &mut Child, port: u16, log: &Path, log_start: u64) -> io::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Some(status) = server.try_wait()? {
            let text = log_since(log, log_start, 20);
            let kind = if text.contains("Address already in use") {
                io::ErrorKind::AddrInUse
            } else {
                io::ErrorKind::Other
            };
            return Err(io::Error::new(kind, format!("redis-server exited at start ({status}):\n{text}")));
        }
        match ping(addr) {
            Ok(reply) if reply.starts_with("+PONG") => return Ok(()),
            Ok(reply) => last = reply,
            Err(_) => {} // not listening yet
        }
        sleep(POLL);
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "redis-server did not answer PING within {READY_TIMEOUT:?} (last reply {:?}):\n{}",
            last.trim_end(),
            log_since(log, log_start, 20)
        ),
    ))
}

/// One inline PING; the reply's first line.
fn ping(addr: SocketAddr) -> io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT))?;
    stream.write_all(b"PING\r\n")?;
    let mut line = String::new();
    BufReader::new(stream).take(MAX_LINE).read_line(&mut line)?;
    Ok(line)
}

/// The last `lines` lines the log got since it was `start` bytes long: this run's, not the
/// ones of an earlier run or attempt.
fn log_since(log: &Path, start: u64, lines: usize) -> String {
    let bytes = fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(bytes.get(start as usize..).unwrap_or_default());
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// One RESP2 reply, rendered as [`Redis::command`] says.
fn read_reply(r: &mut impl BufRead, depth: usize) -> io::Result<String> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, format!("redis reply: {what}"));
    let mut line = Vec::new();
    Read::take(&mut *r, MAX_LINE).read_until(b'\n', &mut line)?;
    let line = line.strip_suffix(b"\r\n").ok_or_else(|| invalid("truncated line".into()))?;
    let Some((&kind, rest)) = line.split_first() else { return Err(invalid("empty line".into())) };
    let rest = String::from_utf8_lossy(rest);
    match kind {
        b'+' | b':' => Ok(rest.into_owned()),
        b'-' => Ok(format!("-{rest}")),
        b'$' | b'*' => {
            let n: i64 = rest.parse().map_err(|_| invalid(format!("bad length {rest:?}")))?;
            let Ok(n) = usize::try_from(n) else { return Ok("(nil)".into()) };
            if kind == b'$' {
                if n > MAX_BULK {
                    return Err(invalid(format!("bulk string of {n} bytes")));
                }
                let mut bulk = vec![0; n + 2];
                r.read_exact(&mut bulk)?;
                bulk.truncate(n);
                return Ok(String::from_utf8_lossy(&bulk).into_owned());
            }
            if depth >= MAX_DEPTH {
                return Err(invalid(format!("arrays nested over {MAX_DEPTH} deep")));
            }
            let items = (0..n).map(|_| read_reply(r, depth + 1)).collect::<io::Result<Vec<_>>>()?;
            Ok(items.join("\n"))
        }
        _ => Err(invalid(format!("unexpected line {:?}", String::from_utf8_lossy(line)))),
    }
}
