//! Output files a run is about to create: when the run stops before its crawl starts (a
//! refused state, Redis away, a second output refused), they go again, so a refused run leaves
//! nothing behind. Files that existed before the run are never touched.

use std::path::{Path, PathBuf};

pub struct NewFiles(Vec<PathBuf>);

impl NewFiles {
    /// Notes each of `paths` that does not exist yet.
    pub fn note<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        NewFiles(paths.into_iter().filter(|p| !p.exists()).map(Path::to_path_buf).collect())
    }

    /// Removes the noted files this run created (nothing was crawled into them).
    pub fn remove(self) {
        for p in self.0 {
            if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
