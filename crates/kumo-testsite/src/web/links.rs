//! Pages of the synthetic web: their paths, and one function listing every link of a page,
//! which both the renderer and the ground truth call, so the two cannot disagree.

use std::fmt::Write as _;

use super::model::{HostKind, Model, Rng, Robots, Stream};

/// One link: page `page` of host `host` (an index into the host table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Link {
    pub(crate) host: u32,
    pub(crate) page: u32,
}

/// Page `k` of a host with `Disallow: /private/` lives under that prefix when this holds.
fn is_private(robots: Robots, k: u32) -> bool {
    robots == Robots::Disallow && k % 5 == 2
}

/// Whether a crawler obeying host `robots` may fetch its page `k`.
pub(crate) fn allowed(robots: Robots, k: u32) -> bool {
    match robots {
        Robots::ServerError => false,
        _ => !is_private(robots, k),
    }
}

/// The trap's day 1 is 2026-01-01, as days since 0000-03-01 (see [`days_from_civil`]).
const TRAP_EPOCH: u64 = days_from_civil(2026, 1, 1);

/// Appends the path of page `k` of host `id`.
pub(crate) fn push_path(out: &mut String, model: &Model, id: u32, k: u32) {
    let host = model.host(id);
    if k == 0 {
        out.push('/');
    } else if host.kind == HostKind::Trap {
        let (y, m, d) = civil_from_days(TRAP_EPOCH + u64::from(k) - 1);
        let _ = write!(out, "/cal/{y}/{m:02}/{d:02}");
    } else if is_private(host.robots, k) {
        let _ = write!(out, "/private/{k}.html");
    } else {
        let _ = write!(out, "/p/{k}.html");
    }
}

/// The page host `id` serves at `path` (only its canonical spelling), if any.
pub(crate) fn parse_path(model: &Model, id: u32, path: &str) -> Option<u32> {
    let host = model.host(id);
    if path == "/" {
        return Some(0);
    }
    let k = match host.kind {
        HostKind::Trap => {
            let mut parts = path.strip_prefix("/cal/")?.split('/');
            let y = number(parts.next()?, 4)?;
            let m = number(parts.next()?, 2)?;
            let d = number(parts.next()?, 2)?;
            if parts.next().is_some() || y < 2026 || civil_from_days(days_from_civil(y, m, d)) != (y, m, d) {
                return None;
            }
            u32::try_from(days_from_civil(y, m, d) - TRAP_EPOCH + 1).ok()?
        }
        HostKind::Ordinary | HostKind::Spam => {
            let (private, rest) = match path.strip_prefix("/private/") {
                Some(rest) => (true, rest),
                None => (false, path.strip_prefix("/p/")?),
            };
            let k = u32::try_from(number(rest.strip_suffix(".html")?, 1)?).ok()?;
            if k == 0 || k >= host.pages || private != is_private(host.robots, k) {
                return None;
            }
            k
        }
        _ => return None,
    };
    Some(k)
}

/// A decimal of at least `min_digits` digits without a leading zero beyond them.
fn number(s: &str, min_digits: usize) -> Option<u64> {
    let canonical = s.len() >= min_digits
        && s.bytes().all(|b| b.is_ascii_digit())
        && (s.len() == min_digits || !s.starts_with('0'))
        && s.len() <= 12;
    if canonical { s.parse().ok() } else { None }
}

/// Days since 0000-03-01 of a date (Howard Hinnant's algorithm, for years ≥ 1).
const fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let (era, yoe) = (y / 400, y % 400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy
}

/// The date `days` after 0000-03-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let (era, doe) = (days / 146_097, days % 146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = era * 400 + yoe + u64::from(m <= 2);
    (y, m, d)
}

/// Calls `f` with every link of page `k` of host `id`, in page order.
pub(crate) fn for_each_link(model: &Model, id: u32, k: u32, mut f: impl FnMut(Link)) {
    let host = model.host(id);
    match host.kind {
        HostKind::Ordinary | HostKind::Spam => {}
        HostKind::Trap => {
            // Day `k` links home and to the next day, forever.
            if k > 0 {
                f(Link { host: id, page: 0 });
            }
            f(Link { host: id, page: k.saturating_add(1) });
            return;
        }
        _ => return,
    }
    let n = host.pages;
    let mut out = Out { f, count: 0 };
    if k > 0 {
        out.emit(Link { host: id, page: 0 });
    }
    // The heap tree (children 2k+1, 2k+2) makes every page reachable from `/`.
    for child in [2 * u64::from(k) + 1, 2 * u64::from(k) + 2] {
        if child < u64::from(n) {
            out.emit(Link { host: id, page: child as u32 });
        }
    }
    let mut rng = Rng::new(model.cfg.seed, Stream::Links, id.into(), k.into());
    let wanted = model.cfg.links_per_page;
    if host.kind == HostKind::Spam {
        let farm = model.spam.end - model.spam.start;
        // Bounded: every turn emits a link.
        while out.count < wanted {
            let target = model.spam.start + rng.below(farm.into()) as u32;
            out.emit(random_page(model, &mut rng, target));
        }
        return;
    }
    if k == 0 {
        // Not counted: they come on top of the page's own links.
        for odd in model.odd_links_of(id) {
            (out.f)(Link { host: odd, page: 0 });
        }
    }
    while out.count < wanted {
        // A one-page host has nothing of its own to link to: all its links go elsewhere.
        let cross = n <= 1 || rng.below(100) < u64::from(model.cfg.cross_host_percent);
        let link = if cross {
            let target = model.by_rank[model.popularity.sample(&mut rng)];
            random_page(model, &mut rng, target)
        } else {
            Link { host: id, page: rng.below(n.into()) as u32 }
        };
        out.emit(link);
    }
}

/// Passes links on, counting them.
struct Out<F> {
    f: F,
    count: usize,
}

impl<F: FnMut(Link)> Out<F> {
    fn emit(&mut self, link: Link) {
        self.count += 1;
        (self.f)(link);
    }
}

/// Half the time the host's index, else any of its pages.
fn random_page(model: &Model, rng: &mut Rng, host: u32) -> Link {
    let n = model.host(host).pages;
    let page = if rng.below(2) == 0 { 0 } else { rng.below(n.into()) as u32 };
    Link { host, page }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calendar_round_trips() {
        assert_eq!(civil_from_days(TRAP_EPOCH), (2026, 1, 1));
        assert_eq!(civil_from_days(TRAP_EPOCH + 58), (2026, 2, 28));
        assert_eq!(civil_from_days(TRAP_EPOCH + 59), (2026, 3, 1));
        assert_eq!(civil_from_days(days_from_civil(2028, 2, 29)), (2028, 2, 29));
        assert_eq!(civil_from_days(days_from_civil(2028, 12, 31) + 1), (2029, 1, 1));
        for day in (0..200_000).step_by(7) {
            let (y, m, d) = civil_from_days(TRAP_EPOCH + day);
            assert_eq!(days_from_civil(y, m, d), TRAP_EPOCH + day);
        }
        assert_eq!(number("05", 2), Some(5));
        assert_eq!(number("5", 2), None);
        assert_eq!(number("007", 2), None);
        assert_eq!(number("0", 1), Some(0));
        assert_eq!(number("01", 1), None);
    }
}
