//! A site's script hooks over one page's analysis: `extract` adds items, `item` changes or
//! drops each, and `rewrite`, `allow` and `priority` act on each link before the engine checks
//! its scope and fingerprint (so de-duplication sees the rewritten URL). A call that fails is
//! a `script` error for the page, and what it would have decided stays as it was.

use kumo_core::{Item, Response, Url};
use kumo_engine::{Analysis, ScriptFailure};
use kumo_script::{ItemAnswer, Page, PageView, Rewrite, Script};

/// What the items a script's `extract` makes are tagged (`_model`).
pub const SCRIPT_MODEL: &str = "script";

pub(crate) fn apply(script: &Script, resp: &Response, body: &str, out: &mut Analysis) {
    let mut failed = Vec::new();
    let mut note = |e: kumo_script::ScriptError| {
        failed
            .push(ScriptFailure { hook: e.hook().unwrap_or("script"), message: format!("{}: {e}", resp.url) })
    };
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
    // The links, each hook called on all of them at once (one call of the sandbox per hook
    // and page): rewritten, then allowed, then given their priority.
    let referrer = resp.url.as_str();
    let mut requests = std::mem::take(&mut out.requests);
    if script.defines("rewrite") {
        let links: Vec<(&str, u32)> = requests.iter().map(|r| (r.url.as_str(), r.depth)).collect();
        let answers = script.rewrite_each(&links);
        let mut kept = Vec::with_capacity(requests.len());
        for (mut req, answer) in requests.into_iter().zip(answers) {
            match answer {
                Ok(Rewrite::Keep) => {}
                Ok(Rewrite::Drop) => continue,
                Ok(Rewrite::To(to)) => match Url::parse(&to) {
                    Ok(url) => req.url = url,
                    Err(_) => {
                        note(kumo_script::ScriptError::BadAnswer {
                            hook: "rewrite",
                            got: to,
                            wanted: "a URL",
                        });
                        continue;
                    }
                },
                Err(e) => note(e),
            }
            kept.push(req);
        }
        requests = kept;
    }
    if script.defines("allow") {
        let links: Vec<(&str, u32)> = requests.iter().map(|r| (r.url.as_str(), r.depth)).collect();
        let answers = script.allow_each(&links);
        let mut kept = Vec::with_capacity(requests.len());
        for (req, answer) in requests.into_iter().zip(answers) {
            match answer {
                Ok(Some(false)) => continue,
                Ok(_) => {}
                Err(e) => note(e),
            }
            kept.push(req);
        }
        requests = kept;
    }
    if script.defines("priority") {
        let links: Vec<(&str, u32)> = requests.iter().map(|r| (r.url.as_str(), r.depth)).collect();
        let answers = script.priority_each(&links, Some(referrer));
        for (req, answer) in requests.iter_mut().zip(answers) {
            match answer {
                Ok(Some(p)) => req.priority = p.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
                Ok(None) => {}
                Err(e) => note(e),
            }
        }
    }
    out.requests = requests;
    out.script_errors.extend(failed);
}
