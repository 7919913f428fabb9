//! The synthetic site's link graph: one function lists every link of a document, and both the
//! page renderer and the ground-truth search call it, so the two cannot disagree.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::SiteConfig;

/// One document of the site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Doc {
    /// `/index.html` (also served at `/`).
    Index,
    /// `/page/{k}.html`.
    Page(usize),
}

impl Doc {
    /// A number for seeding: the index is 0, page `k` is `k + 1`.
    pub(crate) fn id(self) -> u64 {
        match self {
            Doc::Index => 0,
            Doc::Page(k) => k as u64 + 1,
        }
    }
}

/// Independent random streams per document, so that changing how much padding a page gets
/// never changes its links.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    Links = 1,
    Item = 2,
    Padding = 3,
    /// The shared pool of padding paragraphs.
    Pool = 4,
}

/// A counter-based random source: the `i`-th number of a stream is `xxh3(seed; doc, i)`.
///
/// Counter-based rather than stateful so that every page can be generated on its own, in any
/// order, on any thread, without generating the pages before it.
#[derive(Debug)]
pub(crate) struct Rng {
    seed: u64,
    doc: u64,
    i: u64,
}

impl Rng {
    pub(crate) fn new(seed: u64, doc: Doc, stream: Stream) -> Self {
        Rng { seed, doc: doc.id(), i: (stream as u64) << 48 }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut input = [0u8; 16];
        input[..8].copy_from_slice(&self.doc.to_le_bytes());
        input[8..].copy_from_slice(&self.i.to_le_bytes());
        self.i += 1;
        xxh3_64_with_seed(&input, self.seed)
    }

    /// A number in `0..n`; `n` must be positive. (The modulo bias is irrelevant here.)
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// How a same-host link to `/page/{k}.html` is written. All resolve to the same URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// `/page/k.html`
    AbsPath,
    /// `http://HOST/page/k.html`
    AbsUrl,
    /// `//HOST/page/k.html`
    ProtoRel,
    /// `k.html` (from the index: `page/k.html`)
    Rel,
    /// `./k.html` (from the index: `./page/k.html`)
    DotRel,
    /// `../page/k.html` (never used from the index)
    DotDotRel,
}

const PAGE_SPELLINGS: [Spelling; 6] = [
    Spelling::AbsPath,
    Spelling::AbsUrl,
    Spelling::ProtoRel,
    Spelling::Rel,
    Spelling::DotRel,
    Spelling::DotDotRel,
];

/// A `#fragment` a link may carry; it never makes a new URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frag {
    Reviews,
    Specs,
    Top,
}

impl Frag {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Frag::Reviews => "#reviews",
            Frag::Specs => "#specs",
            Frag::Top => "#top",
        }
    }
}

/// Where a link points, in a form the renderer can spell and the ground truth can resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Href {
    /// A page, in one of several spellings.
    Page { k: usize, spelling: Spelling, frag: Option<Frag> },
    /// `/index.html`, or `http://HOST/index.html` when `absolute`.
    Index { absolute: bool },
    /// `/page/{k}.html?view=print`: a distinct URL for page `k`'s document.
    Print(usize),
    /// A fragment of the current URL.
    Fragment(Frag),
    /// `{external_base}/ext/{doc id}/{i}`: another host.
    External(usize),
    /// `mailto:sales@example.com`
    Mailto,
    /// `javascript:void(0)`
    Javascript,
}

/// A same-host URL a link resolves to, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Doc(Doc),
    /// The `?view=print` variant of page `k`.
    Print(usize),
    /// The URL of the page the link is on (a bare fragment).
    Current,
    /// Another host or scheme: nothing a same-host crawler fetches.
    Elsewhere,
}

impl Href {
    pub(crate) fn target(self) -> Target {
        match self {
            Href::Page { k, .. } => Target::Doc(Doc::Page(k)),
            Href::Index { .. } => Target::Doc(Doc::Index),
            Href::Print(k) => Target::Print(k),
            Href::Fragment(_) => Target::Current,
            Href::External(_) | Href::Mailto | Href::Javascript => Target::Elsewhere,
        }
    }
}

/// Why a link is there; the renderer turns it into the anchor text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Home,
    Contact,
    AddToCart,
    Reviews,
    Start,
    Featured,
    Child,
    Parent,
    Specs,
    Print,
    Partner,
    SeeAlso,
    /// An exact duplicate of the link before it.
    Again,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) href: Href,
    pub(crate) role: Role,
}

/// How many featured pages the index links to, besides page 0.
const FEATURED: usize = 8;
/// Pages whose number is a multiple of this link to their own `?view=print` variant.
pub(crate) const PRINT_EVERY: usize = 50;

/// Collects links for [`for_each_link`], counting them.
struct Out<F> {
    f: F,
    count: usize,
}

impl<F: FnMut(Link)> Out<F> {
    fn emit(&mut self, href: Href, role: Role) {
        self.count += 1;
        (self.f)(Link { href, role });
    }
}

/// Calls `f` with every `<a href>` of `doc`, in page order.
///
/// Fixed links come first (navigation, the tree edges that make every page reachable, the
/// print variant, externals), then random same-host links fill up to `links_per_page`.
pub(crate) fn for_each_link(cfg: &SiteConfig, doc: Doc, f: impl FnMut(Link)) {
    let n = cfg.pages;
    let mut rng = Rng::new(cfg.seed, doc, Stream::Links);
    let mut out = Out { f, count: 0 };
    // `../page/k.html` from `/index.html` would climb above the root; leave it out there.
    let spellings = if doc == Doc::Index { &PAGE_SPELLINGS[..5] } else { &PAGE_SPELLINGS[..] };
    let page = |k, spelling, frag| Href::Page { k, spelling, frag };

    let absolute = rng.one_in(4);
    out.emit(Href::Index { absolute }, Role::Home);
    out.emit(Href::Mailto, Role::Contact);
    out.emit(Href::Javascript, Role::AddToCart);
    out.emit(Href::Fragment(Frag::Reviews), Role::Reviews);

    match doc {
        Doc::Index if n > 0 => {
            out.emit(page(0, Spelling::Rel, None), Role::Start);
            for _ in 0..FEATURED.min(n) {
                let k = rng.below(n);
                let spelling = spellings[rng.below(spellings.len())];
                out.emit(page(k, spelling, None), Role::Featured);
            }
        }
        Doc::Index => {}
        Doc::Page(k) => {
            // The heap tree (children 2k+1, 2k+2) is what makes every page reachable.
            for child in [2 * k + 1, 2 * k + 2] {
                if child < n {
                    let spelling = spellings[rng.below(spellings.len())];
                    out.emit(page(child, spelling, None), Role::Child);
                }
            }
            if k > 0 {
                out.emit(page((k - 1) / 2, Spelling::DotDotRel, None), Role::Parent);
            }
            let specs = rng.below(n);
            out.emit(page(specs, Spelling::AbsPath, Some(Frag::Specs)), Role::Specs);
            if k % PRINT_EVERY == 0 {
                out.emit(Href::Print(k), Role::Print);
            }
        }
    }

    let externals = 2 + rng.below(2);
    for i in 0..externals {
        out.emit(Href::External(i), Role::Partner);
    }

    if n == 0 {
        return;
    }
    // Bounded: every turn emits at least one link.
    while out.count < cfg.links_per_page {
        let k = rng.below(n);
        let spelling = spellings[rng.below(spellings.len())];
        let frag = match rng.below(8) {
            0 => Some(Frag::Specs),
            1 => Some(Frag::Top),
            _ => None,
        };
        let href = page(k, spelling, frag);
        out.emit(href, Role::SeeAlso);
        if out.count < cfg.links_per_page && rng.one_in(4) {
            out.emit(href, Role::Again);
        }
    }
}
