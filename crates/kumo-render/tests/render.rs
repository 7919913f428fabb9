//! The renderer against Debian's Chromium and the test site's scripted shop: links and fields
//! written by scripts, waits, blocking, a page that never loads, a browser that dies.

use std::time::Duration;

use kumo_core::{ErrorKind, Request, Url};
use kumo_downloader::{Downloader, DownloaderConfig, Renderer};
use kumo_render::{Block, BrowserRenderer, RenderConfig, Wait};
use kumo_testsite::scripted::{FROM_FETCH, HANG, HEAVY, LATE, SCRIPTED_INDEX, STREAM};
use kumo_testsite::{ScriptedSite, ServerBuilder, TestServer};

async fn site() -> TestServer {
    ServerBuilder::new().scripted(ScriptedSite::default()).start().await.expect("test site starts")
}

fn renderer(cfg: RenderConfig) -> BrowserRenderer {
    BrowserRenderer::new(cfg)
        .expect("a browser is installed (scripts/test.sh installs chromium-headless-shell)")
}

fn downloader() -> Downloader {
    Downloader::new(0, DownloaderConfig::default()).unwrap()
}

fn get(server: &TestServer, path: &str) -> Request {
    Request::get(Url::parse(&server.url(path)).unwrap())
}

fn body(r: &kumo_core::Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

fn hits_of(server: &TestServer, path: &str) -> usize {
    server.hits().iter().filter(|h| h.target == path).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_written_by_scripts_are_in_the_rendered_dom() {
    let server = site().await;
    let r = renderer(RenderConfig::default());
    let via = downloader();
    let page = r.render(get(&server, SCRIPTED_INDEX), &via).await.expect("rendered");
    assert_eq!(page.status, 200);
    let html = body(&page);
    for c in 0..3 {
        assert!(html.contains(&format!("href=\"/js/c/{c}.html\"")), "category {c} linked: {html}");
    }
    assert!(!html.contains("noscript"), "with scripts on, <noscript> is text: it goes");
    assert_eq!(page.headers.get("x-kumo-rendered").unwrap(), "browser");

    let product = r.render(get(&server, "/js/p/5.html"), &via).await.expect("rendered");
    let (name, price) = ScriptedSite::default().truth().products["/js/p/5.html"].clone();
    let html = body(&product);
    assert!(html.contains(&format!("<h1 class=\"name\">{name}</h1>")), "{html}");
    assert!(html.contains(&format!("<span class=\"price\">{price}</span>")), "{html}");
    let ua = server.hits().iter().find(|h| h.target == "/js/p/5.html").and_then(|h| h.user_agent.clone());
    assert_eq!(ua.as_deref(), Some(kumo_downloader::DEFAULT_USER_AGENT), "the crawl's User-Agent");
    r.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_wait_sees_content_fetched_after_load() {
    let server = site().await;
    let via = downloader();
    // (Read at `load`, the page would not have its late link yet: it asks for it 200 ms
    // after. Not asserted: a loaded machine may take that long to read a DOM.)
    let wait = Wait::Selector("body[data-ready]".into());
    let r = renderer(RenderConfig { wait, page_timeout: Duration::from_secs(10), ..RenderConfig::default() });
    let started = std::time::Instant::now();
    let page = r.render(get(&server, LATE), &via).await.expect("rendered");
    assert!(body(&page).contains(&format!("href=\"{FROM_FETCH}\"")), "{}", body(&page));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(hits_of(&server, "/js/data.json"), 1, "fetched once");
    r.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_idle_gives_up_on_an_endless_stream_at_its_cap() {
    let server = site().await;
    let cfg = RenderConfig {
        wait: Wait::NetworkIdle,
        idle_cap: Duration::from_millis(1500),
        page_timeout: Duration::from_secs(20),
        ..RenderConfig::default()
    };
    let r = renderer(cfg);
    let started = std::time::Instant::now();
    let page = r.render(get(&server, STREAM), &downloader()).await.expect("rendered at the cap");
    let took = started.elapsed();
    assert!(body(&page).contains("streaming"));
    assert!(took >= Duration::from_millis(1500), "waited for the cap: {took:?}");
    assert!(took < Duration::from_secs(15), "not the page timeout: {took:?}");
    r.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_fonts_media_and_blocked_urls_are_never_requested() {
    let server = site().await;
    let block = Block { urls: vec!["*.css".into()], ..Block::default() };
    let r = renderer(RenderConfig { block, ..RenderConfig::default() });
    let page = r.render(get(&server, HEAVY), &downloader()).await.expect("rendered");
    assert!(body(&page).contains("Pictures."));
    let asked: Vec<String> = server.hits().into_iter().map(|h| h.target).collect();
    assert!(asked.iter().all(|t| !t.ends_with(".png") && !t.ends_with(".css")), "{asked:?}");
    r.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_loads_times_out_and_the_next_one_renders() {
    let server = site().await;
    let r = renderer(RenderConfig { page_timeout: Duration::from_secs(3), ..RenderConfig::default() });
    let via = downloader();
    let e = r.render(get(&server, HANG), &via).await.expect_err("never loads");
    assert_eq!(e.kind, ErrorKind::Timeout, "{}", e.message);
    assert!(e.request.url.as_str().ends_with(HANG), "the request comes back");
    let page = r.render(get(&server, SCRIPTED_INDEX), &via).await.expect("the next page renders");
    assert!(body(&page).contains("/js/c/0.html"));
    r.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_browser_is_started_again_and_leaves_no_process() {
    let server = site().await;
    let r = renderer(RenderConfig::default());
    let via = downloader();
    r.render(get(&server, SCRIPTED_INDEX), &via).await.expect("rendered");
    let first = r.process_group().await.expect("a browser runs");
    assert!(group(first).len() > 1, "the browser and its helpers share its group");
    // Its main process killed: its helpers follow it, and the next page is rendered on a new
    // browser (the first try may find the old one failing).
    let killed = std::process::Command::new("kill").args(["-KILL", &first.to_string()]).status().unwrap();
    assert!(killed.success());
    let mut rendered = None;
    for _ in 0..3 {
        if let Ok(p) = r.render(get(&server, "/js/p/1.html"), &via).await {
            rendered = Some(p);
            break;
        }
    }
    assert!(rendered.is_some(), "a page renders after the crash");
    assert_eq!(r.launches(), 2, "one more browser");
    let second = r.process_group().await.expect("a browser runs");
    assert_ne!(second, first);
    r.close().await;
    assert!(r.process_group().await.is_none());
    wait_gone(second).await;
    wait_gone(first).await;
}

/// The processes of process group `pgid`.
fn group(pgid: u32) -> Vec<String> {
    let out = std::process::Command::new("pgrep").args(["-g", &pgid.to_string()]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect()
}

/// Waits (at most 10 s: helpers notice their browser is gone within a few) until group `pgid`
/// has no process left.
async fn wait_gone(pgid: u32) {
    for _ in 0..200 {
        if group(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("processes of the browser's group {pgid} remain: {:?}", group(pgid));
}

/// Plain and rendered pages share the crawl's cookie jar: a cookie a plain answer set is sent
/// by the browser, and one a page's script set is sent by the plain downloader after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_and_plain_pages_share_the_cookie_jar() {
    use kumo_testsite::scripted::COOKIE;
    let server = site().await;
    let jar = std::sync::Arc::new(kumo_downloader::CookieJar::in_memory());
    let via = Downloader::new(0, DownloaderConfig { cookie_jar: Some(jar), ..DownloaderConfig::default() })
        .unwrap();
    let r = renderer(RenderConfig::default());
    via.fetch(get(&server, COOKIE)).await.expect("fetched plainly: served=1 kept, its script not run");
    r.render(get(&server, "/js/p/0.html"), &via).await.expect("rendered");
    let cookie_of = |path: &str| {
        server.hits().iter().filter(|h| h.target == path).filter_map(|h| h.cookie.clone()).next_back()
    };
    assert_eq!(cookie_of("/js/p/0.html").as_deref(), Some("served=1"), "the browser sends the jar's cookie");
    r.render(get(&server, COOKIE), &via).await.expect("rendered: its script sets scripted=1");
    via.fetch(get(&server, "/js/p/1.html")).await.expect("fetched plainly");
    let sent = cookie_of("/js/p/1.html").unwrap_or_default();
    assert!(
        sent.contains("served=1") && sent.contains("scripted=1"),
        "the script's cookie is in the jar: {sent}"
    );
    r.close().await;
}

/// `screenshots`: a full-page PNG of each rendered page, named by a hash of its URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_of_each_page_is_kept() {
    let server = site().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = RenderConfig { screenshots: Some(dir.path().to_path_buf()), ..RenderConfig::default() };
    let r = renderer(cfg);
    let url = server.url("/js/p/2.html");
    r.render(get(&server, "/js/p/2.html"), &downloader()).await.expect("rendered");
    let png = std::fs::read(dir.path().join(kumo_render::screenshot_name(&url))).expect("its screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 1024, "{} bytes", png.len());
    // The IHDR chunk holds the width: the viewport's.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(width, RenderConfig::default().viewport.0);
    r.close().await;
}
