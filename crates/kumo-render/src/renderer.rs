//! The renderer the engine is given: a bounded pool of tabs over one browser, started when
//! first needed, started again when it crashed or got stuck, and replaced after so many pages.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

use bytes::Bytes;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::{Browser, Handler};
use futures_util::StreamExt;
use kumo_core::{Request, Response, Url};
use kumo_downloader::{CookieJar, Downloader, FetchError, RENDERED_HEADER, Renderer};
use tokio::sync::{Mutex, Semaphore};

use crate::block::Blocker;
use crate::launch::{BrowserProcess, find_browser};
use crate::tab::{self, Rendered};
use crate::{RenderConfig, RenderError};

/// Renders pages in headless Chromium.
pub struct BrowserRenderer {
    cfg: RenderConfig,
    exe: std::path::PathBuf,
    blocker: Blocker,
    tabs: Semaphore,
    live: Mutex<Option<Arc<Live>>>,
    /// Browsers started so far (the first included).
    launches: AtomicU64,
}

/// A running browser and its connection.
struct Live {
    browser: Browser,
    process: std::sync::Mutex<BrowserProcess>,
    /// Pages begun on it.
    pages: AtomicU64,
    /// Its connection ended, or a tab would not close: the next page starts another.
    broken: Arc<AtomicBool>,
    handler: tokio::task::JoinHandle<()>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

impl Live {
    fn usable(&self, recycle_after: u64) -> bool {
        !self.broken.load(Ordering::Relaxed)
            && self.pages.load(Ordering::Relaxed) < recycle_after
            && !self.process.lock().unwrap_or_else(|p| p.into_inner()).exited()
    }
}

impl BrowserRenderer {
    /// A renderer with `cfg`. The browser is found now (a missing one is an error before the
    /// crawl starts) but started with the first page.
    pub fn new(cfg: RenderConfig) -> Result<Self, RenderError> {
        let exe = find_browser(cfg.browser.as_deref())?;
        let blocker = Blocker::new(&cfg.block)?;
        let tabs = Semaphore::new(cfg.tabs.max(1));
        Ok(BrowserRenderer { cfg, exe, blocker, tabs, live: Mutex::new(None), launches: AtomicU64::new(0) })
    }

    /// The browser this renderer runs.
    pub fn browser_path(&self) -> &std::path::Path {
        &self.exe
    }

    /// Browsers started so far: more than one after a crash or a recycling.
    pub fn launches(&self) -> u64 {
        self.launches.load(Ordering::Relaxed)
    }

    /// The process group of the running browser, if one runs: its main process's id, which
    /// every process it starts (renderers, the GPU and network helpers) shares.
    pub async fn process_group(&self) -> Option<u32> {
        let live = self.live.lock().await;
        live.as_ref().and_then(|l| l.process.lock().unwrap_or_else(|p| p.into_inner()).group())
    }

    /// The browser to render on, started if none runs or the last cannot go on.
    async fn live(&self) -> Result<Arc<Live>, RenderError> {
        let mut live = self.live.lock().await;
        if let Some(l) = live.as_ref()
            && l.usable(self.cfg.recycle_after)
        {
            l.pages.fetch_add(1, Ordering::Relaxed);
            return Ok(l.clone());
        }
        // The one it replaces goes once its last page is done (its process group is killed
        // when the last reference drops).
        *live = None;
        let started = self.launch().await?;
        started.pages.fetch_add(1, Ordering::Relaxed);
        *live = Some(started.clone());
        Ok(started)
    }

    async fn launch(&self) -> Result<Arc<Live>, RenderError> {
        let (process, ws) = BrowserProcess::start(&self.exe, self.cfg.viewport).await?;
        let config = HandlerConfig {
            request_intercept: true,
            viewport: Some(Viewport {
                width: self.cfg.viewport.0,
                height: self.cfg.viewport.1,
                ..Viewport::default()
            }),
            request_timeout: self.cfg.page_timeout,
            ..HandlerConfig::default()
        };
        let (browser, handler) = Browser::connect_with_config(ws, config).await?;
        let broken = Arc::new(AtomicBool::new(false));
        let handler = tokio::spawn(drive(handler, broken.clone()));
        self.launches.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(browser = %self.exe.display(), "browser started");
        Ok(Arc::new(Live {
            browser,
            process: std::sync::Mutex::new(process),
            pages: AtomicU64::new(0),
            broken,
            handler,
        }))
    }

    /// Renders `url` with `user_agent`, the cookies of `jar` (if given) going both ways.
    async fn render_url(
        &self,
        url: &Url,
        jar: Option<&CookieJar>,
        user_agent: &str,
    ) -> Result<Rendered, RenderError> {
        let _tab =
            self.tabs.acquire().await.map_err(|_| RenderError::Browser("the renderer is closed".into()))?;
        let live = self.live().await?;
        let (result, closed) =
            tab::render(&live.browser, url, jar, user_agent, &self.cfg, &self.blocker).await;
        if !closed {
            tracing::warn!(%url, "a tab would not close; the browser is started again");
            live.broken.store(true, Ordering::Relaxed);
        }
        let rendered = result?;
        if let (Some(dir), Some(png)) = (&self.cfg.screenshots, &rendered.screenshot) {
            let path = dir.join(screenshot_name(url.as_str()));
            tokio::fs::write(&path, png)
                .await
                .map_err(|source| RenderError::Screenshot { path: path.display().to_string(), source })?;
        }
        Ok(rendered)
    }
}

/// Runs the DevTools connection until it ends; an end means the browser is gone.
async fn drive(mut handler: Handler, broken: Arc<AtomicBool>) {
    while let Some(event) = handler.next().await {
        if let Err(e) = event {
            // Messages this protocol version does not know are skipped by the handler; what
            // comes here is the connection failing.
            tracing::debug!(error = %e, "the browser's connection failed");
            break;
        }
    }
    broken.store(true, Ordering::Relaxed);
}

/// A screenshot's file name: the hash of its page's URL.
pub fn screenshot_name(url: &str) -> String {
    format!("{:032x}.png", xxhash_rust::xxh3::xxh3_128(url.as_bytes()))
}

#[async_trait::async_trait]
impl Renderer for BrowserRenderer {
    async fn render(&self, req: Request, via: &Downloader) -> Result<Response, FetchError> {
        let fetched_at = SystemTime::now();
        let started = std::time::Instant::now();
        let user_agent = req
            .headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .unwrap_or_else(|| via.config().user_agent.next().into_owned());
        let jar = via.cookie_jar().map(|j| j.as_ref());
        // Counted as the downloader's: the summary's module counts cover every page fetched.
        via.counters().called();
        via.counters().accepted();
        let rendered = self.render_url(&req.url, jar, &user_agent).await;
        via.counters().finished(rendered.is_ok());
        let rendered = match rendered {
            Ok(r) => r,
            Err(e) => return Err(FetchError::new(e.kind(), e.to_string(), req)),
        };
        let cap = via.config().max_body_bytes;
        if rendered.html.len() > cap {
            let e = RenderError::TooLarge(cap);
            return Err(FetchError::new(e.kind(), e.to_string(), req));
        }
        let url = Url::parse(&rendered.url).unwrap_or_else(|_| req.url.clone());
        let mut headers = rendered.headers;
        // The body is the DOM as the browser serialized it: UTF-8, whole, not coded.
        for h in
            [http::header::CONTENT_ENCODING, http::header::CONTENT_LENGTH, http::header::TRANSFER_ENCODING]
        {
            headers.remove(h);
        }
        headers
            .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/html; charset=utf-8"));
        headers.insert(RENDERED_HEADER, http::HeaderValue::from_static("browser"));
        let status = http::StatusCode::from_u16(rendered.status).unwrap_or(http::StatusCode::OK);
        Ok(Response {
            request: req,
            status,
            headers,
            url,
            body: Bytes::from(rendered.html),
            encoding: encoding_rs::UTF_8,
            fetched_at,
            elapsed: started.elapsed(),
            latency: rendered.latency,
            // The WARC keeps network bytes; the browser's are not recorded (yet).
            wire: None,
        })
    }

    /// Stops the browser (also done when the renderer is dropped).
    async fn close(&self) {
        self.live.lock().await.take();
    }
}
