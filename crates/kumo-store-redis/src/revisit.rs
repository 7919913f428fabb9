//! `--recrawl` on a crawl kept in Redis. Each page's record is kept in the hash `pg` (URL →
//! JSON), written by the commit that completes the page; a new round asks for the pages due
//! again, past the seen set, as the embedded store's `revisit_pages` does. The round is opened
//! in Redis only when the crawl is drained, and its pages are read a page of records at a time
//! (HSCAN: no long script) and queued in batches, each URL at most once a round, so a worker
//! that joins a round, or takes over from a queuer that died, queues nothing twice.

use kumo_core::Url;
use kumo_core::request::host_key;
use kumo_frontier::{Frontier, PageRecord, Revisits};

use crate::call::{array, bytes, int, text};
use crate::config::policy_index;
use crate::{RedisFrontier, RedisStoreError};

/// Records read per round trip.
const PAGE: usize = 500;

/// How a `--recrawl` start went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundStart {
    /// The crawl is still under way (so many requests queued or leased): this run finishes it.
    Busy(usize),
    /// No page has a record yet (a new crawl, or one that ran without `--recrawl`): no round.
    NoRecords,
    /// A round was queued (opened by this worker, or joined).
    Queued(Revisits),
}

impl RedisFrontier {
    /// Opens the crawl's next re-crawl round (or joins the one being queued) and queues every
    /// kept page due at `now_ms`, with its validators when `conditional`. This worker's saved
    /// counters start over for the round, but for where its WARC files end.
    pub async fn revisit_pages(&self, now_ms: u64, conditional: bool) -> Result<RoundStart, RedisStoreError> {
        let key = format!("{}pg", self.cfg.prefix());
        let mut hlen = redis::cmd("HLEN");
        hlen.arg(&key);
        if int(&self.conn.command(&hlen).await?)? == 0 {
            return Ok(RoundStart::NoRecords);
        }
        let kept = self.saved_counters().await.map_err(|e| RedisStoreError::Redis(e.to_string()))?;
        let counters = kumo_frontier::round_counters(kept.as_deref()).unwrap_or_default();
        let mut a = self.args("round_begin");
        a.s(&self.cfg.worker).b(&counters);
        let reply = array(self.call(&a).await?)?;
        let n = |i: usize| reply.get(i).map(int).transpose().map(|v| v.unwrap_or(0));
        if n(0)? == 2 {
            return Ok(RoundStart::Busy(usize::try_from(n(2)?).unwrap_or(0)));
        }
        let round = n(1)?.to_string();
        let mut report = Revisits::default();
        let mut cursor = 0u64;
        // Bounded: HSCAN ends when its cursor comes back to 0.
        loop {
            let (next, pages) = self.pages_from(cursor).await?;
            let mut due = Vec::new();
            for page in pages {
                if page.due(now_ms) {
                    due.push(page);
                } else {
                    report.wait_for(&page);
                }
            }
            // The round's due pages, whichever worker queued each.
            report.queued += due.len();
            self.queue_round(&round, due, conditional).await?;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        let mut a = self.args("round_end");
        a.s(&round);
        self.call(&a).await?;
        // What this worker last heard of the queue is out of date: ask Redis at the next lease.
        let mut local = self.local.lock().await;
        local.readiness = None;
        local.next_ask = None;
        Ok(RoundStart::Queued(report))
    }

    /// Every kept page's record (`kumo frontier pages`), by URL.
    pub async fn page_records(&self) -> Result<Vec<PageRecord>, RedisStoreError> {
        let mut out = Vec::new();
        let mut cursor = 0u64;
        // Bounded: HSCAN ends when its cursor comes back to 0.
        loop {
            let (next, pages) = self.pages_from(cursor).await?;
            out.extend(pages);
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        out.sort_by(|a, b| a.request.url.cmp(&b.request.url));
        Ok(out)
    }

    /// One HSCAN step over the kept pages from `cursor`: the next cursor (0: done) and the
    /// records read.
    async fn pages_from(&self, cursor: u64) -> Result<(u64, Vec<PageRecord>), RedisStoreError> {
        let mut c = redis::cmd("HSCAN");
        c.arg(format!("{}pg", self.cfg.prefix())).arg(cursor).arg("COUNT").arg(PAGE);
        let mut reply = array(self.conn.command(&c).await?)?.into_iter();
        let (Some(next), Some(fields)) = (reply.next(), reply.next()) else {
            return Err(RedisStoreError::Protocol("HSCAN reply".into()));
        };
        let next = text(next)?.parse().map_err(|_| RedisStoreError::Protocol("HSCAN cursor".into()))?;
        let mut pages = Vec::new();
        let mut fields = array(fields)?.into_iter();
        while let (Some(_url), Some(json)) = (fields.next(), fields.next()) {
            pages.push(serde_json::from_slice(&bytes(json)?)?);
        }
        Ok((next, pages))
    }

    /// Queues `pages` for round `round`, each unless the round queued it already.
    async fn queue_round(
        &self,
        round: &str,
        pages: Vec<PageRecord>,
        conditional: bool,
    ) -> Result<(), RedisStoreError> {
        let mut batch = Vec::with_capacity(pages.len());
        for page in pages {
            let Ok(url) = Url::parse(&page.request.url) else { continue };
            let (url, host) = (page.request.url.to_string(), host_key(&url));
            let request = page.revisit_request(conditional);
            batch.push((url, host, request));
        }
        if batch.is_empty() {
            return Ok(());
        }
        let mut a = self.args("round_push");
        a.s(round).n(batch.len());
        for (url, host, request) in &batch {
            let json = serde_json::to_vec(request)?;
            a.s(url).s(host).n(policy_index(&self.cfg.politeness, host)).n(request.priority).b(&json);
        }
        self.call(&a).await?;
        Ok(())
    }
}
