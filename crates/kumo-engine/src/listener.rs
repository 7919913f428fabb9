//! Listeners (Spiderman's plug-in points): hooks the stages call as a crawl runs, so users
//! extend kumo without forking it.
//!
//! Every method has a no-op default. They are called synchronously from the stage tasks, so
//! a listener must be cheap and must never block (hand heavy work to a channel or a task).
//!
//! When each is called:
//! - [`Listener::before_fetch`]: before each page fetch, retries included (robots.txt
//!   fetches are the robots cache's own and are not reported);
//! - [`Listener::after_fetch`]: for each response received (any status), before analysis;
//! - [`Listener::links_found`]: after analysis, with the requests that passed scope (before
//!   the frontier's seen check);
//! - [`Listener::target_page`]: when the analysis of a response produced at least one item;
//! - [`Listener::item`]: for each item, once the frontier has committed its page, just
//!   before it goes to the pipeline;
//! - [`Listener::error`]: for each fetch failure and status failure the scheduler records;
//! - [`Listener::finish`]: once per run, with its summary.

use std::fmt;
use std::sync::Arc;

use kumo_core::{Item, Request, Response};

use crate::{CrawlError, Summary};

/// A crawl observer. All methods default to doing nothing.
pub trait Listener: Send + Sync {
    /// Before each fetch of a leased request (pages and sitemaps, retries included; not
    /// robots.txt).
    fn before_fetch(&self, _request: &Request) {}
    /// For each response received, any status, before it is analyzed.
    fn after_fetch(&self, _response: &Response) {}
    /// After the analysis of `page`, with its links that passed scope (and the analyzer's
    /// [`steer_link`](crate::Analyzer::steer_link)), before the frontier's seen check.
    fn links_found(&self, _page: &Request, _admitted: &[Request]) {}
    /// When the analysis of a response produced at least one item.
    fn target_page(&self, _response: &Response) {}
    /// For each item, once the frontier has committed its page, before it goes to the
    /// pipeline.
    fn item(&self, _item: &Item) {}
    /// For each failed fetch, each request given up after retryable statuses, and each error
    /// met while analyzing a page (storage errors are not reported here).
    fn error(&self, _error: &CrawlError) {}
    /// Once per run, at its end, with its summary.
    fn finish(&self, _summary: &Summary) {}
}

/// The listeners of a crawl, called in the order they were added.
#[derive(Clone, Default)]
pub struct Listeners(pub Vec<Arc<dyn Listener>>);

impl fmt::Debug for Listeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Listeners({})", self.0.len())
    }
}

impl Listeners {
    /// Adds `l`, called after those already there.
    pub fn push(&mut self, l: Arc<dyn Listener>) {
        self.0.push(l);
    }

    /// Whether there is no listener.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn before_fetch(&self, r: &Request) {
        self.0.iter().for_each(|l| l.before_fetch(r));
    }

    pub(crate) fn after_fetch(&self, r: &Response) {
        self.0.iter().for_each(|l| l.after_fetch(r));
    }

    /// Clones the admitted requests only when someone listens.
    pub(crate) fn links_found<'a, T: 'a>(
        &self,
        page: &Request,
        admitted: impl IntoIterator<Item = &'a (T, Request)>,
    ) {
        if self.0.is_empty() {
            return;
        }
        let reqs: Vec<Request> = admitted.into_iter().map(|(_, r)| r.clone()).collect();
        self.0.iter().for_each(|l| l.links_found(page, &reqs));
    }

    pub(crate) fn target_page(&self, r: &Response) {
        self.0.iter().for_each(|l| l.target_page(r));
    }

    pub(crate) fn items(&self, items: &[Item]) {
        for i in items {
            self.0.iter().for_each(|l| l.item(i));
        }
    }

    pub(crate) fn error(&self, e: &CrawlError) {
        self.0.iter().for_each(|l| l.error(e));
    }

    pub(crate) fn finish(&self, s: &Summary) {
        self.0.iter().for_each(|l| l.finish(s));
    }
}
