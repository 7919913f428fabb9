//! WARC records of the exchanges a crawl makes (`CrawlConfig::warc`). They are built where
//! the response is (a parser, or the downloader task that fetched robots.txt), travel with
//! their page's result, and are appended by the committer just before the commit that
//! completes the page; that commit's saved counters hold where the archive then ends
//! (`Tally::warc`), so a resumed crawl cuts the files back there and fetches again exactly
//! the pages whose records it cut.

use kumo_core::Response;
use kumo_warc::{Exchange, RecordOptions, Records, Revisit};

/// The records of `resp`, if its downloader recorded the exchange: its request, its answer
/// (or a revisit of an answer archived before) and the links found on it.
pub(crate) fn records(
    opts: &RecordOptions,
    resp: &Response,
    outlinks: &[String],
    revisit: Option<Revisit>,
) -> Option<Records> {
    let wire = resp.wire.as_ref()?;
    let exchange = Exchange {
        // The URL that answered: the request's, without its fragment.
        target: resp.url.as_str(),
        date: resp.fetched_at,
        method: &resp.request.method,
        request_headers: &wire.request_headers,
        request_body: &resp.request.body,
        version: wire.version,
        status: resp.status,
        response_headers: &resp.headers,
        payload: resp.wire_body(),
        ip: wire.remote.map(|a| a.ip()),
        truncated: wire.truncated,
        outlinks,
        revisit,
    };
    Some(kumo_warc::build(&exchange, opts))
}
