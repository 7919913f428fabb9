//! What a state belongs to: the outputs it was crawled with, and where its crawl started.
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
