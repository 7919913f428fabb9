//! Starting the browser as a process of kumo's own: its own process group (killed whole when
//! kumo lets it go), a parent-death signal (so it goes too when kumo is killed with `-9`), a
//! fresh profile directory, and the flags a closed network needs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::RenderError;

/// Where the browser is looked for when none is named: Debian's binaries themselves first (the
/// `/usr/bin` names are shell wrappers that do not `exec`, so killing them leaves the browser).
const KNOWN: [&str; 2] = ["/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"];
const ON_PATH: [&str; 4] = ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"];

/// The flags every browser kumo starts gets (with its profile, window size, and
/// `--no-sandbox` as root).
pub const FLAGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    // Without these the browser calls home at every start and on a closed network floods
    // refused connections.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
    "--hide-scrollbars",
];

/// How long a starting browser may take to say where its DevTools listen.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The browser to run: `configured`, or the first one found.
pub fn find_browser(configured: Option<&Path>) -> Result<PathBuf, RenderError> {
    if let Some(path) = configured {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(RenderError::NoBrowser(format!("the browser {} does not exist", path.display())))
        };
    }
    let on_path =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    KNOWN
        .iter()
        .map(PathBuf::from)
        .chain(ON_PATH.iter().flat_map(|name| on_path.iter().map(move |dir| dir.join(name))))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            RenderError::NoBrowser(
                "rendering needs Chromium: none found (apt-get install chromium-headless-shell, \
                 or name one with --browser PATH)"
                    .into(),
            )
        })
}

/// A running browser. Dropped, it kills its whole process group.
pub(crate) struct BrowserProcess {
    child: Child,
    group: Option<Pid>,
    /// The profile: a directory of its own, deleted after the browser is gone.
    _profile: tempfile::TempDir,
}

impl BrowserProcess {
    /// Starts `exe` and returns it with the address of its DevTools websocket.
    pub async fn start(exe: &Path, viewport: (u32, u32)) -> Result<(Self, String), RenderError> {
        let failed = |message: String| RenderError::Launch { browser: exe.display().to_string(), message };
        let profile = tempfile::Builder::new()
            .prefix("kumo-browser-")
            .tempdir()
            .map_err(|e| failed(format!("cannot make its profile directory: {e}")))?;
        let mut args: Vec<String> = FLAGS.iter().map(|f| f.to_string()).collect();
        args.push("--remote-debugging-port=0".into());
        // Chromium refuses to run as root with its sandbox on.
        if rustix::process::geteuid().is_root() {
            args.push("--no-sandbox".into());
        }
        args.push(format!("--window-size={},{}", viewport.0, viewport.1));
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push("about:blank".into());
        // setpriv (util-linux) execs the browser with a parent-death signal: kumo killed
        // with -9 takes the browser with it. Without it, only a clean exit does.
        let setpriv = Path::new("/usr/bin/setpriv");
        let mut cmd = if setpriv.is_file() {
            let mut c = Command::new(setpriv);
            c.args(["--pdeathsig", "KILL", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| failed(e.to_string()))?;
        let group = child.id().and_then(|id| Pid::from_raw(id as i32));
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut process = BrowserProcess { child, group, _profile: profile };
        let mut lines = BufReader::new(stderr).lines();
        let mut said = Vec::new();
        let found = tokio::time::timeout(START_TIMEOUT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("ws://") {
                    return Some(line[at..].trim().to_string());
                }
                said.push(line);
            }
            None
        })
        .await;
        let ws = match found {
            Ok(Some(ws)) => ws,
            Ok(None) => {
                let status = process.child.wait().await.map(|s| s.to_string()).unwrap_or_default();
                return Err(failed(format!("it exited ({status}): {}", said.join(" | "))));
            }
            Err(_) => return Err(failed(format!("it did not start within {START_TIMEOUT:?}"))),
        };
        // The browser writes to stderr all along: read it, or it blocks once the pipe is full.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "kumo_render::browser", "{line}");
            }
        });
        Ok((process, ws))
    }

    /// The process group (the main process's id).
    pub fn group(&self) -> Option<u32> {
        self.group.map(|g| g.as_raw_nonzero().get() as u32)
    }

    /// Whether the browser process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        // The renderers and helpers the browser started are in its group: all go at once.
        if let Some(group) = self.group {
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
        let _ = self.child.start_kill();
    }
}
