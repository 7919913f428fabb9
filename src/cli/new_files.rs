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

    /// Removes the noted files this run created (nothing was crawled into them). A file that
    /// holds bytes, or that another crawl has locked, is another writer's, created after it
    /// was noted: it stays.
    pub fn remove(self) {
        for p in self.0 {
            let Ok(file) = std::fs::File::open(&p) else { continue };
            let empty = file.metadata().is_ok_and(|m| m.is_file() && m.len() == 0);
            if empty && file.try_lock().is_ok() {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
