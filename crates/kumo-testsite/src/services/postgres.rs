//! A throwaway PostgreSQL server for tests: `initdb` into a temporary directory, `postgres`
//! on a free loopback port, trust authentication for the `postgres` user.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let pg = kumo_testsite::services::Postgres::start().await?;
//! // connect to pg.url(): postgres://postgres@127.0.0.1:PORT/postgres
//! drop(pg); // stops the server and removes its directory
//! # Ok(())
//! # }
//! ```

use std::fs::{self, File};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::services::process::{Reaper, RunAs, is_executable, on_path, tail, wait_for};

/// initdb writes a few dozen MB; on a loaded two-core machine that can take a while.
const INITDB_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a started server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Attempts at a free port: another process may take the one we picked before we bind it.
const PORT_ATTEMPTS: usize = 5;

const MISSING: &str = "PostgreSQL server binaries (initdb, postgres) are neither on PATH nor under \
     /usr/lib/postgresql/*/bin: run scripts/test.sh, which installs them (apt-get install postgresql)";

/// A running PostgreSQL server; dropping it stops the server and removes its files.
pub struct Postgres {
    port: u16,
    dir: PathBuf,
    server: Option<Child>,
    reaper: Reaper,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres").field("port", &self.port).field("dir", &self.dir).finish()
    }
}

impl Postgres {
    /// Initialises a cluster and starts a server on a free port of 127.0.0.1. Fails (never
    /// skips) when the binaries are missing, saying how to install them. Takes about a second.
    pub async fn start() -> io::Result<Postgres> {
        tokio::task::spawn_blocking(start_blocking).await.map_err(io::Error::other)?
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres` (no password: trust authentication).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The server's TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the cluster (`data/`), socket and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's log so far, for a failing test's message.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.reaper.finish(self.server.as_mut());
    }
}

/// `initdb` and `postgres`, from PATH or the newest `/usr/lib/postgresql/N/bin` (Debian keeps
/// them there, off PATH).
fn binaries() -> io::Result<(PathBuf, PathBuf)> {
    if let Some(initdb) = on_path("initdb") {
        // The server from the same directory, so the versions match.
        let beside = initdb.with_file_name("postgres");
        if is_executable(&beside) {
            return Ok((initdb, beside));
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| is_executable(&bin.join("initdb")) && is_executable(&bin.join("postgres")))
        .collect();
    versions.sort();
    let (_, bin) = versions.pop().ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, MISSING))?;
    Ok((bin.join("initdb"), bin.join("postgres")))
}

fn start_blocking() -> io::Result<Postgres> {
    let (initdb, postgres) = binaries()?;
    let dir = tempfile::Builder::new().prefix("kumo-pg-").tempdir()?.keep();
    let data = dir.join("data");
    // From here on the reaper owns the directory: it goes away with the server, or with this
    // process if it dies before the server is stopped.
    let reaper = match Reaper::spawn(&dir, &data.join("postmaster.pid")) {
        Ok(r) => r,
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let mut pg = Postgres { port: 0, dir: dir.clone(), server: None, reaper };
    let user = RunAs::for_dir(&dir, &["postgres", "nobody"])?;

    let log = dir.join("initdb.log");
    // One open file for both streams, so their lines interleave instead of overwriting.
    let log_file = File::create(&log)?;
    let mut init = user
        .command(&initdb)
        .args(["-D".as_ref(), data.as_os_str()])
        .args(["-U", "postgres", "-A", "trust", "--no-locale", "-E", "UTF8", "--no-sync"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()?;
    match wait_for(&mut init, INITDB_TIMEOUT)? {
        Some(status) if status.success() => {}
        Some(status) => {
            return Err(io::Error::other(format!("initdb failed ({status}):\n{}", tail(&log, 20))));
        }
        None => {
            let _ = init.kill();
            let _ = init.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("initdb took over {INITDB_TIMEOUT:?}"),
            ));
        }
    }

    let log = dir.join("postgres.log");
    let mut attempt = 1;
    loop {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port();
        let log_file = File::create(&log)?;
        let server = user
            .command(&postgres)
            .args(["-D".as_ref(), data.as_os_str(), "-k".as_ref(), dir.as_os_str()])
            .args(["-p", &port.to_string()])
            // Throwaway data: durability costs time and buys nothing.
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()?;
        pg.server = Some(server);
        pg.port = port;
        match wait_ready(&mut pg, &data, &log) {
            Ok(()) => return Ok(pg),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && attempt < PORT_ATTEMPTS => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Waits until the server says it is ready (the status line of `postmaster.pid`, as pg_ctl
/// reads it) and takes a TCP connection; fails at once if it exits.
fn wait_ready(pg: &mut Postgres, data: &Path, log: &Path) -> io::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let pid_file = data.join("postmaster.pid");
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, pg.port));
    while Instant::now() < deadline {
        let Some(server) = pg.server.as_mut() else { break };
        if let Some(status) = server.try_wait()? {
            pg.server = None;
            let text = tail(log, 20);
            let kind = if text.contains("Address already in use") {
                io::ErrorKind::AddrInUse
            } else {
                io::ErrorKind::Other
            };
            return Err(io::Error::new(kind, format!("postgres exited at start ({status}):\n{text}")));
        }
        let ready = fs::read_to_string(&pid_file)
            .is_ok_and(|s| s.lines().nth(7).is_some_and(|l| l.trim() == "ready"));
        if ready && TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
            return Ok(());
        }
        sleep(Duration::from_millis(20));
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("postgres did not accept connections within {READY_TIMEOUT:?}:\n{}", tail(log, 20)),
    ))
}
