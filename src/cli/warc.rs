//! `--warc DIR`: where a crawl's WARC files go and what they are named after. Workers sharing
//! a crawl through Redis each write files of their own (the worker's name is in theirs), so
//! each can cut its own back when it resumes.

use std::path::Path;

use kumo_warc::{DEFAULT_MAX_FILE_BYTES, RecordOptions, WarcConfig};

/// The output's name, as the state records the outputs a crawl was made with.
pub fn output_name(dir: &Path) -> String {
    format!("warc:{}", dir.display())
}

/// Where and how a crawl archives.
#[derive(Debug, Clone)]
pub struct Archive<'a> {
    pub dir: &'a Path,
    pub max_size: u64,
    pub cdxj: bool,
    pub gzip_level: u32,
}

impl<'a> Archive<'a> {
    /// The defaults, in `dir`.
    pub fn at(dir: &'a Path) -> Self {
        Archive {
            dir,
            max_size: DEFAULT_MAX_FILE_BYTES,
            cdxj: false,
            gzip_level: RecordOptions::default().gzip_level,
        }
    }
}

/// The settings of a crawl's WARC output: files named after `crawl` (and `worker`, in a
/// shared crawl).
pub fn config(a: &Archive<'_>, crawl: &str, worker: Option<&str>, robots: bool) -> WarcConfig {
    let mut prefix = file_safe(crawl);
    let mut info = vec![("crawl".to_string(), crawl.to_string())];
    if let Some(w) = worker {
        // A worker's name holds a host name and paths: its hash keeps file names short.
        prefix = format!("{prefix}-{:08x}", xxhash_rust::xxh3::xxh3_64(w.as_bytes()) as u32);
        info.push(("worker".to_string(), w.to_string()));
    }
    info.push(("robots".to_string(), if robots { "obey" } else { "ignore" }.to_string()));
    WarcConfig {
        max_file_bytes: a.max_size,
        cdxj: a.cdxj,
        info,
        record: RecordOptions { gzip_level: a.gzip_level },
        ..WarcConfig::new(a.dir, prefix)
    }
}

/// `name` with anything but letters, digits, `.`, `-` and `_` replaced by `_`.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect()
}
