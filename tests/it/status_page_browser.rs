//! The status page of `kumo crawl --listen` in a real headless Chromium (Debian's, which the
//! test command installs): it shows the running crawl, looks like a page (a screenshot), and
//! its Pause and Resume buttons steer the crawl.

use crate::common;
use crate::common::browser;

use std::net::SocketAddr;
use std::time::Duration;

use browser::js;
use chromiumoxide::Page;
use chromiumoxide::page::ScreenshotParams;
use common::{Watched, wait_for_state};

async fn call(addr: SocketAddr, method: &str, path: &str) -> String {
    common::control_call(addr, method, path).await.1
}

/// The text of the element with `id`.
async fn text(page: &Page, id: &str) -> String {
    let js = format!("document.getElementById('{id}').textContent");
    page.evaluate(js).await.ok().and_then(|v| v.into_value::<String>().ok()).unwrap_or_default()
}

/// Whether anything is drawn on the chart's canvas.
const CHART_DRAWN: &str = "(() => { const c = document.getElementById('chart'); \
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
    for (let i = 3; i < d.length; i += 4) if (d[i]) return true; return false; })()";

/// Waits (at most `limit`, looking every 50 ms) until `cond` holds of the element `id`'s text.
async fn wait_for_text(page: &Page, id: &str, limit: Duration, cond: impl Fn(&str) -> bool) -> String {
    let start = std::time::Instant::now();
    loop {
        let t = text(page, id).await;
        if cond(&t) {
            return t;
        }
        assert!(start.elapsed() < limit, "#{id} still says {t:?} after {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_shows_the_crawl_and_its_buttons_steer_it() {
    let (server, _) = common::small_site(300).await;
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/index.html");
    let args = common::listened_crawl(&url, &["--memory"], "30");
    let crawl = Watched::spawn(dir.path(), &args);
    let addr = crawl.control_addr().await;

    let profile = tempfile::tempdir().unwrap();
    let (browser, driver) = browser::launch(profile.path()).await;

    let page = browser.new_page(format!("http://{addr}/")).await.expect("the status page opens");
    wait_for_text(&page, "state", Duration::from_secs(10), |s| s == "running").await;
    let pages =
        wait_for_text(&page, "pages", Duration::from_secs(10), |p| p.parse::<u64>().is_ok_and(|n| n > 0))
            .await;
    assert!(pages.parse::<u64>().unwrap() > 0);
    // The host table and the chart fill in as the page polls.
    let start = std::time::Instant::now();
    loop {
        let rows = js::<u64>(&page, "document.querySelectorAll('#hosts tr').length").await;
        let drawn = js::<bool>(&page, CHART_DRAWN).await;
        if rows > 0 && drawn {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "hosts {rows}, chart drawn {drawn}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let png = page.screenshot(ScreenshotParams::builder().build()).await.expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    assert!(png.len() > 10_000, "a page with something on it: {} bytes", png.len());
    std::fs::write(dir.path().join("status.png"), &png).unwrap();

    page.find_element("#pause").await.unwrap().click().await.unwrap();
    wait_for_state(addr, "paused").await;
    wait_for_text(&page, "state", Duration::from_secs(10), |s| s == "paused").await;
    let hits = server.hit_count();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.hit_count() <= hits + 1, "paused: nothing more is fetched (one in flight at most)");

    page.find_element("#resume").await.unwrap().click().await.unwrap();
    wait_for_state(addr, "running").await;
    wait_for_text(&page, "state", Duration::from_secs(10), |s| s == "running").await;

    call(addr, "POST", "/api/stop").await;
    let (status, err) = crawl.finish().await;
    assert_eq!(status.code(), Some(3), "stopped through the API: {err}");
    browser::close(browser, driver).await;
}
