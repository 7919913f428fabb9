//! One page rendered in a tab of its own: opened blank, its listeners installed (interception
//! hangs a navigation that starts before them), navigated, waited for, read, and closed.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EventRequestPaused, FailRequestParams,
};
use chromiumoxide::cdp::browser_protocol::network::{
    ErrorReason, EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    ResourceType, SetUserAgentOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::cdp::browser_protocol::target::CloseTargetParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::error::CdpError;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::{Browser, Page};
use futures_util::{FutureExt, StreamExt};
use http::{HeaderMap, HeaderName, HeaderValue};

use kumo_core::Url;
use kumo_downloader::CookieJar;

use crate::block::Blocker;
use crate::cookies;
use crate::{IDLE_QUIET, RenderConfig, RenderError, Wait};

/// How long opening or closing a tab may take before the browser counts as stuck.
const TAB_OP_TIMEOUT: Duration = Duration::from_secs(10);

/// A page as the browser left it.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// The document's status and headers (the last answer of its redirects).
    pub status: u16,
    pub headers: HeaderMap,
    /// The URL the tab ended on.
    pub url: String,
    /// The DOM, serialized, after the wait.
    pub html: String,
    /// From navigating to the document's answer.
    pub latency: Duration,
    pub screenshot: Option<Vec<u8>>,
}

/// Renders `url` in a new tab of `browser`, and closes the tab whatever happens. The second
/// value is false when the tab could not be closed: the browser is stuck and must go.
pub(crate) async fn render(
    browser: &Browser,
    url: &Url,
    jar: Option<&CookieJar>,
    user_agent: &str,
    cfg: &RenderConfig,
    blocker: &Blocker,
) -> (Result<Rendered, RenderError>, bool) {
    let page = match tokio::time::timeout(TAB_OP_TIMEOUT, browser.new_page("about:blank")).await {
        Ok(Ok(page)) => page,
        Ok(Err(e)) => return (Err(e.into()), false),
        Err(_) => return (Err(RenderError::Browser("no new tab within 10 s".into())), false),
    };
    let target = page.target_id().clone();
    let result =
        match tokio::time::timeout(cfg.page_timeout, load(&page, url, jar, user_agent, cfg, blocker)).await {
            Ok(r) => r,
            Err(_) => Err(RenderError::Timeout(cfg.page_timeout)),
        };
    // Closed through the browser, not the page: a page whose script never ends answers
    // nothing, its own close included.
    let closed = matches!(
        tokio::time::timeout(TAB_OP_TIMEOUT, browser.execute(CloseTargetParams::new(target))).await,
        Ok(Ok(_))
    );
    (result, closed)
}

/// A task stopped when its handle goes, with the page it serves.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn load(
    page: &Page,
    url: &Url,
    jar: Option<&CookieJar>,
    user_agent: &str,
    cfg: &RenderConfig,
    blocker: &Blocker,
) -> Result<Rendered, RenderError> {
    page.set_user_agent(SetUserAgentOverrideParams::new(user_agent)).await?;
    let _interceptor = intercept(page, blocker.clone()).await?;
    let in_flight = match cfg.wait {
        Wait::NetworkIdle => Some(InFlight::watch(page).await?),
        _ => None,
    };
    if let Some(jar) = jar {
        cookies::into_tab(page, jar, url).await?;
    }
    let mut documents = page.event_listener::<EventResponseReceived>().await?;
    let started = Instant::now();
    // Resolves once the page's `load` has fired.
    match page.goto(url.as_str()).await {
        Ok(_) => {}
        Err(CdpError::ChromeMessage(text)) => return Err(RenderError::Navigate(text)),
        Err(e) => return Err(e.into()),
    }
    // The main frame's documents answered before `load`, so their events are here already:
    // the last is the answer the redirects (if any) ended on.
    let main = page.mainframe().await?;
    let mut response = None;
    while let Some(Some(ev)) = documents.next().now_or_never() {
        if ev.r#type == ResourceType::Document && (main.is_none() || ev.frame_id == main) {
            response = Some(ev.response.clone());
        }
    }
    let response = response.ok_or_else(|| RenderError::Navigate("no answer for the page".into()))?;
    let latency = started.elapsed();
    match &cfg.wait {
        Wait::Load => {}
        Wait::NetworkIdle => {
            if let Some(in_flight) = &in_flight {
                in_flight.wait_idle(cfg.idle_cap).await;
            }
        }
        Wait::Selector(selector) => wait_for_selector(page, selector).await?,
    }
    // With scripts on, a <noscript> holds text, which the DOM serializes as if it were markup:
    // it goes, so its links are not taken for the page's.
    page.evaluate_expression("document.querySelectorAll('noscript').forEach(n => n.remove())").await?;
    let html = page.content().await?;
    let screenshot = match &cfg.screenshots {
        Some(_) => {
            let params =
                ScreenshotParams::builder().format(CaptureScreenshotFormat::Png).full_page(true).build();
            Some(page.screenshot(params).await?)
        }
        None => None,
    };
    let mut headers = HeaderMap::new();
    if let Some(map) = response.headers.inner().as_object() {
        for (name, value) in map {
            // Chromium joins a repeated header's values with newlines.
            for v in value.as_str().unwrap_or_default().split('\n') {
                if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(v)) {
                    headers.append(n, v);
                }
            }
        }
    }
    let url = page.url().await?.unwrap_or_else(|| response.url.clone());
    if let (Some(jar), Ok(at)) = (jar, Url::parse(&url)) {
        cookies::from_tab(page, jar, &at).await?;
    }
    Ok(Rendered { status: response.status as u16, headers, url, html, latency, screenshot })
}

/// Answers every request the page pauses at: refused when blocked, let through otherwise.
async fn intercept(page: &Page, blocker: Blocker) -> Result<AbortOnDrop, RenderError> {
    let mut paused = page.event_listener::<EventRequestPaused>().await?;
    let page = page.clone();
    Ok(AbortOnDrop(tokio::spawn(async move {
        while let Some(ev) = paused.next().await {
            let id = ev.request_id.clone();
            let answered = if blocker.blocks(&ev.resource_type, &ev.request.url) {
                page.execute(FailRequestParams::new(id, ErrorReason::BlockedByClient)).await.map(drop)
            } else {
                page.execute(ContinueRequestParams::new(id)).await.map(drop)
            };
            if let Err(e) = answered {
                tracing::debug!(error = %e, url = %ev.request.url, "a paused request was not answered");
            }
        }
    })))
}

/// Waits, polling in the page, for an element matching `selector`.
async fn wait_for_selector(page: &Page, selector: &str) -> Result<(), RenderError> {
    let quoted = js_string(selector);
    let js = format!(
        "new Promise(done => {{ const look = () => document.querySelector({quoted}) ? done(true) \
         : setTimeout(look, 50); look(); }})"
    );
    let params = EvaluateParams::builder()
        .expression(js)
        .await_promise(true)
        .return_by_value(true)
        .build()
        .map_err(RenderError::Browser)?;
    page.evaluate_expression(params).await?;
    Ok(())
}

/// `s` as a JavaScript string literal.
fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The page's requests in flight, and since when the count last changed.
struct InFlight {
    state: Arc<Mutex<(HashSet<String>, Instant)>>,
    _watcher: AbortOnDrop,
}

impl InFlight {
    async fn watch(page: &Page) -> Result<Self, RenderError> {
        let mut sent = page.event_listener::<EventRequestWillBeSent>().await?;
        let mut finished = page.event_listener::<EventLoadingFinished>().await?;
        let mut failed = page.event_listener::<EventLoadingFailed>().await?;
        let state = Arc::new(Mutex::new((HashSet::new(), Instant::now())));
        let s = state.clone();
        let watcher = tokio::spawn(async move {
            loop {
                let (id, started) = tokio::select! {
                    Some(e) = sent.next() => (e.request_id.inner().clone(), true),
                    Some(e) = finished.next() => (e.request_id.inner().clone(), false),
                    Some(e) = failed.next() => (e.request_id.inner().clone(), false),
                    else => break,
                };
                let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
                let changed = if started { s.0.insert(id) } else { s.0.remove(&id) };
                if changed {
                    s.1 = Instant::now();
                }
            }
        });
        Ok(InFlight { state, _watcher: AbortOnDrop(watcher) })
    }

    /// Returns once nothing has been in flight for [`IDLE_QUIET`], or after `cap`.
    async fn wait_idle(&self, cap: Duration) {
        let deadline = Instant::now() + cap;
        // Bounded by the cap; the browser's events say nothing when nothing happens, so the
        // quiet period is looked at rather than waited on.
        while Instant::now() < deadline {
            let quiet_for = {
                let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                s.0.is_empty().then(|| s.1.elapsed())
            };
            if quiet_for.is_some_and(|q| q >= IDLE_QUIET) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn selectors_are_quoted_as_javascript_strings() {
        assert_eq!(super::js_string(r#"a[href="x\y"]"#), r#""a[href=\"x\\y\"]""#);
        assert_eq!(super::js_string("a\nb"), r#""a\u000ab""#);
    }
}
