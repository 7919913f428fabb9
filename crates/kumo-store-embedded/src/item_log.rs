//! The item log: the items of committed pages, appended to plain files until the pipeline's
//! checkpoints say the sinks have them.
//!
//! Items are written once and read back only after a crash, so they live beside the
//! database rather than in it: an LSM tree would write each item again at every flush and
//! compaction, and then write a tombstone for it. A commit appends its items to the current
//! file (one positioned write), then records the log's new end (file, length, last item
//! number) in the same database batch as the pages that produced them. Bytes past the
//! recorded end belong to no commit; they are cut off on open.
//!
//! Files are `items/<generation>.log`: a header (magic, number of the first item), then
//! records `length (u32 LE) | xxh3 of the payload, low 32 bits (u32 LE) | item JSON`. A new
//! file starts once the current one passes [`ROTATE_AT`]; a file is deleted once a committed
//! checkpoint covers its last item.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use kumo_core::Item;
use xxhash_rust::xxh3::xxh3_64;

use crate::StoreError;

const MAGIC: &[u8; 8] = b"KUMOITM1";
const HEADER: u64 = 16;
const RECORD_HEADER: usize = 8;
/// A new file is started once the current one holds this many bytes.
const ROTATE_AT: u64 = 8 * 1024 * 1024;

/// Where the committed log ends, as recorded in the database with each commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LogEnd {
    pub generation: u64,
    /// Bytes of that file holding committed records (header included).
    pub len: u64,
    /// The number of the last item committed.
    pub last_seq: u64,
}

impl LogEnd {
    pub fn encode(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.generation.to_be_bytes());
        b[8..16].copy_from_slice(&self.len.to_be_bytes());
        b[16..].copy_from_slice(&self.last_seq.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<Self> {
        let b: &[u8; 24] = b.try_into().ok()?;
        let n = |r: std::ops::Range<usize>| u64::from_be_bytes(b[r].try_into().expect("8 bytes"));
        Some(LogEnd { generation: n(0..8), len: n(8..16), last_seq: n(16..24) })
    }
}

/// The open log: the file being appended to, and the older files not yet consumed.
pub(crate) struct ItemLog {
    dir: PathBuf,
    file: File,
    /// The committed end; appends go right after it.
    end: LogEnd,
    /// `(generation, number of its first item)` of every file on disk, oldest first; the
    /// last one is `file`.
    files: VecDeque<(u64, u64)>,
    sync: bool,
    buf: Vec<u8>,
}

impl std::fmt::Debug for ItemLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemLog").field("dir", &self.dir).field("end", &self.end).finish_non_exhaustive()
    }
}

fn file_name(generation: u64) -> String {
    format!("{generation:020}.log")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io { path: path.to_path_buf(), error }
}

fn damaged(path: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Corrupt { path: path.to_path_buf(), detail: detail.into() }
}

impl ItemLog {
    /// Opens the log in `dir` at the end the database last committed (`None`: no item was
    /// ever committed). Files and bytes past that end are removed: no commit refers to them.
    /// `sync`: each append is fsync'ed before the database commit that records it.
    pub fn open(dir: &Path, committed: Option<LogEnd>, sync: bool) -> Result<Self, StoreError> {
        let Some(end) = committed else {
            // Nothing committed: whatever is here was written by a commit that never happened.
            if dir.exists() {
                fs::remove_dir_all(dir).map_err(io(dir))?;
            }
            fs::create_dir_all(dir).map_err(io(dir))?;
            let end = LogEnd { generation: 1, len: HEADER, last_seq: 0 };
            let file = create(dir, 1, 1, sync)?;
            return Ok(ItemLog {
                dir: dir.into(),
                file,
                end,
                files: VecDeque::from([(1, 1)]),
                sync,
                buf: Vec::new(),
            });
        };
        if !dir.is_dir() {
            return Err(damaged(dir, "the item log folder is missing"));
        }
        let mut generations = Vec::new();
        for entry in fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Some(g) = name.strip_suffix(".log").and_then(|n| n.parse::<u64>().ok()) else {
                return Err(damaged(&entry.path(), "a file that is not part of the item log"));
            };
            if g > end.generation {
                // Started by a commit that never happened.
                fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
            } else {
                generations.push(g);
            }
        }
        generations.sort_unstable();
        if generations.last() != Some(&end.generation) {
            return Err(damaged(
                &dir.join(file_name(end.generation)),
                "the item log's current file is missing",
            ));
        }
        let mut files = VecDeque::new();
        for &g in &generations {
            files.push_back((g, read_header(&dir.join(file_name(g)))?));
        }
        let path = dir.join(file_name(end.generation));
        let file = OpenOptions::new().read(true).write(true).open(&path).map_err(io(&path))?;
        let size = file.metadata().map_err(io(&path))?.len();
        if size < end.len {
            return Err(damaged(
                &path,
                format!("the item log is shorter than committed ({size} < {} bytes)", end.len),
            ));
        }
        // A tail past the committed end: an append whose commit never happened.
        file.set_len(end.len).map_err(io(&path))?;
        Ok(ItemLog { dir: dir.into(), file, end, files, sync, buf: Vec::new() })
    }

    /// The committed end.
    pub fn end(&self) -> LogEnd {
        self.end
    }

    /// Appends `items` after the committed end and returns the end to record with the
    /// commit. Nothing counts until [`committed`](Self::committed) is called with it: bytes
    /// no commit was tried with are overwritten by the next append (after a commit that was
    /// tried and failed, the store appends nothing more: `halt.rs`).
    pub fn append(&mut self, items: &[Item]) -> Result<LogEnd, StoreError> {
        if self.end.len >= ROTATE_AT {
            self.rotate()?;
        }
        self.buf.clear();
        for item in items {
            let at = self.buf.len();
            self.buf.extend_from_slice(&[0; RECORD_HEADER]);
            serde_json::to_writer(&mut self.buf, item)?;
            let payload = &self.buf[at + RECORD_HEADER..];
            let len = u32::try_from(payload.len()).map_err(|_| {
                io(&self.dir.join(file_name(self.end.generation)))(std::io::Error::other(
                    "an item over 4 GiB",
                ))
            })?;
            let check = xxh3_64(payload) as u32;
            self.buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
            self.buf[at + 4..at + 8].copy_from_slice(&check.to_le_bytes());
        }
        let path = || self.dir.join(file_name(self.end.generation));
        self.file.write_all_at(&self.buf, self.end.len).map_err(|e| io(&path())(e))?;
        if self.sync {
            self.file.sync_data().map_err(|e| io(&path())(e))?;
        }
        Ok(LogEnd {
            generation: self.end.generation,
            len: self.end.len + self.buf.len() as u64,
            last_seq: self.end.last_seq + items.len() as u64,
        })
    }

    /// The database committed `end`: the appended items are now part of the log.
    pub fn committed(&mut self, end: LogEnd) {
        self.end = end;
    }

    /// Starts the next file. The current one is cut to its committed end first, so a failed
    /// commit's bytes never sit between committed records.
    fn rotate(&mut self) -> Result<(), StoreError> {
        let path = self.dir.join(file_name(self.end.generation));
        self.file.set_len(self.end.len).map_err(io(&path))?;
        let generation = self.end.generation + 1;
        let first = self.end.last_seq + 1;
        self.file = create(&self.dir, generation, first, self.sync)?;
        self.files.push_back((generation, first));
        self.end = LogEnd { generation, len: HEADER, last_seq: self.end.last_seq };
        Ok(())
    }

    /// The committed items numbered above `upto`, in order.
    pub fn read_after(&self, upto: u64) -> Result<Vec<(u64, Item)>, StoreError> {
        let mut out = Vec::new();
        for (i, &(generation, first)) in self.files.iter().enumerate() {
            let next_first = self.files.get(i + 1).map_or(self.end.last_seq + 1, |f| f.1);
            if next_first <= upto + 1 {
                continue;
            }
            let path = self.dir.join(file_name(generation));
            let limit = (generation == self.end.generation).then_some(self.end.len);
            let records = read_records(&path, limit)?;
            if first + records.len() as u64 != next_first {
                return Err(damaged(
                    &path,
                    format!(
                        "the item log holds {} items where {} were committed",
                        records.len(),
                        next_first - first
                    ),
                ));
            }
            for (n, payload) in (first..).zip(records) {
                if n > upto {
                    let item = serde_json::from_slice(&payload)
                        .map_err(|e| damaged(&path, format!("item {n} does not parse: {e}")))?;
                    out.push((n, item));
                }
            }
        }
        Ok(out)
    }

    /// Deletes the files whose items a committed checkpoint covers (`upto`), but never the
    /// current one.
    pub fn drop_consumed(&mut self, upto: u64) -> Result<(), StoreError> {
        while self.files.len() > 1 && self.files[1].1 <= upto + 1 {
            let (generation, _) = self.files.pop_front().expect("two files");
            let path = self.dir.join(file_name(generation));
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path)(e)),
            }
        }
        Ok(())
    }
}

/// Creates file `generation` holding only its header.
fn create(dir: &Path, generation: u64, first: u64, sync: bool) -> Result<File, StoreError> {
    let path = dir.join(file_name(generation));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(io(&path))?;
    let mut header = [0u8; HEADER as usize];
    header[..8].copy_from_slice(MAGIC);
    header[8..].copy_from_slice(&first.to_le_bytes());
    file.write_all_at(&header, 0).map_err(io(&path))?;
    if sync {
        file.sync_all().map_err(io(&path))?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))?;
    }
    Ok(file)
}

/// The number of the first item in file `path`.
fn read_header(path: &Path) -> Result<u64, StoreError> {
    let mut header = [0u8; HEADER as usize];
    File::open(path).and_then(|mut f| f.read_exact(&mut header)).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => damaged(path, "an item log file without its header"),
        _ => io(path)(e),
    })?;
    if &header[..8] != MAGIC {
        return Err(damaged(path, "not an item log file (bad magic)"));
    }
    Ok(u64::from_le_bytes(header[8..].try_into().expect("8 bytes")))
}

/// The checked payloads of `path`'s records, up to `limit` bytes (the whole file if `None`).
fn read_records(path: &Path, limit: Option<u64>) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut bytes = fs::read(path).map_err(io(path))?;
    if let Some(limit) = limit {
        bytes.truncate(limit as usize);
    }
    let mut out = Vec::new();
    let mut at = HEADER as usize;
    while at < bytes.len() {
        let Some(head) = bytes.get(at..at + RECORD_HEADER) else {
            return Err(damaged(path, format!("a torn record header at byte {at}")));
        };
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
        let check = u32::from_le_bytes(head[4..].try_into().expect("4 bytes"));
        let Some(payload) = bytes.get(at + RECORD_HEADER..at + RECORD_HEADER + len) else {
            return Err(damaged(path, format!("a record at byte {at} runs past the end")));
        };
        if xxh3_64(payload) as u32 != check {
            return Err(damaged(path, format!("the record at byte {at} fails its checksum")));
        }
        out.push(payload.to_vec());
        at += RECORD_HEADER + len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(n: u64) -> Item {
        Item::new().with("n", n).with("text", "x".repeat((n % 7) as usize))
    }

    fn numbers(items: &[(u64, Item)]) -> Vec<u64> {
        items
            .iter()
            .map(|(n, i)| {
                assert_eq!(i.get("n").and_then(|v| v.as_u64()), Some(*n));
                *n
            })
            .collect()
    }

    #[test]
    fn appends_count_only_once_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("items");
        let mut log = ItemLog::open(&path, None, false).unwrap();
        let end = log.append(&[item(1), item(2)]).unwrap();
        log.committed(end);
        // Written, never committed: a crash here leaves bytes no commit refers to.
        let lost = log.append(&[item(3)]).unwrap();
        assert!(lost.len > end.len);
        assert_eq!(numbers(&log.read_after(0).unwrap()), [1, 2]);
        drop(log);
        let log = ItemLog::open(&path, Some(end), false).unwrap();
        assert_eq!(numbers(&log.read_after(0).unwrap()), [1, 2]);
        assert_eq!(numbers(&log.read_after(1).unwrap()), [2]);
        assert_eq!(fs::metadata(path.join(file_name(1))).unwrap().len(), end.len, "the tail is cut off");
    }

    /// An append whose commit was never tried (the store halts after a batch that failed, whose
    /// outcome is unknown: `halt.rs`) is written over by the next one.
    #[test]
    fn an_append_never_committed_is_overwritten_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ItemLog::open(dir.path(), None, false).unwrap();
        let _failed = log.append(&[item(7), item(8), item(9)]).unwrap();
        let end = log.append(&[item(1)]).unwrap();
        log.committed(end);
        assert_eq!(numbers(&log.read_after(0).unwrap()), [1]);
    }

    #[test]
    fn rotates_and_drops_consumed_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ItemLog::open(dir.path(), None, false).unwrap();
        let big = Item::new().with("pad", "y".repeat(1024 * 1024));
        let mut n = 0;
        let mut end = log.end();
        for _ in 0..20 {
            end = log.append(std::slice::from_ref(&big)).unwrap();
            log.committed(end);
            n += 1;
        }
        assert!(end.generation > 1, "{end:?}");
        assert_eq!(log.read_after(0).unwrap().len(), n);
        assert_eq!(log.read_after(15).unwrap().len(), n - 15);
        let files = || fs::read_dir(dir.path()).unwrap().count();
        let before = files();
        log.drop_consumed(15).unwrap();
        assert!(files() < before);
        assert_eq!(log.read_after(15).unwrap().len(), n - 15);
        // Reopened at the same end, the remaining files still give every unconsumed item.
        drop(log);
        let log = ItemLog::open(dir.path(), Some(end), false).unwrap();
        assert_eq!(log.read_after(15).unwrap().len(), n - 15);
    }

    #[test]
    fn a_file_started_by_an_uncommitted_append_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ItemLog::open(dir.path(), None, false).unwrap();
        let end = log.append(&[item(1)]).unwrap();
        log.committed(end);
        fs::write(dir.path().join(file_name(2)), b"KUMOITM1\x02\0\0\0\0\0\0\0").unwrap();
        drop(log);
        let log = ItemLog::open(dir.path(), Some(end), false).unwrap();
        assert!(!dir.path().join(file_name(2)).exists());
        assert_eq!(numbers(&log.read_after(0).unwrap()), [1]);
    }

    #[test]
    fn damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ItemLog::open(dir.path(), None, false).unwrap();
        let end = log.append(&[item(1), item(2)]).unwrap();
        log.committed(end);
        drop(log);
        let path = dir.path().join(file_name(1));
        // A flipped byte inside a committed record.
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x55;
        fs::write(&path, &bytes).unwrap();
        let log = ItemLog::open(dir.path(), Some(end), false).unwrap();
        let e = log.read_after(0).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        // Shorter than committed.
        fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        let e = ItemLog::open(dir.path(), Some(end), false).unwrap_err().to_string();
        assert!(e.contains("shorter than committed"), "{e}");
        // The current file gone.
        fs::remove_file(&path).unwrap();
        let e = ItemLog::open(dir.path(), Some(end), false).unwrap_err().to_string();
        assert!(e.contains("current file is missing"), "{e}");
        // A stranger in the folder.
        fs::write(dir.path().join("notes.txt"), b"hi").unwrap();
        let e = ItemLog::open(dir.path(), Some(end), false).unwrap_err().to_string();
        assert!(e.contains("not part of the item log"), "{e}");
    }
}
