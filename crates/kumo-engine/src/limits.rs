//! What a run's page and item limits count from, and what is left of them.
//!
//! `max_pages` and `max_items` count the crawl's pages done and items written (a re-crawl
//! round's: a new round starts its counters afresh), so a resumed crawl stops at the same
//! totals it would have reached in one go; with `CrawlConfig::limits_per_run` (`kumo run`,
//! where a scheduled run may go on with the round an earlier run left unfinished) each run
//! counts its own.

use crate::CrawlConfig;
use crate::results::Tally;

pub(crate) struct Limits {
    /// Pages done before this run that count toward `max_pages`.
    pages_before: u64,
    /// Items this run may write; `None` without a limit.
    item_room: Option<u64>,
    /// Committed items at the start of the run.
    items_at_start: u64,
    /// Items committed before the run and not written yet: the run writes them first.
    backlog: u64,
}

impl Limits {
    pub fn new(cfg: &CrawlConfig, tally: &Tally, backlog: u64) -> Self {
        let per_run = cfg.limits_per_run;
        // Written so far: what was committed, less what still waits to be written.
        let written = if per_run { 0 } else { tally.items.saturating_sub(backlog) };
        Limits {
            pages_before: if per_run { 0 } else { tally.done },
            item_room: (cfg.max_items != 0).then(|| cfg.max_items.saturating_sub(written)),
            items_at_start: tally.items,
            backlog,
        }
    }

    /// The pages that count toward `max_pages` when the run starts.
    pub fn pages_before(&self) -> u64 {
        self.pages_before
    }

    /// Items this run may write; `None` without a limit.
    pub fn item_room(&self) -> Option<u64> {
        self.item_room
    }

    /// Whether the items committed so far fill what this run may write: the pages still in
    /// flight then only add items the pipeline holds back.
    pub fn items_reached(&self, tally: &Tally) -> bool {
        let ready = self.backlog + tally.items.saturating_sub(self.items_at_start);
        self.item_room.is_some_and(|room| ready >= room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(items: u64, done: u64) -> Tally {
        Tally { items, done, ..Tally::default() }
    }

    #[test]
    fn a_resumed_crawl_counts_what_earlier_runs_wrote() {
        let cfg = CrawlConfig { max_items: 100, max_pages: 50, ..Default::default() };
        // 90 items committed, 10 of them held back: 80 written, 20 more may be.
        let l = Limits::new(&cfg, &tally(90, 30), 10);
        assert_eq!((l.pages_before(), l.item_room()), (30, Some(20)));
        assert!(!l.items_reached(&tally(90, 30)), "the 10 held fill half of it");
        assert!(l.items_reached(&tally(100, 33)));
        let at = Limits::new(&CrawlConfig { max_items: 80, ..cfg }, &tally(90, 30), 10);
        assert_eq!(at.item_room(), Some(0));
        assert!(at.items_reached(&tally(90, 30)), "reached before anything is fetched");
    }

    #[test]
    fn a_run_of_a_schedule_counts_its_own() {
        let cfg = CrawlConfig { max_items: 15, limits_per_run: true, ..Default::default() };
        let l = Limits::new(&cfg, &tally(300, 300), 4);
        assert_eq!((l.pages_before(), l.item_room()), (0, Some(15)));
        assert!(!l.items_reached(&tally(310, 305)));
        assert!(l.items_reached(&tally(311, 306)));
    }

    #[test]
    fn no_limit_is_never_reached() {
        let l = Limits::new(&CrawlConfig::default(), &tally(1_000, 10), 5);
        assert_eq!(l.item_room(), None);
        assert!(!l.items_reached(&tally(u64::MAX, 10)));
    }
}
