//! The fault catalogue of the hostile site's main host: each path, what it serves, and what a
//! correct crawl makes of it.

use std::time::Duration;

use bytes::Bytes;

use super::content;
use super::raw;
use super::routes;
use crate::Fixture;

/// What a correct crawl makes of one URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Fetched exactly once, a success.
    Normal,
    /// Fails at first, works within two retries: fetched in the end.
    Flaky,
    /// Fails three times, then works: a failure of the first crawl, fetched after a requeue.
    Transient,
    /// Fails for good, with this kind of failure (kumo's name for it; `None` for any).
    Fails(Option<&'static str>),
    /// Requested at most once, outcome not fixed (redirects, loops).
    AtMostOnce,
    /// Never requested.
    Forbidden,
}

/// One URL of the catalogue: a path on the main host (with its fixtures) or a whole URL
/// served elsewhere.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) href: String,
    pub(crate) fixtures: Vec<Fixture>,
    pub(crate) expect: Expect,
    /// The exact title the page's record must carry, for pages with odd charsets.
    pub(crate) title: Option<&'static str>,
    /// Whether the normal pages link to it (the hops of a redirect chain are only reached
    /// through the chain).
    pub(crate) linked: bool,
}

fn entry(href: impl Into<String>, fixtures: Vec<Fixture>, expect: Expect) -> Entry {
    Entry { href: href.into(), fixtures, expect, title: None, linked: true }
}

fn unlinked(href: impl Into<String>, fixtures: Vec<Fixture>, expect: Expect) -> Entry {
    Entry { linked: false, ..entry(href, fixtures, expect) }
}

fn page(title: &str) -> Fixture {
    Fixture::html(&format!("<!DOCTYPE html><title>{title}</title><p>Fine now.</p>\n"))
}

fn status(code: u16) -> Fixture {
    Fixture::status(code, "try again")
}

fn with_body(content_type: &str, body: Bytes) -> Fixture {
    Fixture { headers: vec![("content-type".into(), content_type.into())], body, ..Fixture::default() }
}

/// Where the other hosts of the hostile site listen, for links that lead there.
pub(crate) struct Elsewhere<'a> {
    /// The broken-HTTP host (robots.txt: none).
    pub(crate) raw: &'a str,
    /// A host outside the crawl, which must never be asked anything.
    pub(crate) outside: &'a str,
}

/// The main host's faults, in the order their links are salted over the site.
pub(crate) fn catalogue(at: &Elsewhere<'_>) -> Vec<Entry> {
    [
        slow_pages(),
        malformed_pages(at),
        flaky_pages(),
        retry_after_pages(),
        transient_pages(),
        failing_pages(at),
        bad_redirects(at),
        never_asked(),
        compression_bombs(),
        redirect_chain(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A status answer with a `Retry-After` header of `value`, then the page titled `title`.
fn retry_after(code: u16, value: &str, title: &str) -> Vec<Fixture> {
    vec![status(code).with_header("retry-after", value), page(title)]
}

/// Slow, but within any sane timeout.
fn slow_pages() -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/slow-head.html", vec![page("Slow head").latency(Duration::from_millis(800))], Normal),
        entry(
            "/f/trickle.html",
            vec![
                with_body("text/html", content::filler_page("Trickle", 2000))
                    .trickle(100, Duration::from_millis(40)),
            ],
            Normal,
        ),
    ]
}

/// Malformed HTML and charsets (some with the exact title their record must carry), and a
/// `Content-Length` shorter than the page on the broken-HTTP host: all fetched.
fn malformed_pages(at: &Elsewhere<'_>) -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/deep-nesting.html", vec![with_body("text/html", content::deep_nesting())], Normal),
        entry("/f/nul-bytes.html", vec![with_body("text/html", content::nul_bytes())], Normal),
        entry(
            "/f/invalid-utf8.html",
            vec![with_body("text/html; charset=utf-8", content::invalid_utf8())],
            Normal,
        ),
        Entry {
            title: Some(content::SHIFT_JIS_TITLE),
            ..entry("/f/meta-shift-jis.html", vec![with_body("text/html", content::meta_shift_jis())], Normal)
        },
        Entry {
            title: Some(content::WINDOWS_1251_TITLE),
            ..entry(
                "/f/windows-1251.html",
                vec![with_body("text/html; charset=windows-1251", content::windows_1251())],
                Normal,
            )
        },
        Entry {
            title: Some(content::BOM_TITLE),
            ..entry(
                "/f/bom-against-header.html",
                vec![with_body("text/html; charset=iso-8859-1", content::bom_against_header())],
                Normal,
            )
        },
        entry("/f/bad-hrefs.html", vec![with_body("text/html", content::bad_hrefs(at.outside))], Normal),
        entry(format!("{}{}", at.raw, raw::LENGTH_TOO_SHORT), vec![], Normal),
    ]
}

/// Fails at first (an error status, a reset), then works within the default two retries.
fn flaky_pages() -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/flaky-500.html", vec![status(500), page("Flaky 500")], Flaky),
        entry("/f/flaky-503.html", vec![status(503), status(503), page("Flaky 503")], Flaky),
        entry(
            "/f/flaky-reset.html",
            vec![
                Fixture { reset_after: Some(100), ..with_body("text/html", content::filler_page("x", 4000)) },
                page("Flaky reset"),
            ],
            Flaky,
        ),
    ]
}

/// A 429 or 503 with a small, a day's, an absurd, a garbled or a past `Retry-After`: each
/// works on the retry.
fn retry_after_pages() -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/retry-after-small.html", retry_after(429, "1", "Small Retry-After"), Flaky),
        entry("/f/retry-after-day.html", retry_after(503, "86400", "A day's Retry-After"), Flaky),
        entry(
            "/f/retry-after-absurd.html",
            retry_after(429, "18446744073709551615", "Absurd Retry-After"),
            Flaky,
        ),
        entry("/f/retry-after-garbage.html", retry_after(429, "soon, maybe", "Garbage Retry-After"), Flaky),
        entry(
            "/f/retry-after-past.html",
            retry_after(503, "Wed, 21 Oct 2015 07:28:00 GMT", "Past Retry-After"),
            Flaky,
        ),
    ]
}

/// Fails three times, then works: only a requeue fetches it.
fn transient_pages() -> Vec<Entry> {
    use Expect::*;
    vec![
        entry(
            "/f/transient-500.html",
            vec![status(500), status(500), status(500), page("Transient 500")],
            Transient,
        ),
        entry(
            "/f/transient-reset.html",
            vec![
                Fixture { reset_after: Some(10), ..page("x") },
                Fixture { reset_after: Some(10), ..page("x") },
                Fixture { reset_after: Some(10), ..page("x") },
                page("Transient reset"),
            ],
            Transient,
        ),
    ]
}

/// Fails for good: an error status, a body too large or too slow, broken HTTP, redirects
/// without a usable location.
fn failing_pages(at: &Elsewhere<'_>) -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/gone-500.html", vec![status(500)], Fails(Some("status"))),
        entry(routes::HUGE, vec![], Fails(Some("too-large"))),
        entry(
            "/f/trickle-forever.html",
            vec![Fixture { chunk_size: 1, chunk_delay: Duration::from_millis(500), ..page("Forever") }],
            Fails(Some("timeout")),
        ),
        entry(format!("{}{}", at.raw, raw::RESET_IN_HEAD), vec![], Fails(None)),
        entry(format!("{}{}", at.raw, raw::LENGTH_TOO_LONG), vec![], Fails(Some("body"))),
        entry(format!("{}{}", at.raw, raw::NOT_HTTP), vec![], Fails(None)),
        entry(format!("{}{}", at.raw, raw::SILENT), vec![], Fails(Some("timeout"))),
        entry("/f/no-location.html", vec![status(302)], Fails(Some("bad-redirect"))),
        entry(
            "/f/bad-location.html",
            vec![Fixture::redirect(301, "http://[::1")],
            Fails(Some("bad-redirect")),
        ),
    ]
}

/// Redirects that lead nowhere a crawler may go, a loop, and one that works.
fn bad_redirects(at: &Elsewhere<'_>) -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/f/to-file.html", vec![Fixture::redirect(302, "file:///etc/passwd")], AtMostOnce),
        entry("/f/to-data.html", vec![Fixture::redirect(302, "data:text/html,<p>x</p>")], AtMostOnce),
        entry("/f/to-javascript.html", vec![Fixture::redirect(302, "javascript:alert(1)")], AtMostOnce),
        entry(
            "/f/to-outside.html",
            vec![Fixture::redirect(302, &format!("{}/stolen.html", at.outside))],
            AtMostOnce,
        ),
        entry("/f/loop-a.html", vec![Fixture::redirect(302, "/f/loop-b.html")], AtMostOnce),
        entry("/f/loop-b.html", vec![Fixture::redirect(302, "/f/loop-a.html")], AtMostOnce),
        entry("/f/moved.html", vec![Fixture::redirect(301, "/f/moved-here.html")], AtMostOnce),
        entry("/f/moved-here.html", vec![page("Moved here")], Normal),
    ]
}

/// Never to be asked for: robots.txt forbids it, it is too long to send, or it is not http
/// at all.
fn never_asked() -> Vec<Entry> {
    use Expect::*;
    vec![
        entry("/private/secret.html", vec![page("Secret")], Forbidden),
        entry(format!("/f/long?q={}", "a".repeat(100_000)), vec![], Forbidden),
        entry("file:///etc/passwd", vec![], Forbidden),
        entry("data:text/html,<p>inline</p>", vec![], Forbidden),
        entry("javascript&colon;alert(1)", vec![], Forbidden),
    ]
}

/// A compression bomb per content encoding: each fails as too large.
fn compression_bombs() -> Vec<Entry> {
    content::BOMBS
        .into_iter()
        .map(|(enc, bomb)| {
            let f = Fixture {
                headers: vec![
                    ("content-type".into(), "text/html".into()),
                    ("content-encoding".into(), enc.into()),
                ],
                body: Bytes::from_static(bomb),
                ..Fixture::default()
            };
            entry(format!("/f/bomb-{enc}.html"), vec![f], Expect::Fails(Some("too-large")))
        })
        .collect()
}

/// A 30-hop chain, followed up to the crawler's cap (10 for kumo); the hop at the cap fails.
/// Only its first hop is linked.
fn redirect_chain() -> Vec<Entry> {
    use Expect::*;
    let mut c = vec![unlinked("/f/chain/", vec![], Fails(Some("bad-redirect")))];
    for i in 0..30 {
        let hop = Fixture::redirect(302, &format!("/f/chain/{}.html", i + 1));
        let e = entry(format!("/f/chain/{i}.html"), vec![hop], AtMostOnce);
        c.push(Entry { linked: i == 0, ..e });
    }
    c.push(unlinked("/f/chain/30.html", vec![page("End of the chain")], AtMostOnce));
    c
}
