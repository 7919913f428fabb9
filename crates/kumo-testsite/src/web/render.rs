//! What a served host answers for a path: a page's HTML, its robots.txt, or 404. Pure, so
//! the tests can crawl the web without sockets.

use std::fmt::Write as _;

use http::StatusCode;

use super::links::{for_each_link, parse_path, push_path};
use super::model::{HostKind, Model, Robots};

/// One answer, before latency and the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

const HTML: &str = "text/html; charset=utf-8";
const TEXT: &str = "text/plain; charset=utf-8";

const FILLER: &str = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod \
tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud \
exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.</p>\n";

fn answer(status: StatusCode, content_type: &'static str, body: String) -> Answer {
    Answer { status, content_type, body }
}

pub(crate) fn not_found() -> Answer {
    error(StatusCode::NOT_FOUND)
}

/// A short HTML page for an error status.
pub(crate) fn error(status: StatusCode) -> Answer {
    let reason = status.canonical_reason().unwrap_or("Error");
    let body = format!("<!DOCTYPE html><title>{} {reason}</title><h1>{reason}</h1>\n", status.as_u16());
    answer(status, HTML, body)
}

/// Host `id`'s answer for `path` (the query, if any, already cut off). `port` goes into
/// absolute links.
pub(crate) fn respond(model: &Model, id: u32, path: &str, port: u16) -> Answer {
    let host = model.host(id);
    if !host.kind.serves() {
        return not_found();
    }
    if path == "/robots.txt" {
        return robots_txt(host.robots);
    }
    match parse_path(model, id, path) {
        Some(k) => answer(StatusCode::OK, HTML, page(model, id, k, port)),
        None => not_found(),
    }
}

fn robots_txt(robots: Robots) -> Answer {
    let body = match robots {
        Robots::NotFound => return not_found(),
        Robots::ServerError => {
            return answer(StatusCode::INTERNAL_SERVER_ERROR, TEXT, "robots.txt is unavailable\n".into());
        }
        Robots::AllowAll => "User-agent: *\nAllow: /\n".to_owned(),
        Robots::Disallow => format!("User-agent: *\nDisallow: {}\n", super::model::DISALLOWED_PREFIX),
        Robots::CrawlDelay(d) => format!("User-agent: *\nCrawl-delay: {}\nDisallow:\n", d.as_secs_f64()),
    };
    answer(StatusCode::OK, TEXT, body)
}

/// The HTML of page `k` of host `id`: a title, every link, and filler up to `page_bytes`.
pub(crate) fn page(model: &Model, id: u32, k: u32, port: u16) -> String {
    let host = model.host(id);
    let links = model.cfg.links_per_page + 4;
    let mut html = String::with_capacity(model.cfg.page_bytes.max(256) + 80 * links);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    let what = match host.kind {
        HostKind::Trap => "Calendar",
        HostKind::Spam => "Best deals",
        _ => "Page",
    };
    let _ = write!(html, "{what} {k} of {}</title></head>\n<body><h1>{what} {k}</h1>\n<ul>\n", host.name);
    for_each_link(model, id, k, |link| {
        html.push_str("<li><a href=\"");
        if link.host != id {
            let _ = write!(html, "http://{}:{port}", model.host(link.host).name);
        }
        push_path(&mut html, model, link.host, link.page);
        html.push_str("\">");
        let _ = write!(html, "{} {}", model.host(link.host).name, link.page);
        html.push_str("</a></li>\n");
    });
    html.push_str("</ul>\n");
    // Bounded: every turn adds a non-empty paragraph.
    while html.len() + 16 < model.cfg.page_bytes {
        html.push_str(FILLER);
    }
    html.push_str("</body></html>\n");
    html
}
