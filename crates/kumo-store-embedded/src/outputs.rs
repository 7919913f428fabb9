//! What a state belongs to: the outputs it was crawled with, where its crawl started, and the
//! settings its last run had (compared by the next one).
//! Resuming truncates each output back to its committed length, so resuming into a different
//! file would cut that file; and a resume from other start URLs or another spider file would
//! mix another crawl into this one's queue and outputs. Both are refused.

use crate::{EmbeddedStore, StoreError};

const OUTPUTS: &str = "outputs";
const ORIGIN: &str = "origin";

impl EmbeddedStore {
    /// Records `names` (sink names, in order) on first use; later, refuses other names.
    pub fn check_outputs(&self, names: &[String]) -> Result<(), StoreError> {
        match self.sp.meta.get(OUTPUTS)? {
            Some(saved) => {
                let saved: Vec<String> = serde_json::from_slice(&saved).map_err(|e| StoreError::Corrupt {
                    path: self.dir.clone(),
                    detail: format!("the saved output list is unreadable: {e}"),
                })?;
                if saved != names {
                    return Err(StoreError::OutputsChanged {
                        path: self.dir.clone(),
                        saved: saved.join(", "),
                        now: names.join(", "),
                    });
                }
                Ok(())
            }
            None => {
                let mut b = self.batch();
                self.sp.meta.insert(&mut b, OUTPUTS, serde_json::to_vec(names)?);
                Ok(self.halt.commit(b, &self.dir)?)
            }
        }
    }
}

impl EmbeddedStore {
    /// Records `origin` (what the crawl starts from, in words: its start URLs, or its spider
    /// file and site) on first use; later, refuses another. A state from before origins were
    /// recorded takes the first one it is resumed with, and one that holds no crawl yet (its
    /// run was refused before it seeded anything) takes the new one.
    pub fn check_origin(&self, origin: &str) -> Result<(), StoreError> {
        match self.sp.meta.get(ORIGIN)? {
            Some(saved) if *saved == *origin.as_bytes() => Ok(()),
            Some(saved) if self.resumed() => Err(StoreError::OriginChanged {
                path: self.dir.clone(),
                saved: String::from_utf8_lossy(&saved).into_owned(),
                now: origin.to_string(),
            }),
            _ => {
                let mut b = self.batch();
                self.sp.meta.insert(&mut b, ORIGIN, origin.as_bytes());
                Ok(self.halt.commit(b, &self.dir)?)
            }
        }
    }
}

const SETTINGS: &str = "settings";

impl EmbeddedStore {
    /// The settings record kept by the last run (`kumo_settings::Record` as JSON), if the
    /// state holds a crawl and its runs kept one.
    pub fn settings_record(&self) -> Result<Option<String>, StoreError> {
        if !self.resumed() {
            return Ok(None);
        }
        Ok(self.sp.meta.get(SETTINGS)?.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Keeps `record` as the crawl's settings, for the next run to compare with.
    pub fn keep_settings_record(&self, record: &str) -> Result<(), StoreError> {
        let mut b = self.batch();
        self.sp.meta.insert(&mut b, SETTINGS, record.as_bytes());
        Ok(self.halt.commit(b, &self.dir)?)
    }
}
