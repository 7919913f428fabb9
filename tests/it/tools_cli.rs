//! `kumo parse` and `kumo shell` end to end: the real binary against the quotes site served by
//! the test site, with `examples/quotes.toml`.

use crate::common::{root, testdata};
use std::io::Write;
use std::process::{Command, Output, Stdio};

use kumo_testsite::{ServerBuilder, TestServer};
use serde_json::Value;

async fn quotes_site() -> TestServer {
    ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap()
}

/// Runs the binary off the async runtime (the test server keeps serving meanwhile).
async fn kumo(args: Vec<String>, stdin: &'static str) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kumo"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn parse_args(base: &str, path: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "parse".into(),
        format!("{base}{path}"),
        "--spider".into(),
        root().join("examples/quotes.toml").display().to_string(),
        "--seed-base".into(),
        base.into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_json_shows_rules_models_links_and_priorities() {
    let server = quotes_site().await;
    let base = server.base_url();
    let out = kumo(parse_args(&base, "/tag/love/", &["--json"]), "").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["site"], "quotes");
    assert_eq!(r["rules"]["target"], true);
    assert_eq!(r["rules"]["deny"], false);
    let model =
        |name: &str| r["models"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap().clone();
    let quote = model("quote");
    assert_eq!(quote["applies"], true);
    let quotes = quote["items"].as_array().unwrap();
    assert!(!quotes.is_empty());
    assert!(quotes.iter().all(|q| q["tags"].as_array().unwrap().iter().any(|t| t == "love")));
    assert_eq!(model("tag")["items"][0]["name"], "love");
    assert_eq!(model("author")["applies"], false);
    let links = r["links"].as_array().unwrap();
    let login = links.iter().find(|l| l["url"].as_str().unwrap().ends_with("/login")).unwrap();
    assert_eq!((login["rule"].as_str(), login["priority"].as_i64()), (Some("deny"), None));
    let author = links.iter().find(|l| l["url"].as_str().unwrap().contains("/author/")).unwrap();
    assert_eq!((author["rule"].as_str(), author["priority"].as_i64()), (Some("target"), Some(20)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_text_lists_items_next_page_and_followed_links() {
    let server = quotes_site().await;
    let base = server.base_url();
    let out = kumo(parse_args(&base, "/", &[]), "").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("rules: target yes, source no, follow no, deny no"), "{text}");
    assert!(text.contains("model \"quote\": 10 items, 0 invalid"), "{text}");
    assert!(text.contains("model \"author\": does not apply"), "{text}");
    assert!(text.contains(&format!("[ 10] next_page {base}/page/2/")), "{text}");
    assert!(text.contains(&format!("[  -] deny      {base}/login")), "{text}");
    assert!(text.contains("Albert Einstein"), "{text}");

    let bad = kumo(parse_args(&base, "/", &["--site", "nope"]), "").await;
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no site named \"nope\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_answers_piped_selector_commands() {
    let server = quotes_site().await;
    let base = server.base_url();
    let script = "title\ncss small.author\ncss li.next > a @href\nxpath //div[@class='tags']/a[1]/text()\n\
                  re <title>(.*)</title>\ncss p.nothing\nlinks\ncss ][\nbogus\nquit\ntitle\n";
    let out = kumo(vec!["shell".into(), format!("{base}/")], script).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&format!("fetched {base}/ (200 text/html")), "{text}");
    assert_eq!(lines[1], "Quotes to Scrape");
    assert_eq!(&lines[2..4], ["Albert Einstein", "J.K. Rowling"]);
    assert_eq!(lines.iter().filter(|l| **l == "Albert Einstein").count(), 3, "{text}");
    assert!(lines.contains(&"/page/2/"), "{text}");
    assert!(lines.contains(&"change"), "the first tag of the first quote: {text}");
    assert!(lines.contains(&"(no match)"), "{text}");
    assert!(lines.contains(&format!("{base}/author/Albert-Einstein").as_str()), "{text}");
    assert!(lines.iter().any(|l| l.starts_with("error: invalid CSS selector")), "{text}");
    assert!(lines.contains(&"error: unknown command \"bogus\"; try help"), "{text}");
    assert_eq!(
        lines.iter().filter(|l| **l == "Quotes to Scrape").count(),
        2,
        "title and re; nothing after quit"
    );
}

/// `kumo parse` reports what the crawl does: the links, next page and dig requests it says are
/// followed are exactly the requests the analyzer makes, at the same priorities, on every
/// kind of page of the quotes site.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_report_agrees_with_the_analyzer() {
    use kumo_engine::Analyzer;
    let server = quotes_site().await;
    let base = server.base_url();
    let opts = kumo_spider::LoadOptions { base: Some(base.clone()), ..Default::default() };
    let file = kumo_spider::SpiderFile::load(&root().join("examples/quotes.toml"), &opts).unwrap();
    let spider = &file.sites[0].spider;
    let downloader = kumo_downloader::Downloader::new(0, Default::default()).unwrap();
    for path in ["/", "/page/2/", "/tag/love/", "/author/Albert-Einstein/", "/login"] {
        let url = format!("{base}{path}").parse().unwrap();
        let resp = downloader.fetch(kumo_core::Request::get(url)).await.unwrap();
        assert!(path == "/login" || resp.status == 200, "{path}: {}", resp.status);
        let report = spider.explain(&resp);
        let analysis = spider.analyze(&resp);
        let mut said: Vec<(String, i32)> = report
            .links
            .iter()
            .chain(&report.next_page)
            .chain(&report.dig)
            .filter_map(|l| Some((l.url.clone(), l.priority?)))
            .collect();
        let mut did: Vec<(String, i32)> =
            analysis.requests.iter().map(|r| (r.url.to_string(), r.priority)).collect();
        said.sort();
        did.sort();
        assert_eq!(said, did, "{path}");
        let items: usize = report.models.iter().map(|m| m.items.len()).sum();
        assert_eq!(items, analysis.items.len(), "{path}");
    }
}
