//! The hostile site's pages made by code: spider traps, which make new URLs forever, and a
//! body too big to hold.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::Response;
use http::header::{CONTENT_TYPE, HeaderValue};

use crate::body::Body;
use crate::server::Routes;

/// A 200 MB page, sent as one 64 KiB block over and over with an honest `Content-Length`.
pub(crate) const HUGE: &str = "/f/huge.html";
const HUGE_BYTES: u64 = 200 * 1000 * 1000;

/// Every trap lives under this prefix; the ground truth names it.
pub(crate) const TRAP_PREFIX: &str = "/trap/";
/// The entrances a crawler finds on the normal pages.
pub(crate) const TRAP_ENTRANCES: [&str; 5] = [
    // An endless calendar: every month links to the next, the previous and next year's.
    "/trap/cal/2026/1.html",
    // A path that grows one new segment per page.
    "/trap/grow/",
    // A relative link that repeats the same segment forever (`x/` from `/a/x/` is `/a/x/x/`).
    "/trap/loop/",
    // A fresh session id in every link, in the path and in the query.
    "/trap/session/0.html;jsessionid=S0",
    // Pagination that never ends.
    "/trap/list?page=1",
];

/// The coded routes; the session counter makes each answer's session ids new.
#[derive(Debug, Default)]
pub(crate) struct HostileRoutes {
    sessions: AtomicU64,
}

impl Routes for HostileRoutes {
    fn respond(&self, path: &str, query: Option<&str>) -> Option<Response<Body>> {
        if path == HUGE {
            let block = Bytes::from("<p>Lorem ipsum dolor sit amet.</p>\n".repeat(1872));
            return Some(html(Body::repeat(block, HUGE_BYTES)));
        }
        let rest = path.strip_prefix(TRAP_PREFIX)?;
        let links = if let Some(date) = rest.strip_prefix("cal/") {
            calendar(date)?
        } else if rest.starts_with("grow/") {
            let segments = path.split('/').filter(|s| !s.is_empty()).count();
            vec![format!("{}/", segments - 1)]
        } else if rest.starts_with("loop/") {
            vec!["x/".to_owned()]
        } else if let Some(page) = rest.strip_prefix("session/") {
            let k: u64 = page.split(['.', ';']).next()?.parse().ok()?;
            let n = self.sessions.fetch_add(1, Ordering::Relaxed);
            vec![
                format!("/trap/session/{}.html;jsessionid=S{n}", (k + 1) % 4),
                format!("/trap/session/{}.html?PHPSESSID=P{n}", (k + 2) % 4),
            ]
        } else if rest == "list" {
            let page: u64 = query?.strip_prefix("page=")?.parse().ok()?;
            vec![format!("?page={}", page.saturating_add(1))]
        } else {
            return None;
        };
        let mut body = String::from("<!DOCTYPE html><title>More</title><ul>\n");
        for href in links {
            let _ = writeln!(body, "<li><a href=\"{href}\">more</a></li>");
        }
        Some(html(Body::full(body)))
    }
}

/// `Y/M.html` links to the next month, the previous month and the same month next year.
fn calendar(date: &str) -> Option<Vec<String>> {
    let (y, m) = date.strip_suffix(".html")?.split_once('/')?;
    let (y, m): (i64, i64) = (y.parse().ok()?, m.parse().ok()?);
    // Ten thousand years each way is endless enough, and keeps the arithmetic far from overflow.
    if !(1..=12).contains(&m) || y.abs() > 10_000 {
        return None;
    }
    let month = |y: i64, m: i64| {
        let i = y * 12 + (m - 1);
        format!("/trap/cal/{}/{}.html", i.div_euclid(12), i.rem_euclid(12) + 1)
    };
    Some(vec![month(y, m + 1), month(y, m - 1), month(y + 1, m)])
}

fn html(body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    resp
}
