//! The command line, as clap sees it (raw values; `crawl.rs` resolves them).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "kumo", version, about = "A fast, lean, resumable web crawler")]
pub struct Cli {
    /// More log output (-v: info, -vv: debug, -vvv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors on standard error: no logs below error, no summary, no status lines.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// How log lines are written on standard error: text (coloured only on a terminal) or
    /// json (one object per line).
    #[arg(long, value_enum, global = true, default_value = "text", value_name = "FORMAT")]
    pub log_format: super::logging::LogFormat,
    /// Threads that run the crawl (default: one per CPU). Workers sharing one machine
    /// (`--redis`) run best with their share of its CPUs each: two on two CPUs, `--threads 1`.
    #[arg(long, global = true, env = "KUMO_THREADS", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Crawl from one or more start URLs, writing one JSON line per fetched page.
    #[command(after_help = super::outcome::EXIT_STATUS_HELP)]
    Crawl(Box<CrawlArgs>),
    /// Run the sites of spider files on their schedules ([site.schedule]).
    ///
    /// Until each has run its `times` (forever if one has none) or Ctrl-C. Every run after a
    /// site's first asks for its known pages again and writes only what changed; a run cut
    /// short goes on when kumo run starts again.
    #[command(after_help = super::outcome::EXIT_STATUS_HELP)]
    Run(RunArgs),
    /// When the sites of spider files run next, and what their schedules have done.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Serve the quotes site in testdata/ on 127.0.0.1 and crawl it with
    /// examples/quotes.toml: the quick start in one command, from a clone of the repository.
    Demo(DemoArgs),
    /// Crawl the built-in synthetic site on 127.0.0.1 and report speed and memory.
    Bench(BenchArgs),
    /// Serve the built-in test site (synthetic, or a directory) on 127.0.0.1 until Ctrl-C.
    Testsite(TestsiteArgs),
    /// Fetch one page and show what a spider file's rules and models make of it.
    Parse(ParseArgs),
    /// Fetch one page and try selectors on it, one command per line (type help).
    Shell(ShellArgs),
    /// Inspect or change the queue of a stopped crawl (its state directory).
    #[command(subcommand)]
    Frontier(FrontierCommand),
    /// List, export or re-queue the requests of a stopped crawl that failed for good.
    #[command(subcommand)]
    Failures(FailuresCommand),
    /// Check a crawl's state directory.
    #[command(subcommand)]
    State(StateCommand),
}

#[derive(Subcommand, Debug)]
pub enum ScheduleCommand {
    /// Each site: its schedule, runs so far, last run and next run (or that one is running).
    List(ScheduleListArgs),
}

#[derive(Args, Debug)]
pub struct ScheduleListArgs {
    /// Spider files, or folders of them (every *.toml in a folder), as given to kumo run.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,
    /// The state folder given to kumo run (default: .kumo/state/).
    #[arg(long = "state", value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Replaces `{base}` in the files' seeds, as given to kumo run.
    #[arg(long, value_name = "URL")]
    pub seed_base: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Spider files, or folders of them (every *.toml in a folder). Site names must differ.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,
    /// Where the sites' states go, one folder per site (default: .kumo/state/); each keeps
    /// its schedule's record (SCHEDULE.json) too.
    #[arg(long = "state", value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// fsync every commit, so the states also survive a power loss (slower).
    #[arg(long, conflicts_with = "redis")]
    pub fsync: bool,
    /// Append one JSON line per finished run to this file: the site, the run's number, its
    /// start and end, and its summary.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// Replaces `{base}` in the files' seeds.
    #[arg(long, value_name = "URL")]
    pub seed_base: Option<String>,
    #[command(flatten)]
    pub script: super::script_args::ScriptArgs,
    /// Also trust the certificate authorities in this PEM file, beside the system's.
    #[arg(long = "ca-file", value_name = "FILE")]
    pub ca_files: Vec<PathBuf>,
    /// Accept any TLS certificate, unverified: only for hosts you control.
    #[arg(long)]
    pub insecure: bool,
    #[command(flatten)]
    pub listen: ListenArgs,
    /// A run whose share of requests failed for good exceeds this percentage ends the daemon
    /// with status 4 when it exits.
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
    pub failure_threshold: f64,
    #[command(flatten)]
    pub redis: super::redis_args::RedisArgs,
    /// Crawl settings over every site's own (as `kumo crawl FILE.toml` takes them).
    #[command(flatten)]
    pub settings: kumo_settings::SettingArgs,
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// Whether a state directory is sound: the checks a crawl makes when it opens one (its
    /// files, its journal, every table block, the items not yet written out), made on a copy
    /// beside it so the state itself is only read. Exits 1 when it is damaged or in use.
    Check(StateCheckArgs),
}

#[derive(Subcommand, Debug)]
pub enum FrontierCommand {
    /// What is queued (by host, priority and depth), hosts, failures, seen URLs, counters.
    Stats(FrontierStatsArgs),
    /// Every queued request as one JSON line, in queue order.
    Export(ExportArgs),
    /// Queue requests from JSON lines (as export writes them, or {"url": ...}) or bare URLs,
    /// one per line; already seen ones are skipped. A bad line queues nothing.
    Import(ImportArgs),
    /// The pages kept for re-crawls (--recrawl, kumo run): each one's URL, when it was last
    /// asked for, its re-visit interval and when it is due again.
    Pages(PagesArgs),
    /// The hosts: paused ones (their server asked, with Retry-After) and the busiest, with
    /// their queues and delays; --unpause HOST or --all lifts pauses.
    Hosts(HostsArgs),
}

#[derive(Subcommand, Debug)]
pub enum FailuresCommand {
    /// Every failure: URL, error kind, attempts, last status and message.
    List(FailuresListArgs),
    /// Every failure as one JSON line: its record and its request.
    Export(ExportArgs),
    /// Put failures back in the queue, their retry count reset; a later crawl with the same
    /// --state fetches them again.
    Requeue(RequeueArgs),
}

/// The state directory of a stopped crawl (never created by these commands), or a crawl
/// kept in Redis.
#[derive(Args, Debug, Clone)]
pub struct StateDir {
    /// The crawl's state directory (as given to `kumo crawl --state`, or under .kumo/state/).
    #[arg(long = "state", value_name = "DIR", required_unless_present = "redis")]
    pub dir: Option<PathBuf>,
    /// A crawl kept in Redis (`kumo crawl --redis URL`), with --crawl NAME, instead of a state
    /// directory; it may be running.
    #[arg(long, value_name = "URL", requires = "crawl", conflicts_with = "dir")]
    pub redis: Option<String>,
    /// With --redis: the crawl's name (as its workers say when they join it).
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub crawl: Option<String>,
}

impl StateDir {
    /// The state directory, or an error saying which commands read a crawl in Redis.
    pub fn dir(&self) -> anyhow::Result<&std::path::Path> {
        self.dir.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "this command reads a crawl's state directory (--state DIR), not a crawl in Redis"
            )
        })
    }

    /// A handle on the crawl in Redis, with `--redis URL --crawl NAME`.
    pub async fn redis(&self) -> anyhow::Result<Option<kumo_store_redis::RedisFrontier>> {
        match (&self.redis, &self.crawl) {
            (Some(url), Some(crawl)) => Ok(Some(kumo_store_redis::RedisFrontier::inspect(url, crawl).await?)),
            _ => Ok(None),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct PagesArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// One JSON object per page instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct StateCheckArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FrontierStatsArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many of the busiest hosts to list.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
}

#[derive(Args, Debug, Clone)]
pub struct HostsArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Lift this host's pause (`host[:port]`, as listed; repeatable).
    #[arg(long = "unpause", value_name = "HOST", conflicts_with = "all")]
    pub unpause: Vec<String>,
    /// Lift every host's pause.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many of the busiest hosts to list besides the paused ones.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Where the JSON lines go: a file, or - for standard output.
    #[arg(short, long, default_value = "-", value_name = "FILE|-")]
    pub output: String,
}

#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// The requests: a file, or - for standard input.
    #[arg(value_name = "FILE|-")]
    pub input: String,
    /// Create the state directory if it holds no state yet (to move a queue to a new state).
    #[arg(long)]
    pub create: bool,
}

#[derive(Args, Debug, Clone)]
pub struct FailuresListArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct RequeueArgs {
    #[command(flatten)]
    pub state: StateDir,
    /// Only failures of this error kind (repeatable): connect, timeout, status, body, …
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ParseArgs {
    /// The page to fetch.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The spider file (TOML) whose rules and models to apply.
    #[arg(long, value_name = "FILE")]
    pub spider: PathBuf,
    /// The site to use (default: the one whose seeds share the URL's host, else the first).
    #[arg(long, value_name = "NAME")]
    pub site: Option<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Replaces `{base}` in the file's seeds.
    #[arg(long, value_name = "URL")]
    pub seed_base: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ShellArgs {
    /// The page to fetch.
    #[arg(value_name = "URL")]
    pub url: String,
    /// --render: the page as headless Chromium leaves it (its scripts run), to try selectors
    /// on the rendered DOM.
    #[command(flatten)]
    pub render: super::render::RenderArgs,
}

#[derive(Args, Debug, Clone)]
pub struct CrawlArgs {
    /// Start URLs (http or https).
    #[arg(required_unless_present_any = ["sitemap", "seeds_file"], value_name = "URL")]
    pub urls: Vec<String>,
    /// More start URLs from FILE, one a line (blank lines and lines starting with # are
    /// skipped), after those given as arguments: a broad crawl's seed list.
    #[arg(long, value_name = "FILE")]
    pub seeds_file: Option<std::path::PathBuf>,
    /// Where the page records go: a file in the format its extension names (.jsonl JSON
    /// Lines, also without an extension; .json one JSON array; .csv CSV; any other is
    /// refused), - for standard output (JSON Lines), or a PostgreSQL URL
    /// (postgres://user@host/db: rows upserted by URL into --pg-table). A new crawl
    /// refuses a FILE that already holds data (-O replaces it); a resumed one goes on with
    /// its own file, and refuses one it cannot prove is the file it wrote.
    #[arg(short, long, default_value = "-", value_name = "FILE|-|URL")]
    pub output: String,
    /// Like -o, but a new crawl replaces FILE if it exists (a resumed crawl still goes on
    /// with its own file, never replacing what it committed).
    #[arg(short = 'O', long, value_name = "FILE", conflicts_with = "output")]
    pub overwrite_output: Option<String>,
    /// The table for a PostgreSQL output (created if missing).
    #[arg(long, default_value = "kumo_pages", value_name = "NAME")]
    pub pg_table: String,
    /// The crawl settings (kumo-settings' table: scope, politeness, limits, fetching,
    /// robots), also spider-file keys.
    #[command(flatten)]
    pub settings: kumo_settings::SettingArgs,
    /// Also trust the certificate authorities in this PEM file (a private CA), beside the
    /// system's (repeatable).
    #[arg(long = "ca-file", value_name = "FILE")]
    pub ca_files: Vec<std::path::PathBuf>,
    /// Accept any TLS certificate, unverified: only for hosts you control (a test server).
    #[arg(long)]
    pub insecure: bool,
    /// A development cache: answers kept in DIR are replayed instead of fetched, and every new
    /// answer (but 429 and 5xx) is kept there, so a spider can be run again and again without
    /// touching the site (Scrapy's HTTPCACHE with its "always" policy).
    #[arg(long, value_name = "DIR")]
    pub http_cache: Option<PathBuf>,
    /// When the HTTP cache replays an answer: always (whenever it holds one), or rfc9111 (as
    /// the site's Cache-Control, Expires and validators allow: fresh answers are replayed,
    /// stale ones revalidated with If-None-Match / If-Modified-Since, no-store never kept).
    #[arg(long, value_enum, default_value = "always", value_name = "POLICY", requires = "http_cache")]
    pub http_cache_policy: HttpCachePolicy,
    /// An incremental crawl: run the same command with --recrawl again and again. Each run
    /// keeps a record of every page it fetches (its validators and a hash of its body); once
    /// the crawl is done, the next run asks for every page again with the validators of its
    /// last answer (If-None-Match, If-Modified-Since). A 304, or the same body, is
    /// "unchanged": not parsed, no items. Changed pages are parsed (new links are crawled as
    /// usual); 404/410 count as gone. The summary's `changes` line counts them. Needs a state
    /// directory or Redis (where the workers share each round).
    #[arg(long)]
    pub recrawl: bool,
    #[command(flatten)]
    pub revisit: super::revisit_args::RevisitArgs,
    /// Archive every exchange as WARC/1.1 files in DIR (made if missing): a request and a
    /// response record for each page, redirect, error answer and robots.txt fetched, the body
    /// as it came (compressed bodies too), SHA-1 digests, the links found as metadata, and
    /// revisit records for pages a --recrawl found unchanged. One gzip member per record;
    /// files named after the crawl, rolled at --warc-max-size; a resumed crawl goes on where
    /// its last commit left them, so each page is archived once.
    #[arg(long, value_name = "DIR")]
    pub warc: Option<PathBuf>,
    /// Start a new WARC file once one holds this many bytes.
    #[arg(long, default_value_t = kumo_warc::DEFAULT_MAX_FILE_BYTES, value_name = "BYTES", requires = "warc")]
    pub warc_max_size: u64,
    /// Write a CDXJ index (pywb's) beside each WARC file when it is closed.
    #[arg(long, requires = "warc")]
    pub warc_cdxj: bool,
    /// How hard each WARC record is compressed: 1 (fast, the default) to 9 (smallest), or 0
    /// (stored: gzip members that are not deflated, about 2.5 times larger files for much less
    /// CPU; `kumo bench --warc` compares them).
    #[arg(long, default_value_t = 1, value_name = "0-9", requires = "warc", value_parser = clap::value_parser!(u32).range(0..=9))]
    pub warc_gzip_level: u32,
    /// Exit with status 4 when more than this percentage of the requests that ended failed
    /// for good (after their retries).
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
    pub failure_threshold: f64,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub listen: ListenArgs,
    #[command(flatten)]
    pub render: super::render::RenderArgs,
    /// With a spider file (`kumo crawl FILE.toml`): replaces `{base}` in its seeds.
    #[arg(long, value_name = "URL")]
    pub seed_base: Option<String>,
    #[command(flatten)]
    pub script: super::script_args::ScriptArgs,
    #[command(flatten)]
    pub state: StateArgs,
    /// The options given on the command line (long names), for the checks that depend on
    /// what was asked for rather than on values: a spider file takes only a few.
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `--listen`: the control server of a crawl (`kumo crawl`, `kumo run`).
#[derive(Args, Debug, Clone, Default)]
pub struct ListenArgs {
    /// Serve the crawl's metrics and controls on ADDR while it runs (127.0.0.1:9100; port 0
    /// for any free one): GET /metrics (Prometheus), GET /api/status, POST /api/pause,
    /// /api/resume, /api/stop (graceful). Each site of a spider file (under kumo run: its
    /// current run) is a site of the server, its metrics labelled site="NAME". A non-loopback
    /// ADDR needs --listen-token.
    #[arg(long = "listen", value_name = "ADDR")]
    pub addr: Option<std::net::SocketAddr>,
    /// With --listen: every request must carry `Authorization: Bearer TOKEN` (at least 16
    /// characters).
    #[arg(
        long = "listen-token",
        value_name = "TOKEN",
        env = "KUMO_LISTEN_TOKEN",
        hide_env_values = true,
        requires = "addr"
    )]
    pub token: Option<String>,
}

/// Where the crawl's state lives. By default in `.kumo/state/NAME` (NAME from the start URLs),
/// so running the same command again resumes.
#[derive(Args, Debug, Clone, Default)]
pub struct StateArgs {
    /// The state directory (default: .kumo/state/ and a name derived from the start URLs).
    #[arg(long = "state", value_name = "DIR", conflicts_with_all = ["memory", "redis"])]
    pub dir: Option<PathBuf>,
    /// Keep everything in memory: nothing is saved, nothing can resume.
    #[arg(long, conflicts_with = "redis")]
    pub memory: bool,
    /// Discard the saved state and start over.
    #[arg(long, conflicts_with = "memory")]
    pub fresh: bool,
    /// fsync every commit, so the state also survives a power loss (slower).
    #[arg(long, conflicts_with_all = ["memory", "redis"])]
    pub fsync: bool,
    #[command(flatten)]
    pub redis: super::redis_args::RedisArgs,
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Pages of the synthetic site.
    #[arg(long, default_value_t = 20_000)]
    pub pages: usize,
    /// Approximate bytes per page.
    #[arg(long, default_value_t = 12_000)]
    pub page_bytes: usize,
    /// Links per page.
    #[arg(long, default_value_t = 20)]
    pub links: usize,
    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 64, value_parser = super::bounds::concurrency)]
    pub concurrency: usize,
    /// Requests in flight at once to the site (the same default as `kumo crawl`).
    #[arg(long, default_value_t = 8)]
    pub per_host: u32,
    /// Print the summary as JSON too.
    #[arg(long)]
    pub json: bool,
    /// Crawl on the embedded store with page records journaled to a file, as `kumo crawl`
    /// does by default (the default bench keeps everything in memory).
    #[arg(long)]
    pub durable: bool,
    /// Then crawl the same site again with `--recrawl` (its pages carry validators, and none
    /// changed) and report that run beside the first: time, CPU per page, body bytes.
    /// Implies --durable.
    #[arg(long)]
    pub recrawl: bool,
    /// Then measure what watching costs: the same crawl in memory, plainly and with the
    /// control server up and /metrics read once a second, three times each, alternately.
    #[arg(long)]
    pub listen: bool,
    /// Then measure what archiving costs: the same crawl in memory, plainly and with --warc
    /// (into a temporary directory), three times each, alternately; and the WARC bytes per
    /// page.
    #[arg(long)]
    pub warc: bool,
    /// Then measure rendering: the scripted shop (--pages products, their links and fields
    /// written by scripts) crawled in memory through headless Chromium with 4 tabs; its pages/s
    /// beside the plain crawl's, and the browser's peak memory.
    #[arg(long)]
    pub render: bool,
    /// Then measure a spider's JavaScript hooks: the same crawl in memory by a spider with a
    /// product model, without and with a priority hook on each new link and an item hook on
    /// each item, three times each, alternately.
    #[arg(long)]
    pub script: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// The demo's folder: the items go to DIR/quotes.jsonl, the crawl's state to DIR/state
    /// (each run starts over).
    #[arg(default_value = "kumo-demo", value_name = "DIR")]
    pub dir: PathBuf,
}

/// `--http-cache-policy`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpCachePolicy {
    Always,
    Rfc9111,
}

#[derive(Args, Debug, Clone)]
pub struct TestsiteArgs {
    /// Pages of the synthetic site.
    #[arg(long, default_value_t = 1000)]
    pub pages: usize,
    /// Approximate bytes per page.
    #[arg(long, default_value_t = 12_000)]
    pub page_bytes: usize,
    /// Links per page.
    #[arg(long, default_value_t = 20)]
    pub links: usize,
    /// Serve this directory instead of the synthetic site.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Keep no request log (for benchmarks).
    #[arg(long)]
    pub no_record: bool,
    /// Give every page an ETag and a Last-Modified, and answer a conditional request that names
    /// them with 304 (to try `kumo crawl --recrawl`).
    #[arg(long, conflicts_with = "dir")]
    pub validators: bool,
    /// Also serve the scripted shop under /js/ (start at /js/index.html) with N products:
    /// pages whose links and fields only a browser sees (`kumo crawl --render`).
    #[arg(long, value_name = "N", conflicts_with = "dir")]
    pub scripted: Option<usize>,
    /// Also serve /busy.html, which always answers 429 Too Many Requests with `Retry-After:
    /// SECS`: a server pausing its host (believed up to `kumo crawl --max-retry-after`).
    #[arg(long, value_name = "SECS")]
    pub busy: Option<u64>,
    /// Serve the hostile site instead: the synthetic site (--pages) salted with the faults
    /// of the real web (5xx, resets, lying lengths, silent servers, absurd Retry-After,
    /// redirect loops, bombs, a 200 MB body, broken HTML and charsets, spider traps, odd
    /// robots.txt), over several loopback ports. Crawl it from the URL printed first.
    #[arg(long, conflicts_with_all = ["dir", "port", "no_record", "page_bytes", "links", "validators", "scripted", "busy"])]
    pub hostile: bool,
    /// Serve a synthetic web of N host names instead (`h1.d1.test`, …) on loopback addresses
    /// 127.77.x.y, with a DNS server of its own: crawl it from the start URLs printed first,
    /// with `--dns-server` set to the address printed after them.
    #[arg(long, value_name = "N", conflicts_with_all = ["dir", "hostile", "validators", "scripted", "busy"])]
    pub web: Option<usize>,
    /// The synthetic web's addresses (several names on each, as shared hosting has).
    #[arg(long, value_name = "K", default_value_t = 8, requires = "web")]
    pub web_addresses: usize,
    /// The synthetic web's seed: the same seed, the same web.
    #[arg(long, value_name = "SEED", default_value_t = 1, requires = "web")]
    pub web_seed: u64,
    /// The synthetic web's start URLs: the index pages of its K most popular hosts (a broad
    /// crawl starts from a long list of hosts).
    #[arg(long, value_name = "K", default_value_t = 4, requires = "web")]
    pub web_seeds: usize,
    /// Spread the synthetic web's names evenly over its addresses, not by a Zipf skew (with
    /// the skew a tenth of them share one address, and per-IP politeness paces the crawl).
    #[arg(long, requires = "web")]
    pub web_even_addresses: bool,
    /// On Ctrl-C, judge the synthetic web's request log by the --judge-* rules and write what
    /// it found to FILE as JSON (requests, and each kind of violation with a few examples).
    #[arg(long, value_name = "FILE", requires = "web")]
    pub web_judge: Option<std::path::PathBuf>,
    /// For --web-judge: the least gap between two request starts to one host.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = humantime::parse_duration, requires = "web_judge")]
    pub judge_delay: std::time::Duration,
    /// For --web-judge: the least gap between two request starts to one address.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = humantime::parse_duration, requires = "web_judge")]
    pub judge_ip_delay: std::time::Duration,
    /// For --web-judge: the most requests in flight to one host.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "web_judge")]
    pub judge_per_host: usize,
    /// For --web-judge: the most requests in flight to one address (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "web_judge")]
    pub judge_per_ip: usize,
}

/// The long names of the options of a parsed subcommand that came from the command line (not
/// from defaults), e.g. `max-pages`; positional arguments are left out.
pub fn given_options(cmd: &clap::Command, matches: &clap::ArgMatches) -> Vec<String> {
    cmd.get_arguments()
        .filter(|arg| !arg.is_positional())
        .filter(|arg| {
            matches.value_source(arg.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .filter_map(|arg| arg.get_long().map(str::to_owned))
        .collect()
}
