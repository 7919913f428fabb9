//! A site's script hooks over one page's analysis: `extract` adds items, `item` changes or
//! drops each, and `rewrite` acts on each link before the engine checks its scope and
//! fingerprint (so de-duplication sees the rewritten URL). `allow` and `priority` come after
//! those checks, through the engine's [`Analyzer::steer_link`](kumo_engine::Analyzer), and
//! only for links the frontier does not already know: most links of a page were queued
//! before, and what a hook says of them would change nothing. A call that fails is a `script`
//! error for the page (which the engine then fails, its items unwritten), and what it would
//! have decided of a link stays as it was.

use kumo_core::{Item, Request, Response, Url};
use kumo_engine::{Analysis, ScriptFailure};
use kumo_script::{ItemAnswer, Page, PageView, Rewrite, Script, ScriptError};

/// What the items a script's `extract` makes are tagged (`_model`).
pub const SCRIPT_MODEL: &str = "script";

/// A failed call on `resp`'s page, named for its hook (`script` for the script as a whole).
fn failure(resp: &Response, e: ScriptError) -> ScriptFailure {
    ScriptFailure { hook: e.hook().unwrap_or("script"), message: format!("{}: {e}", resp.url) }
}

pub(crate) fn apply(script: &Script, resp: &Response, body: &str, out: &mut Analysis) {
    if script.disabled() {
        // The page is not made without the hooks it was meant to go through: it fails, and
        // waits on the failure list for a fixed script.
        let e = ScriptError::Disabled { failures: kumo_script::FAILURES_TO_DISABLE };
        out.script_errors.push(failure(resp, e));
        return;
    }
    let mut failed = Vec::new();
    let mut note = |e: ScriptError| failed.push(failure(resp, e));
    // The page, for the hooks that read it (most calls are per link and do not).
    if script.defines("extract") || script.defines("item") {
        let headers: Vec<(&str, &str)> =
            resp.headers.iter().filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?))).collect();
        let page =
            Page::new(&PageView { url: resp.url.as_str(), status: resp.status.as_u16(), headers, body });
        match script.extract(&page) {
            Ok(Some(made)) => {
                out.items.extend(made.into_iter().map(|f| crate::configured::tag(SCRIPT_MODEL, Item(f))))
            }
            Ok(None) => {}
            Err(e) => note(e),
        }
        if script.defines("item") {
            let items = std::mem::take(&mut out.items);
            for item in items {
                match script.item(&item.0, &page) {
                    Ok(ItemAnswer::Keep) => out.items.push(item),
                    Ok(ItemAnswer::Drop) => {}
                    Ok(ItemAnswer::Replace(fields)) => out.items.push(Item(fields)),
                    Err(e) => {
                        note(e);
                        out.items.push(item);
                    }
                }
            }
        }
    }
    if script.defines("rewrite") {
        let requests = std::mem::take(&mut out.requests);
        for mut req in requests {
            match script.rewrite(req.url.as_str()) {
                Ok(Rewrite::Keep) => {}
                Ok(Rewrite::Drop) => continue,
                Ok(Rewrite::To(to)) => match Url::parse(&to) {
                    Ok(url) => req.url = url,
                    Err(_) => {
                        note(ScriptError::BadAnswer { hook: "rewrite", got: to, wanted: "a URL" });
                        continue;
                    }
                },
                Err(e) => note(e),
            }
            out.requests.push(req);
        }
    }
    out.script_errors.extend(failed);
}

/// Whether the script has a hook for [`steer`].
pub(crate) fn steers(script: &Script) -> bool {
    script.defines("allow") || script.defines("priority")
}

/// `allow`, then `priority`, on one link that passed scope and is new to the frontier:
/// whether it is followed.
pub(crate) fn steer(
    script: &Script,
    resp: &Response,
    req: &mut Request,
    failed: &mut Vec<ScriptFailure>,
) -> bool {
    let mut note = |e: ScriptError| failed.push(failure(resp, e));
    match script.allow(req.url.as_str(), req.depth) {
        Ok(Some(false)) => return false,
        Ok(_) => {}
        Err(e) => note(e),
    }
    match script.priority(req.url.as_str(), req.depth, Some(resp.url.as_str())) {
        Ok(Some(p)) => req.priority = p.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        Ok(None) => {}
        Err(e) => note(e),
    }
    true
}
