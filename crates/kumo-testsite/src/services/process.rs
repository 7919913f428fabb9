//! Child-process helpers: finding binaries, running as an unprivileged user when root,
//! bounded waits, and a reaper that cleans up after a test process however it ends.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Where the base tools (`cat`, `head`, `sleep`, `rm`) are on any Unix.
const BASE_PATH: &str = "/usr/bin:/bin";

/// How often bounded waits look again.
const POLL: Duration = Duration::from_millis(20);

/// An executable named `name` on `PATH`.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

pub(crate) fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
}

/// Who runs a server: servers such as PostgreSQL refuse to run as root, so under root they run
/// as a system user through `setpriv` (or `runuser`), in a directory that user owns.
#[derive(Debug, Clone)]
pub(crate) enum RunAs {
    Me,
    User { name: String, uid: u32, gid: u32, via: PathBuf },
}

impl RunAs {
    /// Picks the user for servers in `dir` (a fresh directory of ours) and hands it the
    /// directory. The directory's owner tells who we are without any unsafe call.
    pub(crate) fn for_dir(dir: &Path, candidates: &[&str]) -> io::Result<RunAs> {
        if fs::metadata(dir)?.uid() != 0 {
            return Ok(RunAs::Me);
        }
        let passwd = fs::read_to_string("/etc/passwd")?;
        let (name, uid, gid) = candidates
            .iter()
            .find_map(|want| {
                passwd.lines().find_map(|line| {
                    let f: Vec<&str> = line.split(':').collect();
                    (f.len() > 3 && f[0] == *want && f[2] != "0")
                        .then(|| Some((f[0].to_string(), f[2].parse().ok()?, f[3].parse().ok()?)))
                        .flatten()
                })
            })
            .ok_or_else(|| {
                io::Error::other(format!(
                    "running as root and none of the users {candidates:?} exists to run the server"
                ))
            })?;
        let via = on_path("setpriv").or_else(|| on_path("runuser")).ok_or_else(|| {
            io::Error::other("running as root, and neither setpriv nor runuser is there to drop privileges")
        })?;
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
        Ok(RunAs::User { name, uid, gid, via })
    }

    /// A command that runs `program` as this user.
    pub(crate) fn command(&self, program: &Path) -> Command {
        match self {
            RunAs::Me => Command::new(program),
            RunAs::User { name, uid, gid, via } => {
                let mut cmd = Command::new(via);
                if via.ends_with("setpriv") {
                    // setpriv execs the program, so the child is the server itself.
                    cmd.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).arg("--clear-groups");
                } else {
                    cmd.arg("-u").arg(name);
                }
                cmd.arg("--").arg(program);
                cmd
            }
        }
    }
}

/// Waits up to `timeout` for `child` to exit; `None` if it is still running.
pub(crate) fn wait_for(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        sleep(POLL);
    }
}

/// `PATH` with the base directories after it.
fn with_base_path() -> std::ffi::OsString {
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if !path.is_empty() {
        path.push(":");
    }
    path.push(BASE_PATH);
    path
}

/// The last `lines` lines of a log file, for error messages.
pub(crate) fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A shell that waits for our end of a pipe to close (we drop it, or the test process ends in
/// any way, even killed), then stops the server whose `postmaster.pid`-style pid file is given
/// (SIGQUIT or the signal chosen, then SIGKILL after 10 s) and removes `dir`. A server shared
/// by a test file's tests lives in a static that is never dropped: this is what cleans up
/// after it.
pub(crate) struct Reaper {
    child: Child,
    stdin: Option<ChildStdin>,
}

const REAPER_SCRIPT: &str = r#"
cat >/dev/null
if [ -f "$2" ]; then
  pid=$(head -n 1 "$2")
  kill -"$3" "$pid" 2>/dev/null
  i=0
  while [ -f "$2" ] && kill -0 "$pid" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if [ -f "$2" ]; then kill -KILL "$pid" 2>/dev/null; fi
fi
rm -rf "$1"
"#;

impl Reaper {
    /// Stops the server with SIGQUIT: PostgreSQL's immediate shutdown.
    pub(crate) fn spawn(dir: &Path, pid_file: &Path) -> io::Result<Reaper> {
        Reaper::spawn_with_signal(dir, pid_file, "QUIT")
    }

    /// Stops the server with `signal` (a name such as `KILL`), for servers that SIGQUIT would
    /// not stop quickly or would make dump core.
    pub(crate) fn spawn_with_signal(dir: &Path, pid_file: &Path, signal: &str) -> io::Result<Reaper> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(REAPER_SCRIPT)
            .arg("kumo-reaper")
            .arg(dir)
            .arg(pid_file)
            .arg(signal)
            // It outlives us and needs only the base tools: make sure it finds them.
            .env("PATH", with_base_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group: a Ctrl-C meant for the tests must not kill the cleaner.
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Reaper { child, stdin })
    }

    /// Starts the clean-up now and waits (bounded) until it is done, reaping `server` (our
    /// child, or its `runuser` parent) meanwhile so its exit is seen.
    pub(crate) fn finish(&mut self, server: Option<&mut Child>) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.flush();
        }
        let mut server = server;
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Some(s) = server.as_deref_mut()
                && matches!(s.try_wait(), Ok(Some(_)) | Err(_))
            {
                server = None;
            }
            if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                break;
            }
            sleep(POLL);
        }
        if let Some(s) = server {
            let _ = s.kill();
            let _ = wait_for(s, Duration::from_secs(5));
        }
    }
}
