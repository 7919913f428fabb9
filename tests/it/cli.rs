//! The real `kumo` binary, end to end: output format, summaries, and clear errors for bad
//! input. Each test starts its own test site on 127.0.0.1.

use std::path::Path;
use std::time::Duration;

use kumo_testsite::{ServerBuilder, SiteConfig};

use crate::common;
use common::{kumo, stderr};

fn read_lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_writes_one_json_line_per_page_and_a_summary() {
    let site = SiteConfig { pages: 120, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pages.jsonl");
    let summary = dir.path().join("summary.json");
    let o = kumo(&[
        "crawl",
        &server.url("/index.html"),
        "-o",
        out.to_str().unwrap(),
        "--summary-json",
        summary.to_str().unwrap(),
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = read_lines(&out);
    assert_eq!(lines.len(), truth.unique_urls);
    for l in &lines {
        for field in [
            "url",
            "final_url",
            "status",
            "content_type",
            "depth",
            "referrer",
            "title",
            "bytes",
            "fetched_at",
        ] {
            assert!(l.get(field).is_some(), "{field} missing in {l}");
        }
    }
    let first = &lines.iter().find(|l| l["depth"] == 0).unwrap();
    assert_eq!(first["referrer"], serde_json::Value::Null);
    assert_eq!(first["title"], "Catalogue | Bench Shop");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["pages"], truth.unique_urls as u64);
    assert_eq!(s["by_status"]["200"], truth.unique_urls as u64);
    assert_eq!(s["stopped_by"], "drained");
    assert_eq!(s["modules"]["downloaders"][0]["id"], "D1");
    // The buffers between the stages: every page's answer went through `results`.
    let results = &s["buffers"][2];
    assert_eq!(results["name"], "results", "{}", s["buffers"]);
    assert!(results["total"].as_u64() >= Some(truth.unique_urls as u64), "{}", s["buffers"]);
    assert!(results["capacity"].as_u64() > Some(0) && results["len"] == 0, "{}", s["buffers"]);
    assert!(stderr(&o).contains("by status: 200:"), "human summary on stderr: {}", stderr(&o));
    assert!(stderr(&o).contains("  buffers:   leases 0/"), "buffers on stderr: {}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_to_stdout_with_depth_and_page_limits() {
    let site = SiteConfig { pages: 200, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let o = kumo(&["crawl", &server.url("/index.html"), "--max-depth", "1", "-q"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let n = String::from_utf8_lossy(&o.stdout).lines().count();
    assert_eq!(n, truth.urls_within_depth(1));
    let o = kumo(&["crawl", &server.url("/index.html"), "--max-pages", "9", "-o", "-"]).await;
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 9);
}

#[tokio::test]
async fn an_invalid_start_url_is_a_clear_error() {
    let o = kumo(&["crawl", "not a url"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("invalid start URL \"not a url\""), "{}", stderr(&o));
}

#[tokio::test]
async fn a_non_http_start_url_is_a_clear_error() {
    let o = kumo(&["crawl", "ftp://127.0.0.1/file"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is not http or https"), "{}", stderr(&o));
}

#[tokio::test]
async fn an_unwritable_output_path_is_a_clear_error() {
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "-o", "/nonexistent-dir/out.jsonl"]).await;
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("cannot write /nonexistent-dir/out.jsonl"), "{e}");
}

#[tokio::test]
async fn an_unreachable_host_fails_with_the_reason() {
    // Port 1 on loopback: nothing listens, the connection is refused at once. Its robots.txt
    // cannot be reached, which RFC 9309 reads as "disallow": the page fails as `robots`
    // after three quick tries, with the refused connection as the reason.
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--retries", "0", "-o", "-"]).await;
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("downloader:robots: 1"), "{e}");
    assert!(e.contains("Connection refused"), "{e}");
    assert!(e.contains("no page could be fetched"), "{e}");
    assert!(o.stdout.is_empty());
}

/// `--threads N` runs the crawl on N threads: one is enough for a whole crawl (a worker of a
/// crawl shared by two on two CPUs runs so), as the runtime itself counts them; zero is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_sets_how_many_threads_crawl_and_zero_is_refused() {
    let site = SiteConfig { pages: 150, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    for threads in ["1", "3"] {
        let out = dir.path().join(format!("pages-{threads}.jsonl"));
        let url = server.url("/index.html");
        let o = kumo(&["crawl", &url, "--threads", threads, "-o", out.to_str().unwrap(), "-v"]).await;
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(read_lines(&out).len(), truth.unique_urls, "--threads {threads}: every page");
        let said = format!("runtime_threads={threads}");
        assert!(stderr(&o).contains(&said), "the runtime says it has {threads}: {}", stderr(&o));
    }
    let o = kumo(&["--threads", "0", "crawl", "http://127.0.0.1:1/"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--threads"), "{}", stderr(&o));
}

#[tokio::test]
async fn bad_flags_are_refused_by_name() {
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--concurrency", "lots"]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--concurrency"), "{}", stderr(&o));
    let o = kumo(&["crawl", "http://127.0.0.1:1/", "--deny", "re:("]).await;
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad regex pattern"), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_crawls_the_synthetic_site_and_reports() {
    let o = kumo(&["bench", "--pages", "300", "--json"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let truth = SiteConfig { pages: 300, ..Default::default() }.ground_truth();
    assert!(text.contains(&format!("pages:        {}", truth.unique_urls)), "{text}");
    for label in ["pages/s:", "cpu/page:", "peak memory:", "site's cpu:"] {
        assert!(text.contains(label), "{label} in {text}");
    }
    // The JSON after the lines splits the crawler's CPU into its own code and the kernel's
    // work, and gives the site's beside it.
    let json: serde_json::Value = serde_json::from_str(&text[text.find("\n{").expect("JSON")..]).unwrap();
    let secs = |k: &str| json[k].as_f64().unwrap_or_else(|| panic!("{k} in {json}"));
    let (user, kernel) = (secs("cpu_user_secs"), secs("cpu_kernel_secs"));
    assert!(user > 0.0 && kernel >= 0.0 && secs("site_cpu_secs") >= 0.0, "{json}");
    assert!((user + kernel - secs("cpu_secs")).abs() < 1e-6, "{json}");
    // Durably, then again as a re-crawl: the embedded store, its output in the state folder.
    let o = kumo(&["bench", "--pages", "300", "--recrawl"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("state:        embedded store (durable)"), "{text}");
    assert!(text.contains(&format!("pages:        {}", truth.unique_urls)), "{text}");
    assert!(text.contains(&format!("recrawl:      {} pages asked again", truth.unique_urls)), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_hold_from_the_servers_side() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 30, ..Default::default() }).start().await.unwrap();
    let o =
        kumo(&["crawl", &server.url("/index.html"), "--rate-limit", "5/200ms", "--max-pages", "12", "-q"])
            .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let hits = server.hits();
    // No 200 ms stretch holds more than 5 requests.
    for (i, h) in hits.iter().enumerate() {
        let in_window =
            hits[i..].iter().take_while(|x| x.at.duration_since(h.at) < Duration::from_millis(200)).count();
        assert!(in_window <= 5, "{in_window} requests within 200 ms");
    }
    let o = kumo(&["crawl", &server.url("/"), "--rate-limit", "ten/s"]).await;
    assert!(stderr(&o).contains("expected MAX/PERIOD"), "{}", stderr(&o));
}

/// Issue 21.8: in `--deny`, `*` crosses `/`, so `*logout*` denies a logout link anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_glob_star_matches_across_slashes() {
    let server = ServerBuilder::new()
        .fixture("/", kumo_testsite::Fixture::html(r#"<a href="/a/logout?x=1">out</a><a href="/b">b</a>"#))
        .fixture("/a/logout", kumo_testsite::Fixture::html("bye"))
        .fixture("/b", kumo_testsite::Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let o = kumo(&["crawl", &server.url("/"), "--deny", "*logout*", "-o", "-"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 2, "/ and /b");
    assert!(server.hits().iter().all(|h| !h.target.contains("logout")));
}

/// Bad settings are said once, with their reason; a spider file that does not exist is named
/// as one, not taken for a URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_settings_are_said_once_and_a_missing_spider_file_by_name() {
    for (args, reason) in [
        (&["crawl", "http://127.0.0.1:9/", "--memory", "-c", "0"][..], "concurrency must be at least 1"),
        (
            &["crawl", "http://127.0.0.1:9/", "--memory", "--per-host", "0"],
            "per-host parallelism must be at least 1",
        ),
        (&["crawl", "http://127.0.0.1:9/", "--memory", "--allow-domain", "bad domain"], "is not a host name"),
    ] {
        let o = kumo(args).await;
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.matches(reason).count(), 1, "{args:?}: {err}");
    }
    let o = kumo(&["crawl", "nosuch.toml"]).await;
    let err = stderr(&o);
    assert!(err.contains("no spider file \"nosuch.toml\""), "{err}");
}

/// `-q` leaves standard error empty on a crawl that goes well (no summary, no status lines);
/// logs written to a pipe carry no colour codes; `--log-format json` writes one JSON object per
/// log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_is_silent_and_logs_suit_a_pipe_or_json() {
    let site = SiteConfig { pages: 30, ..Default::default() };
    let truth = site.ground_truth();
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pages.jsonl");
    let url = server.url("/index.html");
    let o = kumo(&["crawl", &url, "-o", out.to_str().unwrap(), "-q"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "-q: nothing on standard error");
    assert_eq!(read_lines(&out).len(), truth.unique_urls);

    let o = kumo(&["crawl", &url, "--memory", "-o", "-", "-v", "--no-progress"]).await;
    let err = stderr(&o);
    assert!(err.contains("INFO"), "-v logs: {err}");
    assert!(!err.contains('\u{1b}'), "no colour codes in a pipe: {err}");

    let o =
        kumo(&["crawl", &url, "--memory", "-o", "-", "-v", "--no-progress", "--log-format", "json"]).await;
    let err = stderr(&o);
    let logs: Vec<serde_json::Value> = err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!logs.is_empty(), "JSON log lines: {err}");
    assert!(logs.iter().all(|l| l["level"].is_string() && l["fields"].is_object()), "{logs:?}");
}

/// A run refused before it crawls (a bad setting, a state directory that is not kumo's)
/// leaves no output file and no state behind, so the next run is not refused for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_run_leaves_no_output_file_and_no_state() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/mine.txt"), "mine").unwrap();
    for (args, code) in [
        (&["crawl", "http://127.0.0.1:9/", "-o", "out.jsonl", "-c", "0"][..], 2),
        (&["crawl", "http://127.0.0.1:9/", "-o", "out.jsonl", "--state", "notes"], 1),
    ] {
        let o = common::kumo_in(dir.path(), args).await;
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(!dir.path().join("out.jsonl").exists(), "{args:?}: no output file left");
        assert!(!dir.path().join(".kumo").exists(), "{args:?}: no state left");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/mine.txt")).unwrap(), "mine");
}

/// A link longer than 8 KiB is skipped with its reason (`url-too-long` in the summary), not
/// sent to a server that would refuse it; the other links are crawled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_longer_than_8_kib_is_skipped_with_its_reason() {
    let long = format!("/long/{}", "x".repeat(9 * 1024));
    let page = format!(r#"<a href="{long}">long</a> <a href="/short">short</a>"#);
    let server = ServerBuilder::new()
        .fixture("/", kumo_testsite::Fixture::html(&page))
        .fixture("/short", kumo_testsite::Fixture::html("<title>short</title>"))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.json");
    let o = kumo(&[
        "crawl",
        &server.url("/"),
        "--memory",
        "--ignore-robots",
        "-o",
        "-",
        "--summary-json",
        summary.to_str().unwrap(),
    ])
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["skipped"]["url-too-long"], 1, "{s}");
    assert_eq!(s["pages"], 2, "the start page and /short");
    assert!(server.hits().iter().all(|h| !h.target.starts_with("/long/")), "never requested");
}

/// A `user:pass@` link names the same page as the link without it: the page is fetched once,
/// and the credentials never reach the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_with_credentials_is_the_same_page_and_its_credentials_stay_out_of_the_output() {
    // Files written once the port is known: the links must name the server itself.
    let site = tempfile::tempdir().unwrap();
    let server = ServerBuilder::new().directory(site.path()).start().await.unwrap();
    let with_creds = server.url("/p.html").replacen("http://", "http://user:secret@", 1);
    let write = |name: &str, body: String| std::fs::write(site.path().join(name), body).unwrap();
    write("index.html", format!(r#"<a href="{with_creds}">a</a> <a href="/p.html">b</a>"#));
    write("p.html", format!(r#"<a href="{with_creds}">again</a>"#));
    let o = kumo(&["crawl", &server.url("/index.html"), "--memory", "--ignore-robots", "-o", "-"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 2, "the start page and /p.html, once: {out}");
    assert!(!out.contains("secret") && !out.contains("user:"), "no credentials in the output: {out}");
    assert_eq!(server.hits().iter().filter(|h| h.target == "/p.html").count(), 1, "fetched once");
}

/// A start URL typed without its scheme gets the full URL suggested, not "relative URL without
/// a base": `https://` for a name, `http://` for an address or `localhost` (a local server).
#[tokio::test]
async fn a_start_url_without_its_scheme_gets_the_full_url_suggested() {
    for (typed, meant) in [
        ("example.com", "https://example.com/"),
        ("127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ("localhost:8080", "http://localhost:8080/"),
    ] {
        let o = kumo(&["crawl", typed]).await;
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{typed}: {e}");
        assert!(
            e.contains(&format!("start URL \"{typed}\" has no scheme; did you mean \"{meant}\"?")),
            "{e}"
        );
    }
}

/// Rules that skip every start URL are a mistake in what was asked, said with the rule that
/// skips it (once: a crawl of nothing that exited 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_that_skip_every_start_url_are_refused_by_name() {
    let server =
        ServerBuilder::new().synthetic(SiteConfig { pages: 5, ..Default::default() }).start().await.unwrap();
    let start = server.url("/index.html");
    for (flags, says) in [
        (["--allow", "*/author/*"], "no --allow pattern matches it"),
        (["--deny", "*/index.html"], "a --deny pattern matches it"),
    ] {
        let mut args = vec!["crawl", &start, "--memory", "-o", "-"];
        args.extend(flags);
        let o = kumo(&args).await;
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {e}");
        assert!(e.contains(&format!("{start}: {says}")) && e.contains("would fetch nothing"), "{e}");
    }
    assert!(server.hits().is_empty(), "nothing fetched: {:?}", server.hits());
    // One start the rules let through is enough.
    let o =
        kumo(&["crawl", &start, &server.url("/page/1.html"), "--memory", "--allow", "*/page/*", "-o", "-"])
            .await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is skipped: no --allow pattern matches it"), "{}", stderr(&o));
}

/// `--dns-server` and `--resolve`: names are looked up by kumo's own resolver on the test DNS
/// server only; a name with no address (NXDOMAIN) or no answer at all fails as `dns` on the
/// failure list (its robots.txt lookup failing first: not `robots`), never a connect error,
/// and nothing is sent its way; an overridden name is fetched without a query; the summary
/// counts the lookups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_resolved_by_the_given_dns_server_and_failures_are_dns() {
    use std::net::Ipv4Addr;

    use kumo_testsite::{DnsBehaviour, DnsServer, DnsZone, Fixture};
    let site_ip = Ipv4Addr::new(127, 0, 0, 7);
    let server = ServerBuilder::new()
        .ip(site_ip.into())
        .fixture("/a", Fixture::html("a"))
        .fixture("/b", Fixture::html("b"))
        .start()
        .await
        .unwrap();
    let port = server.addr().port();
    // The links come from a page on an address (no lookup), made once the site's port is known.
    let links = format!(
        "<a href='http://shop.kumo.test:{port}/a'>a</a> <a href='http://gone.kumo.test:{port}/x'>gone</a> \
         <a href='http://mute.kumo.test:{port}/y'>mute</a> <a href='http://alias.kumo.test:{port}/b'>alias</a>"
    );
    let front = ServerBuilder::new().fixture("/", Fixture::html(&links)).start().await.unwrap();
    let zone = DnsZone::new()
        .with("shop.kumo.test", DnsBehaviour::a([site_ip], 300))
        .with("gone.kumo.test", DnsBehaviour::NxDomain { negative_ttl: 60 })
        .with("mute.kumo.test", DnsBehaviour::Silent);
    let dns = DnsServer::start(zone).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let start = front.url("/");
    let dns_addr = dns.addr().to_string();
    let summary = dir.path().join("summary.json");
    let o = common::kumo_in(
        dir.path(),
        &[
            "crawl",
            &start,
            "--any-domain",
            "--dns-server",
            &dns_addr,
            "--resolve",
            &format!("alias.kumo.test={site_ip}"),
            "--state",
            "st",
            "-o",
            "pages.jsonl",
            "--no-progress",
            "--summary-json",
            summary.to_str().unwrap(),
        ],
    )
    .await;
    let err = stderr(&o);
    let targets: Vec<String> =
        server.hits().into_iter().map(|h| format!("{}{}", h.host.unwrap_or_default(), h.target)).collect();
    assert!(
        targets.iter().any(|t| t.starts_with("shop.kumo.test") && t.ends_with("/a")),
        "{targets:?} {err}"
    );
    assert!(targets.iter().any(|t| t.starts_with("alias.kumo.test") && t.ends_with("/b")), "{targets:?}");
    assert!(
        !targets.iter().any(|t| t.contains("gone") || t.contains("mute")),
        "nothing sent to them: {targets:?}"
    );
    assert_eq!(dns.queries_for("alias.kumo.test"), 0, "an override asks nothing");
    assert_eq!(dns.queries_for("shop.kumo.test"), 1, "one query for the start's name");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(s["errors"]["downloader:dns"], 2, "{s}");
    assert!(s["errors"].get("downloader:connect").is_none(), "{s}");
    assert_eq!(
        (s["dns"]["failures"]["no_such_name"].as_u64(), s["dns"]["failures"]["timeout"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    assert!(err.contains("dns:"), "the text summary has a dns line: {err}");
    let list = common::kumo_in(dir.path(), &["failures", "list", "--state", "st", "--json"]).await;
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.matches("\"dns\"").count(), 2, "both on the failure list as dns: {listed}");
}

/// A broad crawl's seed list comes from a file (`--seeds-file`), one URL a line, blank lines
/// and comments skipped, after the URLs given as arguments; a file that cannot be read is a
/// usage error that names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_urls_come_from_a_seeds_file() {
    let a = ServerBuilder::new().fixture("/", kumo_testsite::Fixture::html("a")).start().await.unwrap();
    let b = ServerBuilder::new().fixture("/", kumo_testsite::Fixture::html("b")).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("seeds.txt"),
        format!("# the seeds\n{}\n\n  {}  \n", a.url("/"), b.url("/")),
    )
    .unwrap();
    let args = ["crawl", "--seeds-file", "seeds.txt", "--any-domain", "--memory", "-o", "pages.jsonl"];
    let o = common::kumo_in(dir.path(), &args).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let mut urls: Vec<String> = read_lines(&dir.path().join("pages.jsonl"))
        .iter()
        .map(|v| v["url"].as_str().unwrap().to_string())
        .collect();
    urls.sort();
    let mut want = vec![a.url("/"), b.url("/")];
    want.sort();
    assert_eq!(urls, want);
    let o = common::kumo_in(dir.path(), &["crawl", "--seeds-file", "nowhere.txt", "--memory"]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read the seeds file nowhere.txt"), "{}", stderr(&o));
}
