//! Runs a console block's steps as a user's shell would: each `$ command` with `sh` in the
//! block's own folder, a command ending in `&` as a background job whose first lines are its
//! output, `kill -SIGNAL %N` as a signal to job N, whose last lines are then its output, and
//! `wait %N…` as a wait for those jobs to end.
//!
//! The docs' ports are replaced with free ones of this machine (the quotes site's, 8000, with
//! the address of the site the test serves), so blocks never collide with each other or with
//! other tests.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regex::{Captures, Regex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::common::KUMO;

/// The docs' port for the quotes site the test serves.
const DOCS_SITE_PORT: u16 = 8000;

/// The longest one command of an example may take, and a job to start or to end.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// Where a port is named in a command: an address, `--port N`, redis-cli's `-p N`.
fn port_pattern() -> Regex {
    Regex::new(r"(127\.0\.0\.1:|--port |-p )(\d{2,5})\b").expect("a pattern")
}

/// The docs' ports of a block, each with the free port of this machine it runs on.
pub fn ports_for(commands: &[&str], site_port: u16) -> HashMap<u16, u16> {
    let pattern = port_pattern();
    // The site's port is mapped even when no command names it: an example file may.
    let mut ports = HashMap::from([(DOCS_SITE_PORT, site_port)]);
    for command in commands {
        for found in pattern.captures_iter(command) {
            let docs: u16 = found[2].parse().expect("a port number");
            ports.entry(docs).or_insert_with(|| if docs == DOCS_SITE_PORT { site_port } else { free_port() });
        }
    }
    ports
}

/// A port nothing listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// Maps each docs port of `text` that the block has not mapped to a free port, where nothing
/// listens: an example file's server that the block does not start is then refused, never
/// whatever this machine happens to run on the docs' port.
pub fn map_unknown_ports(text: &str, ports: &mut HashMap<u16, u16>) {
    for found in port_pattern().captures_iter(text) {
        let docs: u16 = found[2].parse().expect("a port number");
        ports.entry(docs).or_insert_with(free_port);
    }
}

/// `command` with the docs' ports replaced by this run's.
pub fn localized(command: &str, ports: &HashMap<u16, u16>) -> String {
    port_pattern()
        .replace_all(command, |c: &Captures| {
            let docs: u16 = c[2].parse().expect("a port number");
            format!("{}{}", &c[1], ports.get(&docs).copied().unwrap_or(docs))
        })
        .into_owned()
}

/// Learns the ports a job chose itself (`kumo testsite --hostile` takes no `--port`): where
/// the page shows an address in a job's output and the job printed one at the same place,
/// the page's port stands for the job's in the steps that follow.
pub fn learn_ports(expected: &[String], printed: &str, ports: &mut HashMap<u16, u16>) {
    let address = Regex::new(r"127\.0\.0\.1:(\d+)").expect("a pattern");
    for (shown, line) in expected.iter().zip(printed.lines()) {
        for (docs, real) in address.captures_iter(shown).zip(address.captures_iter(line)) {
            ports.insert(docs[1].parse().expect("a port"), real[1].parse().expect("a port"));
        }
    }
}

/// A background job of a block: its process group, what it has printed so far, and the task
/// that reads its output (it ends when the job's output closes).
struct Job {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
}

/// The shell of one block: its folder and its background jobs.
pub struct Shell<'a> {
    dir: &'a Path,
    jobs: Vec<Job>,
}

impl<'a> Shell<'a> {
    pub fn new(dir: &'a Path) -> Self {
        Shell { dir, jobs: Vec::new() }
    }

    /// Runs one step; what it printed (both streams, in order).
    pub async fn step(&mut self, command: &str, expected_lines: usize) -> String {
        let kill = Regex::new(r"^kill -(\w+) %(\d+)$").expect("a pattern");
        if let Some(c) = kill.captures(command) {
            return self.signal(&c[1], c[2].parse().expect("a job number")).await;
        }
        if let Some(jobs) = command.strip_prefix("wait %") {
            for number in jobs.split(" %") {
                self.wait(number.parse().expect("a job number")).await;
            }
            return String::new();
        }
        match command.strip_suffix('&') {
            Some(job) => self.start(job.trim_end(), expected_lines).await,
            None => self.run(command).await,
        }
    }

    fn command(&self, command: &str) -> Command {
        let bin = Path::new(KUMO).parent().expect("kumo's folder");
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg(format!("exec 2>&1; {command}"))
            .current_dir(self.dir)
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .process_group(0)
            .kill_on_drop(true);
        sh
    }

    async fn run(&self, command: &str) -> String {
        let child = self.command(command).output();
        let out = tokio::time::timeout(COMMAND_LIMIT, child)
            .await
            .unwrap_or_else(|_| panic!("`{command}` ends within {COMMAND_LIMIT:?}"))
            .expect("sh runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts a job; returns once it printed the lines the page shows for it and, when it
    /// was given `--port N`, once that port takes connections.
    async fn start(&mut self, command: &str, expected_lines: usize) -> String {
        let mut child = self.command(command).stdout(Stdio::piped()).spawn().expect("sh starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let mut reader = BufReader::new(child.stdout.take().expect("piped")).lines();
        let sink = lines.clone();
        let reader = tokio::spawn(async move {
            while let Ok(Some(line)) = reader.next_line().await {
                sink.lock().expect("not poisoned").push(line);
            }
        });
        let started = Instant::now();
        let listens =
            Regex::new(r"--port (\d+)").expect("a pattern").captures(command).map(|c| c[1].to_string());
        loop {
            let printed = lines.lock().expect("not poisoned").len() >= expected_lines;
            let ready = match &listens {
                Some(port) => tokio::net::TcpStream::connect(format!("127.0.0.1:{port}")).await.is_ok(),
                None => true,
            };
            if printed && ready {
                break;
            }
            assert!(started.elapsed() < COMMAND_LIMIT, "`{command}` did not start within {COMMAND_LIMIT:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let shown: Vec<String> = lines.lock().expect("not poisoned")[..expected_lines].to_vec();
        self.jobs.push(Job { child, lines, reader });
        shown.join("\n")
    }

    /// Sends `signal` to job `number` (counted from 1, as the shell does) and waits for it to
    /// end; what it printed from then on. (What it printed before came out earlier, in a
    /// terminal among other commands' output, and is not compared.)
    async fn signal(&mut self, signal: &str, number: usize) -> String {
        let job = self.jobs.get_mut(number - 1).unwrap_or_else(|| panic!("no job %{number}"));
        let before = job.lines.lock().expect("not poisoned").len();
        let group = format!("-{}", job.child.id().expect("the job runs"));
        let sent = std::process::Command::new("kill").args([&format!("-{signal}"), "--", &group]).status();
        assert!(sent.expect("kill runs").success(), "kill -{signal} %{number}");
        tokio::time::timeout(COMMAND_LIMIT, job.child.wait())
            .await
            .unwrap_or_else(|_| panic!("job %{number} ends within {COMMAND_LIMIT:?} of kill -{signal}"))
            .expect("wait for the job");
        // The job's last lines are in once its output closes, which follows its exit.
        let _ = tokio::time::timeout(COMMAND_LIMIT, &mut job.reader).await;
        job.lines.lock().expect("not poisoned")[before..].join("\n")
    }

    /// Waits for job `number` to end by itself. What it printed is not shown: in a terminal
    /// it comes out among the other commands' output, wherever it falls.
    async fn wait(&mut self, number: usize) {
        let job = self.jobs.get_mut(number - 1).unwrap_or_else(|| panic!("no job %{number}"));
        tokio::time::timeout(COMMAND_LIMIT, job.child.wait())
            .await
            .unwrap_or_else(|_| panic!("job %{number} ends within {COMMAND_LIMIT:?}"))
            .expect("wait for the job");
    }
}

impl Drop for Shell<'_> {
    /// A block's jobs end with it: each job's whole process group is killed.
    fn drop(&mut self) {
        for job in &self.jobs {
            if let Some(pid) = job.child.id() {
                let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
            }
        }
    }
}
