//! The analyzer stage: a response in, new requests and items out.
//!
//! [`Analyzer`] is the plug-in point (spiders implement it); [`PageAnalyzer`] is the default:
//! it follows every link the streaming extractor finds and emits one page record per response.
//! The engine itself turns redirects into requests and applies scope, so analyzers only say
//! what they found.

use kumo_core::{ErrorKind, Item, Request, Response};

/// What an analyzer found in one response.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Candidate requests (the engine checks scope and de-duplicates them).
    pub requests: Vec<Request>,
    /// Records found on the page; they reach the pipeline once the page is committed.
    pub items: Vec<Item>,
    /// Problems that did not stop the analysis (malformed markup, unparseable links).
    pub issues: Vec<String>,
    /// A spider's script hooks that failed on the page (reported as `script` errors).
    pub script_errors: Vec<ScriptFailure>,
    /// Models that could not run on the page because it was past an extraction limit (too
    /// deep, over its time budget): the page is failed as `extract`, its items unwritten.
    pub extract_errors: Vec<String>,
}

/// One failed call of a script hook on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptFailure {
    /// The hook (`item`, `rewrite`, ...), or `script` for the script as a whole.
    pub hook: &'static str,
    /// What went wrong; the page's first failure names its `script` failure.
    pub message: String,
}

/// Turns responses into requests and items. Called concurrently from several parser tasks.
pub trait Analyzer: Send + Sync {
    /// What one response holds. Every response comes here but those whose status is retried
    /// (429 and some 5xx), successful sitemaps, and pages a re-crawl finds unchanged.
    fn analyze(&self, response: &Response) -> Analysis;

    /// Whether [`Analyzer::steer_link`] does anything (the engine skips it otherwise).
    fn steers_links(&self) -> bool {
        false
    }

    /// Decides over one link of `response`'s analysis that passed scope and that the frontier
    /// did not already know (a link queued before is dropped by the commit whatever is said
    /// of it, so it is not asked about): whether it is followed, and at what priority. A
    /// decision that failed goes to `failures` (the page is then failed), and the link stays
    /// as it was.
    fn steer_link(
        &self,
        _response: &Response,
        _link: &mut Request,
        _failures: &mut Vec<ScriptFailure>,
    ) -> bool {
        true
    }
}

/// The default analyzer: every link of every successful HTML page, and a page record
/// (url, final_url, status, content_type, depth, referrer, title, bytes, fetched_at) for every
/// response.
#[derive(Debug, Default, Clone, Copy)]
pub struct PageAnalyzer;

impl Analyzer for PageAnalyzer {
    fn analyze(&self, resp: &Response) -> Analysis {
        let mut out = Analysis::default();
        let mut title = None;
        if resp.status.is_success() && resp.is_html() {
            let page = kumo_parse::extract_links(&resp.body, &resp.url, resp.encoding);
            out.requests = page.links.into_iter().map(|u| resp.request.follow(u)).collect();
            out.issues = page.issues;
            title = page.title;
        }
        out.items.push(page_record(resp, title));
        out
    }
}

/// A URL as a record shows it: without `user:pass@`, so credentials never reach an output.
pub(crate) fn shown(url: &kumo_core::Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut u = url.clone();
    // Only URLs that cannot have user info refuse these, and this one has some.
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

/// The record `kumo crawl` writes for each fetched response.
pub fn page_record(resp: &Response, title: Option<String>) -> Item {
    let final_url = match resp.redirect_location() {
        Some(Ok(target)) => shown(&target),
        _ => shown(&resp.url),
    };
    let mut item = Item::new()
        .with("url", shown(&resp.request.url))
        .with("final_url", final_url)
        .with("status", resp.status.as_u16())
        .with("content_type", resp.content_type())
        .with("depth", resp.request.depth)
        .with("referrer", resp.request.source.as_ref().map(shown))
        .with("title", title)
        .with("bytes", resp.body.len())
        .with("fetched_at", humantime::format_rfc3339_millis(resp.fetched_at).to_string());
    if let Some(from) = &resp.request.redirected_from {
        item.insert("redirected_from", shown(from));
    }
    if resp.headers.contains_key(kumo_downloader::RENDERED_HEADER) {
        item.insert("rendered", true);
    }
    item
}

/// Why a page failed, if it did: a redirect that cannot be followed; else a failed script
/// call (`message`, calls failed on the page); else a limit of model extraction. A page a
/// hook or the models failed on loses its items, made without the hook's answer or a
/// model's (the failure list keeps the page, to be asked again once fixed); its links go on
/// as any failed page's do.
pub(crate) fn page_failure(
    redirect: Option<String>,
    script: Option<(String, usize)>,
    extract: Option<String>,
    items: &mut Vec<Item>,
) -> Option<(ErrorKind, String)> {
    match (redirect, script) {
        (Some(message), _) => Some((ErrorKind::BadRedirect, message)),
        (None, Some((message, calls))) => {
            items.clear();
            let more = match calls {
                1 => String::new(),
                n => format!(" (and {} more failed calls on the page)", n - 1),
            };
            Some((ErrorKind::Script, format!("{message}{more}")))
        }
        (None, None) => extract.map(|message| {
            items.clear();
            (ErrorKind::Extract, message)
        }),
    }
}
