//! The crawl's DNS answers in the state directory, so a resumed crawl does not ask the name
//! servers again for the names an earlier run resolved while their answers stand. They live in
//! the `meta` keyspace under `dns/` (as the cookies and robots.txt answers do): key
//! `dns/HOST`, value the [`StoredAnswer`] as JSON. Each save is one write batch; a load drops
//! what has expired or cannot be read (an answer is only a cache: the name is asked again).

use std::time::SystemTime;

use kumo_core::{AnswerStorage, AnswerStorageError, StoredAnswer};

use crate::EmbeddedStore;

const PREFIX: &[u8] = b"dns/";

fn key(host: &str) -> Vec<u8> {
    [PREFIX, host.as_bytes()].concat()
}

fn storage(e: impl std::fmt::Display) -> AnswerStorageError {
    AnswerStorageError(e.to_string())
}

impl AnswerStorage for EmbeddedStore {
    fn load(&self) -> Result<Vec<StoredAnswer>, AnswerStorageError> {
        let now = SystemTime::now();
        let (mut standing, mut stale) = (Vec::new(), Vec::new());
        for kv in self.sp.meta.prefix(PREFIX) {
            let (k, v) = kv.map_err(storage)?;
            match serde_json::from_slice::<StoredAnswer>(&v) {
                Ok(answer) if !answer.is_expired_at(now) => standing.push(answer),
                _ => stale.push(k),
            }
        }
        if !stale.is_empty() {
            let mut b = self.batch();
            for k in stale {
                self.sp.meta.remove(&mut b, k);
            }
            self.halt.commit(b, &self.dir).map_err(storage)?;
        }
        Ok(standing)
    }

    fn save(&self, answers: &[StoredAnswer]) -> Result<(), AnswerStorageError> {
        let mut b = self.batch();
        for a in answers {
            self.sp.meta.insert(&mut b, key(&a.host), serde_json::to_vec(a).map_err(storage)?);
        }
        self.halt.commit(b, &self.dir).map_err(storage)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kumo_core::StoredOutcome;
    use kumo_core::dns::unix_ms;

    use super::*;
    use crate::EmbeddedConfig;

    fn answer(host: &str, ttl: Duration) -> StoredAnswer {
        StoredAnswer {
            host: host.into(),
            outcome: StoredOutcome::Addresses(vec!["127.0.0.2".parse().unwrap()]),
            expires_ms: unix_ms(SystemTime::now() + ttl),
        }
    }

    #[test]
    fn answers_come_back_after_a_reopen_until_they_expire() {
        let dir = tempfile::tempdir().unwrap();
        let standing = answer("a.test", Duration::from_secs(600));
        let expired =
            StoredAnswer { expires_ms: unix_ms(SystemTime::now()) - 1, ..answer("b.test", Duration::ZERO) };
        {
            let store = EmbeddedStore::open(dir.path(), EmbeddedConfig::default()).unwrap();
            store.save(&[standing.clone(), expired]).unwrap();
            let newer = answer("a.test", Duration::from_secs(900));
            store.save(std::slice::from_ref(&newer)).unwrap();
            assert_eq!(store.load().unwrap(), vec![newer], "the newer answer replaced the older");
        }
        let store = EmbeddedStore::open(dir.path(), EmbeddedConfig::default()).unwrap();
        let back = store.load().unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].host, standing.host);
        // The expired one was removed, not only skipped.
        assert_eq!(store.sp.meta.prefix(PREFIX).count(), 1);
    }
}
