//! A worker's commit: its pushes and its pages' completions (with their discoveries), their
//! items and its counters, in one call of the frontier script.

use kumo_core::{Fingerprint, Request, StoredRequest};
use kumo_frontier::{Commit, CommitReport, Completion, FrontierStats, PushReport, Readiness, StoredFailure};

use crate::RedisStoreError;
use crate::call::{Args, array, int, text};
use crate::config::{millis, policy_index};
use crate::frontier::RedisFrontier;
use crate::lease::{next_ask, readiness_of};

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
        // Saved by the commit's own call, with nothing seen yet: they say where the worker's
        // WARC files end, which must never lag behind the pages the commit completes.
        let provisional = c.counters.as_ref().map(|counters| counters(&PushReport::default()));
        let mut a = self.args_saving("commit", provisional);
        local.seq += 1;
        a.n(local.seq).s(&self.cfg.worker);
        let mut known = 0usize;
        let mut sent = Vec::new();
        let pushes: Vec<_> = c.pushes.iter().filter(|(fp, _)| !local.sent.contains(*fp)).collect();
        known += c.pushes.len() - pushes.len();
        a.n(pushes.len());
        for (fp, req) in pushes {
            self.request_args(&mut a, *fp, req)?;
            sent.push(*fp);
        }
        a.n(c.completions.len());
        let mut ended = Vec::with_capacity(c.completions.len());
        for completion in &c.completions {
            match completion {
                Completion::Done { lease, discovered, page } => {
                    a.s("D").s(&self.lease_key(lease.0));
                    match page {
                        Some(p) => a.s(&p.request.url).b(&serde_json::to_vec(p)?),
                        None => a.s("").s(""),
                    };
                    let new: Vec<_> = discovered.iter().filter(|(fp, _)| !local.sent.contains(*fp)).collect();
                    known += discovered.len() - new.len();
                    a.n(new.len());
                    for (fp, req) in new {
                        self.request_args(&mut a, *fp, req)?;
                        sent.push(*fp);
                    }
                    ended.push(lease.0);
                }
                Completion::Retry { lease, after } => {
                    let json = match local.leases.get(&lease.0) {
                        Some(r) => {
                            let mut r = r.clone();
                            r.retries = r.retries.saturating_add(1);
                            serde_json::to_vec(&r)?
                        }
                        None => Vec::new(),
                    };
                    a.s("R").s(&self.lease_key(lease.0)).n(millis(*after)).b(&json);
                    ended.push(lease.0);
                }
                Completion::Defer { lease, after } => {
                    a.s("E").s(&self.lease_key(lease.0)).n(millis(*after));
                    ended.push(lease.0);
                }
                Completion::Failed { lease, failure } => {
                    let json = match local.leases.get(&lease.0) {
                        Some(r) => serde_json::to_vec(&StoredFailure {
                            record: failure.clone(),
                            request: r.clone(),
                        })?,
                        None => Vec::new(),
                    };
                    a.s("F").s(&self.lease_key(lease.0)).b(&json);
                    ended.push(lease.0);
                }
            }
        }
        // Items by the lease of their page, so the script drops those of a stale page.
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
        let reply = array(self.call(&a).await?)?;
        if reply.len() < 11 {
            return Err(RedisStoreError::Protocol(format!("commit reply {reply:?}")));
        }
        let n = |i: usize| int(&reply[i]).map(|v| usize::try_from(v).unwrap_or(0));
        let (added, seen) = (n(0)?, n(1)? + known);
        let upto = int(&reply[3])?;
        let stats = self.as_seen_here(FrontierStats {
            queued: n(4)?,
            leased: n(5)?,
            hosts: n(6)?,
            failed: n(7)?,
            ..Default::default()
        });
        self.saw_epoch(&mut local, int(&reply[8])?);
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
        let stale_keys: Vec<String> = reply.into_iter().skip(11).map(text).collect::<Result<_, _>>()?;
        for fp in sent {
            local.sent.insert(fp);
        }
        {
            let mut slots = self.slots();
            for id in &ended {
                local.leases.remove(id);
                slots.end(*id);
            }
        }
        self.forget_given_back(&mut local);
        let stale: Vec<u64> =
            stale_keys.iter().filter_map(|k| k.rsplit_once(':').and_then(|(_, n)| n.parse().ok())).collect();
        let items = if stale_keys.is_empty() {
            c.items
        } else {
            c.items
                .into_iter()
                .zip(encoded)
                .filter(|(_, k)| k.is_empty() || !stale_keys.contains(k))
                .map(|(i, _)| i)
                .collect()
        };
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
}
