//! Looking into a crawl kept in Redis and changing it from outside, as `kumo frontier` and
//! `kumo failures` do for a state directory: every queued request and failure as JSON lines,
//! requests put in, failures re-queued. Reads page through the keys with plain commands, so a
//! big queue never blocks Redis in one long script.

use std::io::Write;

use kumo_core::request::host_key;
use kumo_core::{CanonicalOptions, DedupMode, ErrorKind, Request, StoredRequest, Url};
use kumo_frontier::{FailureLine, PushReport, QueueLine, RequeueReport, StoredFailure};
use redis::Value;
use serde::Serialize;

use crate::call::{array, bytes, int, text};
use crate::config::policy_index;
use crate::{RedisFrontier, RedisStoreError};

/// Lines read per round trip.
const PAGE: usize = 1000;

fn write_line(out: &mut dyn Write, v: &impl Serialize) -> Result<(), RedisStoreError> {
    let io = |e: std::io::Error| RedisStoreError::Redis(format!("cannot write the export: {e}"));
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n").map_err(io)
}

impl RedisFrontier {
    async fn cmd(&self, cmd: &redis::Cmd) -> Result<Value, RedisStoreError> {
        self.conn.command(cmd).await
    }

    /// Every member of a set, a page at a time.
    pub(crate) async fn set_members(&self, key: &str) -> Result<Vec<String>, RedisStoreError> {
        let mut cursor = 0u64;
        let mut out = Vec::new();
        // Bounded: SSCAN ends when its cursor comes back to 0.
        loop {
            let mut c = redis::cmd("SSCAN");
            c.arg(key).arg(cursor).arg("COUNT").arg(PAGE);
            let mut reply = array(self.cmd(&c).await?)?.into_iter();
            let (Some(next), Some(members)) = (reply.next(), reply.next()) else {
                return Err(RedisStoreError::Protocol("SSCAN reply".into()));
            };
            cursor = text(next)?.parse().map_err(|_| RedisStoreError::Protocol("SSCAN cursor".into()))?;
            for m in array(members)? {
                out.push(text(m)?);
            }
            if cursor == 0 {
                return Ok(out);
            }
        }
    }

    /// A list's elements, a page at a time.
    async fn list(&self, key: &str) -> Result<Vec<Vec<u8>>, RedisStoreError> {
        let mut out = Vec::new();
        loop {
            let mut c = redis::cmd("LRANGE");
            c.arg(key).arg(out.len()).arg(out.len() + PAGE - 1);
            let page = array(self.cmd(&c).await?)?;
            let n = page.len();
            for v in page {
                out.push(bytes(v)?);
            }
            if n < PAGE {
                return Ok(out);
            }
        }
    }

    /// Writes every queued request as one JSON line, host by host, in the order each host
    /// hands them out (best level first, then the requests backing off). For a stopped crawl:
    /// on a running one the lines are what each host held when it was read.
    pub async fn export_queue(&self, out: &mut dyn Write) -> Result<usize, RedisStoreError> {
        let p = self.cfg.prefix();
        let mut hosts = self.set_members(&format!("{p}hosts")).await?;
        hosts.sort();
        let mut n = 0u64;
        for host in &hosts {
            let mut levels = redis::cmd("ZRANGE");
            levels.arg(format!("{p}lv:{host}")).arg(0).arg(-1);
            let mut entries = Vec::new();
            for level in array(self.cmd(&levels).await?)? {
                entries.extend(self.list(&format!("{p}q:{host}:{}", text(level)?)).await?);
            }
            let mut backoffs = redis::cmd("ZRANGE");
            backoffs.arg(format!("{p}bo:{host}")).arg(0).arg(-1);
            for m in array(self.cmd(&backoffs).await?)? {
                // `n NUL level NUL request`.
                let m = bytes(m)?;
                let json = m.splitn(3, |&b| b == 0).nth(2).unwrap_or_default();
                entries.push(json.to_vec());
            }
            for json in entries {
                let request: StoredRequest = serde_json::from_slice(&json)?;
                n += 1;
                write_line(out, &QueueLine { request: &request, host, seq: n })?;
            }
        }
        out.flush().map_err(|e| RedisStoreError::Redis(format!("cannot write the export: {e}")))?;
        Ok(n as usize)
    }

    /// Queues `requests` as a crawl would: fingerprinted (strict, default canonical form) and
    /// seen-checked. A host new to the crawl gets its rule by this handle's politeness (the
    /// default one for an inspecting handle).
    pub async fn import(&self, requests: Vec<Request>) -> Result<PushReport, RedisStoreError> {
        let opts = CanonicalOptions::default();
        let mut report = PushReport::default();
        for chunk in requests.chunks(PAGE) {
            let mut a = self.args("import");
            a.n(chunk.len());
            for r in chunk {
                self.request_args(&mut a, r.fingerprint(&opts, DedupMode::Strict), r)?;
            }
            let reply = array(self.call(&a).await?)?;
            let n = |i: usize| reply.get(i).map(int).transpose().map(|v| v.unwrap_or(0) as usize);
            report.merge(PushReport { added: n(0)?, seen: n(1)?, ..Default::default() });
        }
        Ok(report)
    }

    /// Every failure as stored, oldest first, numbered from 1.
    pub async fn stored_failures(&self) -> Result<Vec<(u64, Vec<u8>, StoredFailure)>, RedisStoreError> {
        let raw = self.list(&format!("{}fail", self.cfg.prefix())).await?;
        let mut out = Vec::with_capacity(raw.len());
        for (i, v) in raw.into_iter().enumerate() {
            let f: StoredFailure = serde_json::from_slice(&v)?;
            out.push((i as u64 + 1, v, f));
        }
        Ok(out)
    }

    /// Writes every failure as one JSON line (`seq`, `record`, `request`), oldest first.
    pub async fn export_failures(&self, out: &mut dyn Write) -> Result<usize, RedisStoreError> {
        let failures = self.stored_failures().await?;
        for (seq, _, failure) in &failures {
            write_line(out, &FailureLine { seq: *seq, failure })?;
        }
        out.flush().map_err(|e| RedisStoreError::Redis(format!("cannot write the export: {e}")))?;
        Ok(failures.len())
    }

    /// Moves the failures of `kinds` (all if empty) back to the queue with their retry count
    /// reset; each one moved only if it is still recorded, so two at once move it once.
    pub async fn requeue_failures(&self, kinds: &[ErrorKind]) -> Result<RequeueReport, RedisStoreError> {
        let failures = self.stored_failures().await?;
        let mut report = RequeueReport::default();
        let mut chosen = Vec::new();
        for (_, raw, f) in failures.iter() {
            if !kinds.is_empty() && !kinds.contains(&f.record.kind) {
                continue;
            }
            let Ok(url) = Url::parse(&f.request.url) else {
                report.invalid += 1;
                continue;
            };
            let mut request = f.request.clone();
            request.retries = 0;
            request.not_before_ms = None;
            chosen.push((raw, host_key(&url), request));
        }
        for chunk in chosen.chunks(PAGE) {
            let mut a = self.args("requeue");
            a.n(chunk.len());
            for (raw, host, request) in chunk {
                let json = serde_json::to_vec(request)?;
                a.b(raw).s(host).n(policy_index(&self.cfg.politeness, host)).n(request.priority).b(&json);
            }
            report.requeued += usize::try_from(int(&self.call(&a).await?)?).unwrap_or(0);
        }
        report.remaining = failures.len() - report.requeued;
        Ok(report)
    }
}
