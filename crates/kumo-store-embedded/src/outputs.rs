//! The outputs a state was crawled with. Resuming truncates each output back to its committed
//! length, so resuming into a different file would cut that file: refused.

use crate::{EmbeddedStore, StoreError};

const OUTPUTS: &str = "outputs";

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
                Ok(b.commit()?)
            }
        }
    }
}
