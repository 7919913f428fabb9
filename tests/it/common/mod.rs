//! What the real binary's integration tests share: running `kumo` with a time guard.

pub mod browser;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

pub const KUMO: &str = env!("CARGO_BIN_EXE_kumo");

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The test data: the repository's, or the copy `KUMO_TESTDATA` names.
pub fn testdata() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA").map(PathBuf::from).unwrap_or_else(|| root().join("testdata"))
}

/// A synthetic site of `pages` pages of about 2 KB on 127.0.0.1, and its ground truth.
pub async fn small_site(pages: usize) -> (kumo_testsite::TestServer, kumo_testsite::GroundTruth) {
    let site = kumo_testsite::SiteConfig { pages, page_bytes: 2_000, ..Default::default() };
    let truth = site.ground_truth();
    let server = kumo_testsite::ServerBuilder::new().synthetic(site).start().await.unwrap();
    (server, truth)
}

/// A spider file of one site, "shop", from `seed`: a "product" model with the SKU (required)
/// and the CSS selector `second` as `name` (e.g. `("price", "span.price")`), written to
/// `products.jsonl`.
pub fn shop_spider(seed: &str, second: (&str, &str)) -> String {
    format!(
        r#"
[[site]]
name = "shop"
seeds = ["{seed}"]
output = {{ jsonl = "products.jsonl" }}

[[site.model]]
name = "product"
root = {{ css = "div.product" }}
fields = [
  {{ name = "sku", css = "span.sku", required = true }},
  {{ name = "{}", css = "{}" }},
]
"#,
        second.0, second.1
    )
}

/// Runs `kumo ARGS` in `cwd` with a 60 s guard.
pub async fn kumo_in(cwd: &Path, args: &[&str]) -> Output {
    run_guarded(tokio::process::Command::new(KUMO).args(args), cwd).await
}

/// Runs `kumo ARGS` in `cwd` with a 60 s guard, allowed at most `files` open files.
pub async fn kumo_with_open_files(cwd: &Path, args: &[&str], files: u32) -> Output {
    run_guarded(&mut with_open_files(args, files), cwd).await
}

/// Runs `command` in `cwd` to its end, within 60 s.
async fn run_guarded(command: &mut tokio::process::Command, cwd: &Path) -> Output {
    let child = command.current_dir(cwd).kill_on_drop(true).output();
    tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("kumo finished in 60 s")
        .expect("kumo ran")
}

/// `kumo ARGS` with at most `files` open files (soft and hard limit, so kumo cannot raise
/// it), through `sh -c 'ulimit -n FILES && exec kumo ARGS'`.
fn with_open_files(args: &[&str], files: u32) -> tokio::process::Command {
    let mut sh = tokio::process::Command::new("sh");
    sh.arg("-c").arg(format!("ulimit -n {files} && exec \"$0\" \"$@\"")).arg(KUMO).args(args);
    sh
}

/// Runs `kumo ARGS` with a 60 s guard, in a fresh working directory (where the default
/// crawl state goes).
pub async fn kumo(args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    kumo_in(cwd.path(), args).await
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Starts `kumo ARGS` in `cwd` in the background, its output captured.
pub fn spawn_in(cwd: &Path, args: &[&str]) -> tokio::process::Child {
    captured(tokio::process::Command::new(KUMO).args(args), cwd)
}

/// Starts `command` in `cwd` in the background, its output captured, killed when dropped.
fn captured(command: &mut tokio::process::Command, cwd: &Path) -> tokio::process::Child {
    command
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kumo starts")
}

/// `kumo crawl URL` with `state` (`--memory`, or `--state DIR`) into `pages.jsonl`, one
/// request at a time, `delay_ms` apart, and the control server on a free port: a crawl slow
/// enough to watch and steer.
pub fn listened_crawl<'a>(url: &'a str, state: &[&'a str], delay_ms: &'a str) -> Vec<&'a str> {
    let mut args = vec!["crawl", url];
    args.extend_from_slice(state);
    args.extend(["-o", "pages.jsonl", "--no-progress", "--per-host", "1", "--delay-ms", delay_ms]);
    args.extend(["--listen", "127.0.0.1:0"]);
    args
}

/// Waits for a background `kumo` to end, with a 60 s guard.
pub async fn finish(child: tokio::process::Child) -> Output {
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kumo ended within 60 s")
        .expect("kumo ran")
}

/// Sends `signal` (`INT`, `TERM`) to a background `kumo`.
pub fn send_signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("still running").to_string();
    let ok = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap();
    assert!(ok.success(), "kill -{signal} {pid}");
}

/// Checks `cond` every 10 ms until it holds; panics after `limit`.
pub async fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "gave up after {limit:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The exit code of a finished `kumo` (`None` if a signal ended it).
pub fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// A background `kumo` whose standard error is read as it comes, so a test can wait for a
/// line (`stopping: …`) before acting.
pub struct Watched {
    pub child: tokio::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Watched {
    pub fn spawn(cwd: &Path, args: &[&str]) -> Self {
        Self::watch(spawn_in(cwd, args))
    }

    /// As [`Watched::spawn`], with at most `files` open files.
    pub fn spawn_with_open_files(cwd: &Path, args: &[&str], files: u32) -> Self {
        Self::watch(captured(&mut with_open_files(args, files), cwd))
    }

    fn watch(mut child: tokio::process::Child) -> Self {
        use tokio::io::AsyncBufReadExt;
        let pipe = child.stderr.take().expect("stderr piped");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        let reader = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Watched { child, stderr, reader }
    }

    /// Standard error so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Where its control server (`--listen`) listens, once it has said so (20 s at most).
    pub async fn control_addr(&self) -> std::net::SocketAddr {
        wait_until(Duration::from_secs(20), "the control address", || {
            self.stderr().contains("control: http://")
        })
        .await;
        let err = self.stderr();
        err.split("control: http://").nth(1).and_then(|r| r.split('/').next()).unwrap().parse().unwrap()
    }

    /// Waits (60 s at most) for the process to end; returns its exit status and all of its
    /// standard error.
    pub async fn finish(mut self) -> (std::process::ExitStatus, String) {
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("kumo ended within 60 s")
            .expect("kumo ran");
        let _ = tokio::time::timeout(Duration::from_secs(10), &mut self.reader).await;
        (status, self.stderr())
    }
}

/// A tool of the repository's Python environment (`KUMO_PYTHON_BIN`, else `.venv/bin`):
/// warcio and cdxj-indexer, which `scripts/test.sh` installs.
pub fn python_tool(name: &str) -> std::path::PathBuf {
    let bin = std::env::var_os("KUMO_PYTHON_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin"));
    let tool = bin.join(name);
    assert!(
        tool.is_file(),
        "{} is missing: scripts/test.sh installs it (pip install warcio cdxj-indexer)",
        tool.display()
    );
    tool
}

/// Runs a Python tool (see [`python_tool`]); its standard output, or a panic with what it said.
pub fn run_tool(name: &str, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new(python_tool(name)).args(args).output().expect("the tool runs");
    assert!(
        out.status.success(),
        "{name} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The records of a WARC file as `warcio index -f FIELDS` lists them.
pub fn warc_index(file: &Path, fields: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let out = run_tool("warcio", &["index", "-f", fields, file.to_str().expect("a UTF-8 path")]);
    String::from_utf8(out)
        .expect("UTF-8 JSON lines")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// One HTTP/1.1 request to a control server (10 s at most): its status and body.
pub async fn control_call(addr: std::net::SocketAddr, method: &str, path: &str) -> (u16, String) {
    control_request(addr, method, path, &[], "").await.expect("the control server answers")
}

/// One HTTP/1.1 request to a control server with `headers` and `body` (10 s at most): its
/// status and body, or the error that ended it (a connection closed without an answer is
/// `UnexpectedEof`).
pub async fn control_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("Connection: close\r\n\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).await?;
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await??;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok());
    let Some(status) = status else { return Err(std::io::ErrorKind::UnexpectedEof.into()) };
    Ok((status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()))
}

/// The crawl's state as a control server's `/api/status` says it (`running`, `paused`, …).
pub async fn control_state(addr: std::net::SocketAddr) -> String {
    let body = control_call(addr, "GET", "/api/status").await.1;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    v["state"].as_str().unwrap_or_default().to_string()
}

/// Waits (10 s at most, looking every 50 ms) until a control server says the crawl is `want`.
pub async fn wait_for_state(addr: std::net::SocketAddr, want: &str) {
    let start = Instant::now();
    loop {
        let now = control_state(addr).await;
        if now == want {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the crawl never became {want}: {now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
