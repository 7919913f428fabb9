//! The crawl's cookies in the browser: what the jar would send goes into the tab before the
//! navigation, and what the tab ends with (set by the server or by a script) goes back into
//! the jar, so plain and rendered pages share one session.

use std::time::{SystemTime, UNIX_EPOCH};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    Cookie, CookieParam, GetCookiesParams, SetCookiesParams,
};
use kumo_core::Url;
use kumo_downloader::CookieJar;

use crate::RenderError;

/// Gives the tab the cookies the jar sends to `url`.
pub(crate) async fn into_tab(page: &Page, jar: &CookieJar, url: &Url) -> Result<(), RenderError> {
    let cookies: Vec<CookieParam> = jar
        .request_values(url)
        .into_iter()
        .filter_map(|(name, value)| {
            CookieParam::builder().name(name).value(value).url(url.as_str()).build().ok()
        })
        .collect();
    if !cookies.is_empty() {
        // The protocol's own call: chromiumoxide's refuses a tab still on about:blank.
        page.execute(SetCookiesParams::new(cookies)).await?;
    }
    Ok(())
}

/// Takes the cookies the tab holds for its page into the jar, as if `url` had set them.
pub(crate) async fn from_tab(page: &Page, jar: &CookieJar, url: &Url) -> Result<(), RenderError> {
    let asked = GetCookiesParams { urls: Some(vec![url.to_string()]) };
    let lines: Vec<String> = page.execute(asked).await?.result.cookies.iter().map(set_cookie).collect();
    if !lines.is_empty() {
        jar.set_from(url, &lines);
    }
    Ok(())
}

/// A browser cookie written back as the `Set-Cookie` value that makes it.
fn set_cookie(c: &Cookie) -> String {
    let mut line = format!("{}={}; Path={}", c.name, c.value, c.path);
    // A leading dot: a domain cookie (its subdomains too); none: the host's only.
    if let Some(domain) = c.domain.strip_prefix('.') {
        line.push_str(&format!("; Domain={domain}"));
    }
    if !c.session && c.expires > 0.0 {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        line.push_str(&format!("; Max-Age={}", (c.expires - now).max(0.0) as u64));
    }
    if c.secure {
        line.push_str("; Secure");
    }
    if c.http_only {
        line.push_str("; HttpOnly");
    }
    line
}
