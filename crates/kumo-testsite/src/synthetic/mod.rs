//! The synthetic shop: a seeded, deterministic site whose exact crawl result is known.
//!
//! Layout: `/index.html` (also `/`) and `/page/{k}.html` for `k` in `0..pages`; every
//! other path under the site is left to the next route (and so usually `404`).
//!
//! Every document carries one item:
//! `div.product[data-sku] > h1.product-title, span.price, span.sku`, with SKU `SKU-{k:06}` on
//! page `k` and `SKU-INDEX` on the index, so `pages + 1` distinct SKUs in all.
//!
//! Link graph (see `links.rs`): page `k` links to `2k+1` and `2k+2` (a heap tree, so every
//! page is reachable from the index), to its parent, and to random pages in six spellings
//! of the same URL (`/page/j.html`, `j.html`, `./j.html`, `../page/j.html`,
//! `http://HOST/page/j.html`, `//HOST/page/j.html`), some with fragments, with duplicates.
//! Page `k` with `k % 50 == 0` links to `/page/{k}.html?view=print`, a distinct URL for the
//! same document. Each page also has 2–3 links to `external_base`, a `mailto:` and a
//! `javascript:` link. Random choices come from xxh3 over `(seed, document, counter)`.

mod links;
mod page;
mod truth;

#[cfg(test)]
mod tests;

pub(crate) use page::Site;

/// The shape of a synthetic site. Same config, same host ⇒ byte-identical pages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SiteConfig {
    /// `N`: pages `/page/0.html` ..= `/page/{N-1}.html`, plus `/index.html`.
    pub pages: usize,
    /// The approximate size of each page's HTML, reached with lorem-ipsum paragraphs.
    pub page_bytes: usize,
    /// The approximate number of `<a href>` links per page. Each page has about 10 fixed
    /// links (16 on the index) whatever this says; random same-host links fill up the rest.
    pub links_per_page: usize,
    /// Seeds every random choice.
    pub seed: u64,
    /// Where external links point, e.g. `http://127.0.0.2:40123` (a trap server). `None`
    /// points them at `http://127.0.0.2:9`, a loopback address nothing answers on.
    pub external_base: Option<String>,
    /// Extra `href` values written as given (not escaped, so they may be malformed on
    /// purpose), spread over the first `SALT_SPREAD` pages: the i-th goes on page
    /// `i % SALT_SPREAD` (on the index when the site has no pages). They lead off the
    /// synthetic site, so the ground truth ignores them; the hostile site salts its faults
    /// in this way.
    pub salt: Vec<String>,
    /// Serve every document with an `ETag` and a `Last-Modified` (both move when the document
    /// is changed with [`crate::TestServer::change_pages`]) and answer a conditional request
    /// that names the current ones with `304 Not Modified`.
    pub validators: bool,
}

/// How many pages (from page 0) carry [`SiteConfig::salt`] links.
pub const SALT_SPREAD: usize = 50;

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            pages: 100,
            page_bytes: 12_000,
            links_per_page: 20,
            seed: 1,
            external_base: None,
            salt: Vec::new(),
            validators: false,
        }
    }
}

/// What a correct same-host crawl of a synthetic site finds, starting from `/index.html`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroundTruth {
    /// `N + 1`: distinct documents (distinct SKUs), the index included.
    pub documents: usize,
    /// `Q`: distinct `?view=print` URLs linked somewhere.
    pub query_variants: usize,
    /// `N + 1 + Q`: distinct same-host URLs (fragments removed) a crawler following every
    /// same-host `<a href>` fetches.
    pub unique_urls: usize,
    /// `depth_counts[d]`: same-host URLs (documents and query variants) whose shortest link
    /// distance from `/index.html` is `d`; the index is depth 0.
    pub depth_counts: Vec<usize>,
}

impl GroundTruth {
    /// URLs at depth `0..=d` — what a crawl limited to depth `d` fetches.
    pub fn urls_within_depth(&self, d: usize) -> usize {
        self.depth_counts.iter().take(d.saturating_add(1)).sum()
    }
}
