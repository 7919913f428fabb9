//! Another origin's web page cannot steer a crawl's control server (`--listen`, no token) in
//! a real headless Chromium: from `http://127.0.0.2:PORT/evil.html`, a `no-cors` text POST, a
//! form POST and a JSON fetch (whose preflight is never granted) at `/api/pause` and
//! `/api/stop` leave the crawl running to its end, while curl-style requests (no `Origin`, no
//! `Sec-Fetch-*`) still pause and resume it.

use crate::common;
use crate::common::browser;

use std::net::SocketAddr;

use chromiumoxide::Page;
use common::{Watched, control_request, control_state, wait_for_state};
use kumo_testsite::{Fixture, ServerBuilder};

/// The attacks, run in the evil page; each resolves to what the page could tell of it.
const ATTACKS: &str = r#"
window.attack = async (target, verb) => {
  const url = target + "/api/" + verb;
  const out = {};
  // A simple request: no preflight, the answer opaque, but it reaches the server.
  out.text = await fetch(url, { method: "POST", mode: "no-cors", body: "x",
      headers: { "Content-Type": "text/plain" } }).then(() => "answered", e => "failed: " + e);
  out.empty = await fetch(url, { method: "POST", mode: "no-cors" })
      .then(() => "answered", e => "failed: " + e);
  // A form posted into a frame: it loads whatever the server answered.
  out.form = await new Promise(done => {
    const frame = document.createElement("iframe");
    frame.name = "f" + Math.random().toString(36).slice(2);
    frame.onload = () => done("loaded");
    document.body.appendChild(frame);
    const form = document.createElement("form");
    form.method = "POST"; form.action = url; form.target = frame.name;
    const field = document.createElement("input");
    field.name = "x"; field.value = "1"; form.appendChild(field);
    document.body.appendChild(form);
    form.submit();
  });
  // JSON needs a CORS preflight, which the server never grants.
  out.json = await fetch(url, { method: "POST", body: "{}",
      headers: { "Content-Type": "application/json" } }).then(r => "read " + r.status, e => "failed");
  return JSON.stringify(out);
};
"#;

/// Runs the attacks on `/api/VERB` from the evil page; checks each reached the server (or, for
/// JSON, failed in the browser) and that the crawl is still running.
async fn attack(page: &Page, control: SocketAddr, verb: &str) {
    let script = format!("window.attack('http://{control}', '{verb}')");
    let said: String = browser::js(page, &script).await;
    let v: serde_json::Value = serde_json::from_str(&said).unwrap_or_else(|e| panic!("{said:?}: {e}"));
    assert_eq!(v["text"], "answered", "{verb}: {v}");
    assert_eq!(v["empty"], "answered", "{verb}: {v}");
    assert_eq!(v["form"], "loaded", "{verb}: {v}");
    assert_eq!(v["json"], "failed", "{verb}: the preflight is not granted: {v}");
    assert_eq!(control_state(control).await, "running", "after the attacks on /api/{verb}: {v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_origins_page_cannot_pause_or_stop_the_crawl() {
    let evil = ServerBuilder::new()
        .ip("127.0.0.2".parse().unwrap())
        .fixture(
            "/evil.html",
            Fixture::html(&format!("<!DOCTYPE html><title>evil</title><script>{ATTACKS}</script>")),
        )
        .start()
        .await
        .unwrap();
    // The browser first, so the crawl's time goes to the attacks.
    let profile = tempfile::tempdir().unwrap();
    let (browser, driver) = browser::launch(profile.path()).await;
    let page = browser.new_page(evil.url("/evil.html")).await.expect("the evil page opens");

    let (site, truth) = common::small_site(300).await;
    let dir = tempfile::tempdir().unwrap();
    let url = site.url("/index.html");
    let args = common::listened_crawl(&url, &["--memory"], "30");
    let crawl = Watched::spawn(dir.path(), &args);
    let control = crawl.control_addr().await;
    wait_for_state(control, "running").await;

    attack(&page, control, "pause").await;
    attack(&page, control, "stop").await;
    // curl and scripts: neither Origin nor Sec-Fetch-*.
    let curl = |verb: &'static str| async move {
        control_request(control, "POST", &format!("/api/{verb}"), &[], "").await.unwrap()
    };
    assert_eq!(curl("pause").await.0, 200);
    wait_for_state(control, "paused").await;
    // A cross-origin page cannot resume it either.
    let (status, why) =
        control_request(control, "POST", "/api/resume", &[("Origin", "http://127.0.0.2:1")], "")
            .await
            .unwrap();
    assert_eq!((status, why.as_str()), (403, "refused: the Origin header names another origin\n"));
    assert_eq!(control_state(control).await, "paused");
    assert_eq!(curl("resume").await.0, 200);
    wait_for_state(control, "running").await;

    let (status, err) = crawl.finish().await;
    assert_eq!(status.code(), Some(0), "never stopped: {err}");
    let pages = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    assert_eq!(pages.lines().count(), truth.unique_urls, "every page: {err}");
    browser::close(browser, driver).await;
    site.shutdown().await;
    evil.shutdown().await;
}
