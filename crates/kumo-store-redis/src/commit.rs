//! A worker's commit: its pushes and its pages' completions (with their discoveries), their
//! items and its counters, in one call of the frontier script.

use kumo_core::{Fingerprint, Item, Request, StoredRequest};
use kumo_frontier::{
    Commit, CommitReport, Completion, FailureRecord, FrontierStats, PushReport, Readiness, StoredFailure,
};
use redis::Value;

use crate::RedisStoreError;
use crate::call::{Args, array, int, text};
use crate::config::{millis, policy_index};
use crate::frontier::{Local, RedisFrontier};
use crate::lease::{next_ask, readiness_of};

/// A commit's call, built before it is sent: its arguments, and what the reply is then matched
/// against.
struct CommitCall {
    /// The script's arguments.
    args: Args,
    /// Requests left out because this worker sent them before: seen, without asking Redis.
    known: usize,
    /// The fingerprints the call sends, seen for good once it is answered.
    sent: Vec<Fingerprint>,
    /// The leases the commit ends, let go once it is answered.
    ended: Vec<u64>,
    /// Each item's lease key (empty: no page), in the items' order, to drop those of a stale
    /// page from the report.
    item_keys: Vec<String>,
}

impl RedisFrontier {
    /// Adds a request as the script reads one: fingerprint (its seen bucket, its first two
    /// bytes, then the rest: the script splits nothing), host, its rule, level, JSON.
    pub(crate) fn request_args(
        &self,
        a: &mut Args,
        fp: Fingerprint,
        req: &Request,
    ) -> Result<(), RedisStoreError> {
        let host = req.host_key();
        let json = serde_json::to_vec(&StoredRequest::from(req))?;
        let bytes = fp.to_bytes();
        let (bucket, rest) = bytes.split_at(2);
        a.b(bucket).b(rest).s(&host).n(policy_index(&self.cfg.politeness, &host)).n(req.priority).b(&json);
        Ok(())
    }

    /// Sends one commit; returns its report and the stale lease ids.
    pub(crate) async fn commit_inner(&self, c: Commit) -> Result<(CommitReport, Vec<u64>), RedisStoreError> {
        let mut local = self.local.lock().await;
        local.readiness = None;
        let call = self.commit_call(&mut local, &c)?;
        let reply = array(self.call(&call.args).await?)?;
        if reply.len() < 11 {
            return Err(RedisStoreError::Protocol(format!("commit reply {reply:?}")));
        }
        let (added, seen) = (reply_count(&reply, 0)?, reply_count(&reply, 1)? + call.known);
        let upto = int(&reply[3])?;
        let stats = self.as_seen_here(reply_stats(&reply)?);
        self.saw_epoch(&mut local, int(&reply[8])?);
        self.note_commit_readiness(&mut local, &reply)?;
        let stale_keys: Vec<String> = reply.into_iter().skip(11).map(text).collect::<Result<_, _>>()?;
        self.settle_commit(&mut local, call.sent, &call.ended);
        let stale = stale_lease_ids(&stale_keys);
        let items = live_items(c.items, call.item_keys, &stale_keys);
        let pushed = PushReport { added, seen, ..Default::default() };
        drop(local);
        if let Some(counters) = c.counters {
            // The exact ones, with what was seen, ride on the next call: a kill before it
            // costs this commit's seen count in a resumed summary, nothing else.
            self.pending().counters = Some(counters(&pushed));
        }
        let report = CommitReport {
            pushed,
            stale: stale.len(),
            journaled_to: u64::try_from(upto).ok(),
            items,
            stats: Some(stats),
        };
        Ok((report, stale))
    }

    /// Builds a commit's call: the prelude (saving the counters), the worker's next sequence
    /// number, then its pushes, its completions and its items, as the script reads them.
    fn commit_call(&self, local: &mut Local, c: &Commit) -> Result<CommitCall, RedisStoreError> {
        // Saved by the commit's own call, with nothing seen yet: they say where the worker's
        // WARC files end, which must never lag behind the pages the commit completes.
        let provisional = c.counters.as_ref().map(|counters| counters(&PushReport::default()));
        let mut a = self.args_saving("commit", provisional);
        local.seq += 1;
        a.n(local.seq).s(&self.cfg.worker);
        let mut sent = Vec::new();
        let mut known = self.unsent_requests_args(&mut a, local, &c.pushes, &mut sent)?;
        a.n(c.completions.len());
        let mut ended = Vec::with_capacity(c.completions.len());
        for completion in &c.completions {
            known += self.completion_args(&mut a, local, completion, &mut sent)?;
            ended.push(lease_of(completion));
        }
        let item_keys = self.item_args(&mut a, c)?;
        Ok(CommitCall { args: a, known, sent, ended, item_keys })
    }

    /// Adds the requests this worker has not sent before (their count, then each one) and
    /// notes their fingerprints in `sent`; returns how many it left out as already sent.
    fn unsent_requests_args(
        &self,
        a: &mut Args,
        local: &Local,
        requests: &[(Fingerprint, Request)],
        sent: &mut Vec<Fingerprint>,
    ) -> Result<usize, RedisStoreError> {
        let new: Vec<_> = requests.iter().filter(|(fp, _)| !local.sent.contains(*fp)).collect();
        let known = requests.len() - new.len();
        a.n(new.len());
        for (fp, req) in new {
            self.request_args(a, *fp, req)?;
            sent.push(*fp);
        }
        Ok(known)
    }

    /// Adds one completion: its kind's letter, its lease key, then what that kind carries (a
    /// done page's record and discoveries, a retry's or a deferral's wait, a retried or
    /// failed request). Returns how many discoveries it left out as already sent.
    fn completion_args(
        &self,
        a: &mut Args,
        local: &Local,
        completion: &Completion,
        sent: &mut Vec<Fingerprint>,
    ) -> Result<usize, RedisStoreError> {
        let known = match completion {
            Completion::Done { lease, discovered, page } => {
                a.s("D").s(&self.lease_key(lease.0));
                match page {
                    Some(p) => a.s(&p.request.url).b(&serde_json::to_vec(p)?),
                    None => a.s("").s(""),
                };
                self.unsent_requests_args(a, local, discovered, sent)?
            }
            Completion::Retry { lease, after } => {
                let json = retried_request_json(local.leases.get(&lease.0))?;
                a.s("R").s(&self.lease_key(lease.0)).n(millis(*after)).b(&json);
                0
            }
            Completion::Defer { lease, after } => {
                a.s("E").s(&self.lease_key(lease.0)).n(millis(*after));
                0
            }
            Completion::Failed { lease, failure } => {
                let json = failure_json(local.leases.get(&lease.0), failure)?;
                a.s("F").s(&self.lease_key(lease.0)).b(&json);
                0
            }
        };
        Ok(known)
    }

    /// Adds the commit's items, each with the lease key of its page (empty: none), so the
    /// script drops those of a stale page; returns those keys, in the items' order.
    fn item_args(&self, a: &mut Args, c: &Commit) -> Result<Vec<String>, RedisStoreError> {
        let mut sources = Vec::with_capacity(c.items.len());
        for &(lease, n) in &c.item_sources {
            sources.extend(std::iter::repeat_n(Some(lease.0), n));
        }
        a.n(c.items.len());
        let mut encoded = Vec::with_capacity(c.items.len());
        for (i, item) in c.items.iter().enumerate() {
            let key = sources.get(i).copied().flatten().map(|id| self.lease_key(id)).unwrap_or_default();
            let json = serde_json::to_vec(item)?;
            a.s(&key).b(&json);
            encoded.push(key);
        }
        Ok(encoded)
    }

    /// Notes what a commit's reply says of leasing (its codes at 9 and 10), as a lease call's
    /// answer would: when this worker may next be given work.
    fn note_commit_readiness(&self, local: &mut Local, reply: &[Value]) -> Result<(), RedisStoreError> {
        match int(&reply[9])? {
            // No host is ready: the work this commit queued waits for slots (this worker's
            // reserve and its running pages), so nothing changes for it before the poll.
            2 => {}
            // A host ready for this worker now (0) or in so many ms (1), or only hosts where it
            // has its share already (4: at the next poll), as a lease call would say.
            code => {
                let poll = self.poll();
                let readiness = readiness_of(code, int(&reply[10])?, poll);
                if readiness == Readiness::Now {
                    self.note_answer(true);
                }
                local.next_ask = next_ask(readiness, poll);
                local.readiness = Some((std::time::Instant::now(), readiness));
            }
        }
        Ok(())
    }

    /// Once Redis has the commit: its fingerprints are seen for good, its ended leases let go
    /// (their requests and their slots), and requests handed back forgotten.
    fn settle_commit(&self, local: &mut Local, sent: Vec<Fingerprint>, ended: &[u64]) {
        for fp in sent {
            local.sent.insert(fp);
        }
        {
            let mut slots = self.slots();
            for id in ended {
                local.leases.remove(id);
                slots.end(*id);
            }
        }
        self.forget_given_back(local);
    }
}

/// The lease a completion ends.
fn lease_of(completion: &Completion) -> u64 {
    match completion {
        Completion::Done { lease, .. }
        | Completion::Retry { lease, .. }
        | Completion::Defer { lease, .. }
        | Completion::Failed { lease, .. } => lease.0,
    }
}

/// A retried lease's request with one more retry, as JSON; empty when this worker no longer
/// holds the request.
fn retried_request_json(request: Option<&StoredRequest>) -> Result<Vec<u8>, RedisStoreError> {
    Ok(match request {
        Some(r) => {
            let mut r = r.clone();
            r.retries = r.retries.saturating_add(1);
            serde_json::to_vec(&r)?
        }
        None => Vec::new(),
    })
}

/// A failed lease's failure with its request, as JSON; empty when this worker no longer holds
/// the request.
fn failure_json(
    request: Option<&StoredRequest>,
    failure: &FailureRecord,
) -> Result<Vec<u8>, RedisStoreError> {
    Ok(match request {
        Some(r) => serde_json::to_vec(&StoredFailure { record: failure.clone(), request: r.clone() })?,
        None => Vec::new(),
    })
}

/// The count at `i` of a commit's reply (a negative one reads as 0).
fn reply_count(reply: &[Value], i: usize) -> Result<usize, RedisStoreError> {
    int(&reply[i]).map(|v| usize::try_from(v).unwrap_or(0))
}

/// The frontier's stats in a commit's reply (at 4 to 7), as Redis counts them.
fn reply_stats(reply: &[Value]) -> Result<FrontierStats, RedisStoreError> {
    Ok(FrontierStats {
        queued: reply_count(reply, 4)?,
        leased: reply_count(reply, 5)?,
        hosts: reply_count(reply, 6)?,
        failed: reply_count(reply, 7)?,
        ..Default::default()
    })
}

/// The lease ids of the stale lease keys a commit's reply names (the number after the last
/// `:`).
fn stale_lease_ids(stale_keys: &[String]) -> Vec<u64> {
    stale_keys.iter().filter_map(|k| k.rsplit_once(':').and_then(|(_, n)| n.parse().ok())).collect()
}

/// The items to hand back: all of them, but those of a page whose lease turned out stale.
fn live_items(items: Vec<Item>, keys: Vec<String>, stale_keys: &[String]) -> Vec<Item> {
    if stale_keys.is_empty() {
        items
    } else {
        items
            .into_iter()
            .zip(keys)
            .filter(|(_, k)| k.is_empty() || !stale_keys.contains(k))
            .map(|(i, _)| i)
            .collect()
    }
}
