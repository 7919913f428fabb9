//! What a callback can do: read the response and its request's typed data, visit links (with
//! typed data for the child request), emit items.

use kumo_core::{Item, Request, Response, Url};
use kumo_engine::Analysis;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The per-response context shared by the callbacks of one page.
pub struct Ctx<'a> {
    resp: &'a Response,
    requests: Vec<Request>,
    items: Vec<Item>,
    issues: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(resp: &'a Response) -> Self {
        Ctx { resp, requests: Vec::new(), items: Vec::new(), issues: Vec::new() }
    }

    pub(super) fn into_analysis(self) -> Analysis {
        Analysis { requests: self.requests, items: self.items, issues: self.issues, ..Analysis::default() }
    }

    /// The response the callbacks run on.
    pub fn response(&self) -> &'a Response {
        self.resp
    }

    /// The page's URL (after redirects).
    pub fn url(&self) -> &'a Url {
        &self.resp.url
    }

    /// The typed data the request of this page carries (set by the page that linked here).
    pub fn data<T: DeserializeOwned>(&self) -> Option<T> {
        self.resp.request.data.get()
    }

    /// Follows `href` (resolved against the page); a bad URL is noted as an issue.
    pub fn visit(&mut self, href: &str) -> Option<&mut Request> {
        match self.resp.url.join(href) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                self.requests.push(self.resp.request.follow(url));
                self.requests.last_mut()
            }
            Ok(url) => {
                self.issues.push(format!("not followed: {url}"));
                None
            }
            Err(e) => {
                self.issues.push(format!("bad link {href:?}: {e}"));
                None
            }
        }
    }

    /// Follows `href` carrying `data` to the child request's [`Ctx::data`].
    pub fn visit_with<T: Serialize>(&mut self, href: &str, data: &T) {
        let mut problem = None;
        if let Some(req) = self.visit(href)
            && let Err(e) = req.data.set(data)
        {
            problem = Some(format!("cannot store data for {href:?}: {e}"));
        }
        self.issues.extend(problem);
    }

    /// Passes an item to the pipeline.
    pub fn emit(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Records what could not run on this page, as the analysis's issues.
    pub(super) fn note(&mut self, issues: impl IntoIterator<Item = String>) {
        self.issues.extend(issues);
    }
}
