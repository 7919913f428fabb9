//! Debian's headless Chromium for the tests that drive a page (the test command installs it),
//! started the way kumo's `--render` starts it. Declared by the tests that use it
//! (`#[path = "common/browser.rs"] mod browser;`), so the others do not compile it.

use std::path::Path;

use chromiumoxide::{Browser, BrowserConfig, Page};
use futures_util::StreamExt;

/// A browser with its profile in `profile`, and the task that drives its DevTools connection
/// (abort it after closing the browser).
pub async fn launch(profile: &Path) -> (Browser, tokio::task::JoinHandle<()>) {
    let exe = kumo_render::find_browser(None).expect("scripts/test.sh installs chromium-headless-shell");
    let config = BrowserConfig::builder()
        .chrome_executable(exe)
        .no_sandbox()
        .user_data_dir(profile)
        .window_size(1200, 900)
        // kumo's own flags (its `--headless` is chromiumoxide's already).
        .args(kumo_render::FLAGS.iter().copied().filter(|f| *f != "--headless"))
        .build()
        .unwrap();
    let (browser, mut handler) = Browser::launch(config).await.expect("the browser starts");
    let driver = tokio::spawn(async move { while handler.next().await.is_some() {} });
    (browser, driver)
}

/// What a script evaluates to in the page, a promise awaited (the type's default when it
/// fails).
pub async fn js<T: serde::de::DeserializeOwned + Default>(page: &Page, script: &str) -> T {
    page.evaluate(script).await.ok().and_then(|v| v.into_value::<T>().ok()).unwrap_or_default()
}

/// Closes the browser and waits for it to end.
pub async fn close(mut browser: Browser, driver: tokio::task::JoinHandle<()>) {
    browser.close().await.unwrap();
    browser.wait().await.unwrap();
    driver.abort();
}
