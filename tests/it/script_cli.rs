//! A spider file's JavaScript hooks on the quotes site (`testdata/quotes-site`), checked
//! against the same crawl without them; and a hook that never ends, which fails its calls
//! while the crawl goes on.

use crate::common;
use crate::common::testdata;

use std::collections::BTreeMap;

use kumo_testsite::{Fixture, ServerBuilder, TestServer};
use serde_json::Value;

async fn quotes_site() -> TestServer {
    ServerBuilder::new().directory(testdata().join("quotes-site")).start().await.unwrap()
}

/// A spider of the quotes site's quotes, one request at a time, with `script` (a TOML
/// table) if given.
fn spider(seed: &str, script: Option<&str>) -> String {
    let script = script.map(|s| format!("script = {s}\n")).unwrap_or_default();
    format!(
        r#"
[[site]]
name = "quotes"
seeds = ["{seed}"]
concurrency = 1
per_host = 1
targets = ['^https?://[^/]+/$', '/page/\d+/$', '/tag/']
sources = ['/author/']
follow = {{ deny = ['/login'] }}
next_page = "li.next > a"
output = {{ jsonl = "quotes.jsonl" }}
{script}
[[site.model]]
name = "quote"
root = {{ css = "div.quote" }}
fields = [
  {{ name = "text", css = "span.text", required = true }},
  {{ name = "author", css = "small.author", required = true }},
  {{ name = "tags", css = "a.tag", list = true }},
]
processors = [{{ dedup = ["text"] }}]
"#
    )
}

/// Crawls with `spider` in a fresh folder (the script file beside it, if given); the items
/// by their text, the paths the site was asked for, and the command's standard error.
async fn crawl(
    server: &TestServer,
    spider: String,
    rules: Option<&str>,
) -> (BTreeMap<String, Value>, Vec<String>, String) {
    let (lines, asked, err) = crawl_lines(server, spider, rules).await;
    let items = lines.into_iter().map(|v| (v["text"].as_str().unwrap_or_default().to_string(), v)).collect();
    (items, asked, err)
}

/// As `crawl`, with every item written, in order.
async fn crawl_lines(
    server: &TestServer,
    spider: String,
    rules: Option<&str>,
) -> (Vec<Value>, Vec<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("quotes.toml"), spider).unwrap();
    if let Some(rules) = rules {
        std::fs::write(dir.path().join("rules.js"), rules).unwrap();
    }
    let before = server.hits().len();
    let out = common::kumo_in(dir.path(), &["crawl", "quotes.toml", "--no-progress", "--memory"]).await;
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let lines = std::fs::read_to_string(dir.path().join("quotes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let asked = server.hits()[before..].iter().map(|h| h.target.clone()).collect();
    (lines, asked, err)
}

const RULES: &str = r#"
// Tag pages repeat the numbered pages' quotes: not followed.
function rewrite(url) { return url.includes("/tag/") ? null : url.replace(/\?.*$/, ""); }
function allow(url, depth) { return depth <= 12; }
// Author pages before everything else.
function priority(url, depth, referrer) { return url.includes("/author/") ? 50 : undefined; }
function item(item, page) {
  if (item.author === "Albert Einstein") return null;
  return { ...item, words: item.text.split(" ").length, signed: item.author + " (" + item.tags.length + " tags)" };
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_hook_acts_on_the_crawl() {
    let server = quotes_site().await;
    let seed = server.url("/");
    let (plain, _, _) = crawl(&server, spider(&seed, None), None).await;
    assert_eq!(plain.len(), 100, "the site's 100 quotes");

    let (scripted, asked, err) =
        crawl(&server, spider(&seed, Some(r#"{ file = "rules.js" }"#)), Some(RULES)).await;
    let expected: BTreeMap<_, _> = plain.iter().filter(|(_, v)| v["author"] != "Albert Einstein").collect();
    assert!(expected.len() < 100, "Einstein has quotes");
    assert_eq!(
        scripted.keys().collect::<Vec<_>>(),
        expected.keys().copied().collect::<Vec<_>>(),
        "every quote but Einstein's"
    );
    for (text, item) in &scripted {
        let words = text.split(' ').count();
        assert_eq!(item["words"], words, "{item}");
        let tags = item["tags"].as_array().map_or(0, Vec::len);
        assert_eq!(item["signed"], format!("{} ({tags} tags)", item["author"].as_str().unwrap()), "{item}");
    }
    assert!(asked.iter().all(|p| !p.starts_with("/tag/")), "rewrite dropped every tag link: {asked:?}");
    // One request at a time: after the start page, the authors it links to go first.
    let next = asked.iter().find(|p| *p != "/robots.txt" && *p != "/").unwrap();
    assert!(next.starts_with("/author/"), "priority put author pages first: {asked:?}");
    assert!(!err.contains("script"), "no hook failed: {err}");
}

/// `rewrite` drops a session parameter from links before de-duplication: the start page links
/// to the first pages under three session ids, and each page is asked for once, without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_drops_a_query_parameter_before_de_duplication() {
    let links = ["/page/1/?sessionid=a1", "/page/1/?sessionid=b2", "/page/2/?lang=en&sessionid=c3"];
    let start: String = links.iter().map(|l| format!("<a href=\"{l}\">{l}</a>")).collect();
    let server = ServerBuilder::new()
        .directory(testdata().join("quotes-site"))
        .fixture("/start", Fixture::html(&format!("<html><body>{start}</body></html>")))
        .start()
        .await
        .unwrap();
    let rules = r#"
function rewrite(url) {
  const [base, query] = url.split("?");
  if (query === undefined) return url;
  const kept = query.split("&").filter((p) => !p.startsWith("sessionid="));
  return kept.length ? base + "?" + kept.join("&") : base;
}
"#;
    // Pages with a query are targets too here, so that only the rewrite decides.
    let spider = spider(&server.url("/start"), Some(r#"{ file = "rules.js" }"#))
        .replace(r"'/page/\d+/$'", r"'/page/\d+/'");
    let (items, asked, err) = crawl(&server, spider, Some(rules)).await;
    assert!(asked.iter().all(|p| !p.contains("sessionid")), "{asked:?}");
    assert_eq!(asked.iter().filter(|p| *p == "/page/1/").count(), 1, "one page 1 for three ids: {asked:?}");
    assert!(asked.iter().any(|p| p == "/page/2/?lang=en"), "other parameters stay: {asked:?}");
    assert_eq!(items.len(), 100, "from page 1 on, every quote: {err}");
}

/// A hook that never ends on some pages: each of those pages fails at the call's budget, its
/// items unwritten, and waits on the failure list with the reason; the crawl goes on. Once
/// the script is fixed, re-queueing the `script` failures writes what was missing, and the
/// outputs hold every quote exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_hook_never_ends_is_failed_and_done_again_once_the_script_is_fixed() {
    let server = quotes_site().await;
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let hanging = r#"function item(item) { if (item.author === "Jane Austen") for (;;) {} return { ...item, ok: true }; }"#;
    let fixed = r#"function item(item) { return { ...item, ok: true }; }"#;
    let write_spider = |rules: &str| {
        let script = format!("{{ source = '''{rules}''', call_ms = 20 }}");
        std::fs::write(dir.path().join("quotes.toml"), spider(&seed, Some(&script))).unwrap();
    };
    let crawl = ["crawl", "quotes.toml", "--no-progress", "--state", "st", "--failure-threshold", "100"];
    let read_items = || -> Vec<Value> {
        std::fs::read_to_string(dir.path().join("quotes.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };

    write_spider(hanging);
    let out = common::kumo_in(dir.path(), &crawl).await;
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let first = read_items();
    assert!(first.len() > 50, "the other pages' quotes are written: {err}");
    assert!(first.iter().all(|v| v["author"] != "Jane Austen"), "no quote of a failed page is written");
    assert!(first.iter().all(|v| v["ok"] == true), "every written quote went through the hook");
    assert!(err.contains("parser:script"), "the summary counts the failures: {err}");
    let per_hook = err.lines().find_map(|l| l.trim().strip_prefix("script errors by hook: item: "));
    let per_hook: usize = per_hook.and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("{err}"));
    let out = common::kumo_in(dir.path(), &["failures", "list", "--state", "st/quotes", "--json"]).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let failures: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!failures.is_empty() && failures.len() <= per_hook, "{per_hook} failed calls: {failures:?}");
    for f in &failures {
        assert_eq!(f["kind"], "script", "{f}");
        let message = f["message"].as_str().unwrap();
        assert!(message.contains("item ran past its 20ms budget"), "{message}");
    }

    write_spider(fixed);
    let requeue = ["failures", "requeue", "--state", "st/quotes", "--kind", "script"];
    let out = common::kumo_in(dir.path(), &requeue).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = common::kumo_in(dir.path(), &crawl).await;
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let out = common::kumo_in(dir.path(), &["failures", "list", "--state", "st/quotes", "--json"]).await;
    let failures: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(failures.is_empty(), "the fixed script fails nowhere: {failures:?}\n{err}");
    let all = read_items();
    let mut texts: Vec<&str> = all.iter().map(|v| v["text"].as_str().unwrap()).collect();
    texts.sort_unstable();
    let before = texts.len();
    texts.dedup();
    assert_eq!(before, texts.len(), "no quote written twice");
    assert_eq!(texts.len(), 100, "every quote, once the failed pages were done again");
    assert!(all.iter().any(|v| v["author"] == "Jane Austen") && all.iter().all(|v| v["ok"] == true));
}

/// `extract` reads the page with CSS queries and makes its own items, one field computed from
/// two others: the same quotes as the spider's model, each with the line built from them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extract_queries_the_page_and_builds_items_from_two_fields() {
    let server = quotes_site().await;
    let seed = server.url("/");
    let rules = r#"
function extract(page) {
  const texts = page.css("div.quote span.text");
  const authors = page.xpath("//div[@class='quote']//small[@class='author']/text()");
  const about = page.css("div.quote a[href^='/author/']", "href");
  return texts.map((text, i) => ({ quote: text, by: authors[i], line: text + " — " + authors[i], about: about[i] }));
}
"#;
    let (lines, _, err) =
        crawl_lines(&server, spider(&seed, Some(r#"{ file = "rules.js" }"#)), Some(rules)).await;
    let model: BTreeMap<&str, &Value> =
        lines.iter().filter(|v| v["_model"] == "quote").map(|v| (v["text"].as_str().unwrap(), v)).collect();
    assert_eq!(model.len(), 100, "{err}");
    let mut seen = std::collections::BTreeSet::new();
    for item in lines.iter().filter(|v| v["_model"] == "script") {
        let quote = item["quote"].as_str().unwrap();
        let truth = model.get(quote).unwrap_or_else(|| panic!("{quote} is one of the site's quotes"));
        assert_eq!(item["by"], truth["author"], "{item}");
        assert_eq!(item["line"], format!("{quote} — {}", truth["author"].as_str().unwrap()), "{item}");
        assert!(item["about"].as_str().unwrap().starts_with("/author/"), "{item}");
        seen.insert(quote);
    }
    assert_eq!(seen.len(), 100, "every quote, made by the script too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_error_is_refused_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let spider = spider("http://127.0.0.1:9/", Some(r#"{ file = "rules.js" }"#));
    std::fs::write(dir.path().join("quotes.toml"), spider).unwrap();
    std::fs::write(dir.path().join("rules.js"), "function item(i) {\n  return i +;\n}\n").unwrap();
    let out = common::kumo_in(dir.path(), &["crawl", "quotes.toml", "--no-progress", "--memory"]).await;
    assert_eq!(common::code(&out), Some(2), "{}", common::stderr(&out));
    let err = common::stderr(&out);
    assert!(err.contains("rules.js:2:") && err.contains("SyntaxError"), "{err}");
    assert!(err.contains("script"), "{err}");
}

/// `kumo parse --spider FILE URL` shows what the hooks leave of one page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_shows_what_the_hooks_made_of_a_page() {
    let server = quotes_site().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("quotes.toml"),
        spider(&server.url("/"), Some(r#"{ file = "rules.js" }"#)),
    )
    .unwrap();
    std::fs::write(dir.path().join("rules.js"), RULES).unwrap();
    let out =
        common::kumo_in(dir.path(), &["parse", "--spider", "quotes.toml", &server.url("/"), "--json"]).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let script = &report["script"];
    assert_eq!(script["hooks"], serde_json::json!(["allow", "priority", "rewrite", "item"]));
    let items = script["items"].as_array().unwrap();
    assert!(
        !items.is_empty() && items.iter().all(|i| i["author"] != "Albert Einstein" && i["words"].is_number())
    );
    let requests = script["requests"].as_array().unwrap();
    assert!(requests.iter().all(|r| !r["url"].as_str().unwrap().contains("/tag/")), "{requests:?}");
    assert!(requests.iter().any(|r| r["url"].as_str().unwrap().contains("/author/") && r["priority"] == 50));
    let text = common::kumo_in(dir.path(), &["parse", "--spider", "quotes.toml", &server.url("/")]).await;
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.contains("hooks: allow, priority, rewrite, item") && text.contains("requests after the script"),
        "{text}"
    );
}

/// A few hundred XPath and CSS expressions of growing depth and random shape (nested
/// parentheses, predicates, `not(`, `:not(`, `:is(`, and token soup), queried by `extract` on
/// the pages of a crawl (four a page, the first one's error failing the page). Nesting once
/// overflowed the parser's stack and aborted the process, at every resume again. Now a bad
/// expression fails its page, which goes on the failure list with the reason, and the crawl
/// ends normally: every page is written or listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_deep_and_random_queries_fail_pages_never_the_process() {
    let site = kumo_testsite::SiteConfig { pages: 300, ..Default::default() };
    let server = ServerBuilder::new().synthetic(site).start().await.unwrap();
    let exprs = generated_queries(300);
    let rules = format!(
        r#"const QUERIES = {};
function extract(page) {{
  let h = 0;
  for (let i = 0; i < page.url.length; i++) h = (h * 31 + page.url.charCodeAt(i)) >>> 0;
  const failed = [];
  let found = 0;
  // The first query's error fails the page; the others' are caught and counted.
  const query = ([kind, q]) => (kind === "css" ? page.css(q) : page.xpath(q)).length;
  found += query(QUERIES[h % QUERIES.length]);
  for (let k = 1; k < 4; k++) {{
    try {{ found += query(QUERIES[(h + k * 37) % QUERIES.length]); }}
    catch (e) {{ failed.push(String(e).slice(0, 80)); }}
  }}
  return [{{ url: page.url, found, failed }}];
}}"#,
        serde_json::to_string(&exprs).unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let spider = format!(
        "[[site]]\nname = \"fuzz\"\nseeds = [\"{}\"]\ntargets = ['.']\noutput = {{ jsonl = \"items.jsonl\" }}\n\
         script = {{ file = \"rules.js\", call_ms = 1000 }}\n",
        server.url("/index.html")
    );
    std::fs::write(dir.path().join("fuzz.toml"), spider).unwrap();
    std::fs::write(dir.path().join("rules.js"), rules).unwrap();
    let crawl = ["crawl", "fuzz.toml", "--no-progress", "--state", "st", "--failure-threshold", "100"];
    if let Ok(keep) = std::env::var("KUMO_KEEP_FUZZ") {
        let _ = std::fs::remove_dir_all(&keep);
        std::fs::create_dir_all(&keep).unwrap();
        for f in ["fuzz.toml", "rules.js"] {
            std::fs::copy(dir.path().join(f), std::path::Path::new(&keep).join(f)).unwrap();
        }
    }
    let out = common::kumo_in(dir.path(), &crawl).await;
    let err = common::stderr(&out);
    assert!(out.status.success(), "exit {:?}: {err}", out.status);
    let items = std::fs::read_to_string(dir.path().join("items.jsonl")).unwrap();
    let written: std::collections::BTreeSet<String> = items
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["url"].as_str().unwrap().to_owned())
        .collect();
    let out = common::kumo_in(dir.path(), &["failures", "list", "--state", "st/fuzz", "--json"]).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    let failures: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!failures.is_empty() && !written.is_empty(), "some queries fail, others answer: {err}");
    for f in &failures {
        assert_eq!(f["kind"], "script", "{f}");
        assert!(!written.contains(f["url"].as_str().unwrap()), "a failed page wrote nothing: {f}");
    }
    let pages: u64 = err
        .lines()
        .find_map(|l| l.split(" pages (").next()?.rsplit(": ").next()?.trim().parse().ok())
        .unwrap_or_else(|| panic!("the summary counts pages: {err}"));
    assert_eq!(written.len() + failures.len(), pages as usize, "every page written or listed: {err}");
}

/// `n` queries, `[kind, text]`: nestings of every kind at depths growing to 20 000, then
/// token soup of growing length; deterministic.
fn generated_queries(n: usize) -> Vec<(&'static str, String)> {
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |m: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % m as u64) as usize
    };
    let nest = |open: &str, inner: &str, close: &str, d: usize| {
        format!("{}{inner}{}", open.repeat(d), close.repeat(d))
    };
    let soup = [
        "(", ")", "[", "]", "//", "a", "@href", "*", "|", "not(", ":", ".x", "#y", ">", "+", "~", "'", ",",
        "1",
    ];
    let mut out = Vec::new();
    for d in [1, 2, 5, 10, 20, 40, 60, 100, 300, 1_000, 5_000, 20_000] {
        out.push(("xpath", nest("(", "//a", ")", d)));
        out.push(("xpath", format!("//a{}", nest("[", "1", "]", d))));
        out.push(("xpath", format!("//a[{}]", nest("not(", "@x", ")", d))));
        out.push(("css", format!("a{}", nest(":not(", ".x", ")", d))));
        out.push(("css", nest(":is(", "a", ")", d)));
        out.push(("css", format!("div{}", " > div".repeat(d))));
    }
    while out.len() < n {
        let len = 1 + next(out.len() * 4);
        let text: String = (0..len).map(|_| soup[next(soup.len())]).collect();
        out.push(if next(2) == 0 { ("css", text) } else { ("xpath", text) });
    }
    out
}
