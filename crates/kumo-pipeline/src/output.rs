//! Where a file sink's bytes go. A file is opened without truncating it, so that a resumed run
//! can keep the prefix its last checkpoint committed; it is cut and positioned once, by
//! [`Output::open`] or else at the first write, and its bytes are counted so a checkpoint can
//! say where the whole items end.
//!
//! A file is cut back only when it is provably the one this crawl wrote: each flush records a
//! [`FileProof`] (a hash of the last bytes before the flushed length, and the file's identity)
//! that the checkpoint commits, and on resume the file must hold the same bytes before the
//! committed length, or at length 0 be the same file or empty. Anything else is refused and
//! left as it is. A new output refuses a file that holds data unless [`Existing::Replace`].

use std::cell::{Cell, RefCell};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use crate::{FileProof, SinkCheckpoint, SinkError, SinkResume};

/// Bytes before a checkpoint's offset that its proof hashes: a few records of any sink, so a
/// different file is all but certain to differ there, and cheap to keep and to read back.
const TAIL: usize = 4096;

/// What a new (not resumed) output does with a file that already holds data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Empty it and write from the start, as `File::create` does.
    #[default]
    Replace,
    /// Refuse it with [`SinkError::Exists`] and leave it as it is.
    Refuse,
}

/// A positionable file or a plain stream, counting what reaches a file.
///
/// The state `open` changes sits in `Cell`s because the CSV writer lends its writer only by
/// shared reference (`csv::Writer::get_ref`).
pub(crate) struct Output {
    target: String,
    dest: Dest,
    existing: Existing,
    /// Set once the output is positioned: by `open`, or fresh at the first write or flush.
    started: Cell<bool>,
    /// Bytes of the file holding output: the kept prefix plus every byte written since.
    len: Cell<u64>,
    /// `len` at the last successful flush, where whole items end.
    flushed: Cell<u64>,
    /// The last bytes of the file (at most [`TAIL`]), ending at `len`.
    tail: RefCell<Vec<u8>>,
    /// What proves the file as it stood at `flushed`.
    proof: Cell<Option<FileProof>>,
    /// Whether the file holds a trailer after `len` (`write_trailer`), to cut before the next
    /// write.
    trailer: Cell<bool>,
}

enum Dest {
    /// A regular file: cut back, positioned and counted.
    File { file: File, path: PathBuf, id: Option<(u64, u64)> },
    /// Standard output, a pipe, a device, any writer: nothing to cut back or count.
    Stream(Box<dyn Write + Send>),
}

/// Locks `file` (`flock`, held until it is closed) before anything reads or cuts it: two
/// crawls started at the same moment on one file would both find it empty and both write it.
fn lock(file: &File, meta: &Metadata, target: &str) -> Result<(), SinkError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = file_id(meta).and_then(|(dev, ino)| crate::holder::describe(dev, ino));
            Err(SinkError::Locked { target: target.to_string(), holder })
        }
        // A filesystem without locks (some network mounts): written unlocked, as before.
        Err(std::fs::TryLockError::Error(e)) => {
            tracing::warn!(target, error = %e, "the output file cannot be locked");
            Ok(())
        }
    }
}

#[cfg(unix)]
fn file_id(m: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> Option<(u64, u64)> {
    None
}

impl Output {
    /// Opens (creating) `path` for writing without touching its content. The error names the
    /// path. A path that is not a regular file (`/dev/stdout`, a named pipe) is a stream.
    /// `existing` says what a new output does with a file that holds data.
    pub(crate) fn create(path: &Path, existing: Existing) -> Result<Self, SinkError> {
        let target = path.display().to_string();
        let err = |error| SinkError::Io { target: target.clone(), error };
        let file = OpenOptions::new().write(true).create(true).truncate(false).open(path).map_err(err)?;
        let meta = file.metadata().map_err(err)?;
        let dest = if meta.is_file() {
            lock(&file, &meta, &target)?;
            Dest::File { file, path: path.to_path_buf(), id: file_id(&meta) }
        } else {
            Dest::Stream(Box::new(file))
        };
        Ok(Output::new(target, dest, existing))
    }

    pub(crate) fn stream(target: String, w: Box<dyn Write + Send>) -> Self {
        Output::new(target, Dest::Stream(w), Existing::Replace)
    }

    fn new(target: String, dest: Dest, existing: Existing) -> Self {
        Output {
            target,
            dest,
            existing,
            started: Cell::new(false),
            len: Cell::new(0),
            flushed: Cell::new(0),
            tail: RefCell::new(Vec::new()),
            proof: Cell::new(None),
            trailer: Cell::new(false),
        }
    }

    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    pub(crate) fn io(&self, error: impl Into<io::Error>) -> SinkError {
        SinkError::Io { target: self.target.clone(), error: error.into() }
    }

    /// Positions the output before anything is written: fresh (`None`, or a checkpoint
    /// without an offset), or resumed at a committed checkpoint, whose file keeps its first
    /// `offset` bytes once it is proven to be the crawl's own. Returns the bytes kept (0 for a
    /// stream, which has nothing to keep or cut).
    pub(crate) fn open(&self, resume: Option<&SinkResume>) -> Result<u64, SinkError> {
        if self.started.get() {
            return Err(SinkError::Resume {
                target: self.target.clone(),
                reason: "the sink was opened after it had started writing".into(),
            });
        }
        let Dest::File { file, path, id } = &self.dest else {
            self.started.set(true);
            return Ok(0);
        };
        let found = file.metadata().map_err(|e| self.io(e))?.len();
        let Some((keep, proof)) = resume.and_then(|r| r.offset.map(|o| (o, r.file))) else {
            self.start_fresh(file, found)?;
            return Ok(0);
        };
        if keep > found {
            return Err(SinkError::ResumeBeyondEnd { target: self.target.clone(), committed: keep, found });
        }
        let tail = self.verify(path, *id, keep, found, proof)?;
        self.position(file, keep, tail).map_err(|e| self.io(e))?;
        Ok(keep)
    }

    /// Starts a new output in `file`, which holds `found` bytes: refused if that is data
    /// and the output must not replace it.
    fn start_fresh(&self, file: &File, found: u64) -> Result<(), SinkError> {
        if found > 0 && self.existing == Existing::Refuse {
            return Err(SinkError::Exists { target: self.target.clone(), found });
        }
        self.position(file, 0, Vec::new()).map_err(|e| self.io(e))
    }

    /// Checks that the file is the one the checkpoint's `proof` describes, and returns its
    /// last bytes before `keep` (the proven tail).
    fn verify(
        &self,
        path: &Path,
        id: Option<(u64, u64)>,
        keep: u64,
        found: u64,
        proof: Option<FileProof>,
    ) -> Result<Vec<u8>, SinkError> {
        let not_ours =
            |reason: String| SinkError::NotOurs { target: self.target.clone(), committed: keep, reason };
        let Some(proof) = proof else {
            if found == 0 {
                return Ok(Vec::new()); // nothing to lose
            }
            return Err(not_ours("its checkpoint, from an older kumo, holds nothing to prove it by".into()));
        };
        if keep == 0 {
            // No byte committed to compare: it must be the file the crawl started, or empty.
            // Where files have no id (off Unix), a non-empty one cannot be told to be ours.
            if found > 0 && (id.is_none() || proof.file_id != id) {
                return Err(not_ours(format!(
                    "it holds {found} bytes and is not the file the crawl started writing"
                )));
            }
            return Ok(Vec::new());
        }
        let n = u64::from(proof.tail_len);
        if n > keep || n as usize > TAIL {
            return Err(not_ours("its checkpoint's proof does not fit the committed length".into()));
        }
        let mut tail = vec![0u8; n as usize];
        let mut f = File::open(path).map_err(|e| self.io(e))?;
        f.seek(SeekFrom::Start(keep - n)).and_then(|_| f.read_exact(&mut tail)).map_err(|e| self.io(e))?;
        if xxh3_64(&tail) != proof.tail_xxh3 {
            return Err(not_ours(format!(
                "its {n} bytes before byte {keep} are not the ones the crawl wrote there"
            )));
        }
        Ok(tail)
    }

    /// Starts the output fresh unless it is positioned already: a sink that was never opened
    /// writes its file from empty, as `File::create` would have left it (or refuses a file
    /// holding data, with [`Existing::Refuse`]).
    pub(crate) fn start(&self) -> io::Result<()> {
        match &self.dest {
            Dest::File { file, .. } if !self.started.get() => {
                let found = file.metadata()?.len();
                self.start_fresh(file, found).map_err(|e| match e {
                    SinkError::Io { error, .. } => error,
                    other => io::Error::new(io::ErrorKind::AlreadyExists, other.to_string()),
                })
            }
            _ => {
                self.started.set(true);
                Ok(())
            }
        }
    }

    /// Cuts the file to `keep` bytes, whose last ones are `tail`, and writes after them.
    fn position(&self, mut file: &File, keep: u64, tail: Vec<u8>) -> io::Result<()> {
        file.set_len(keep)?;
        file.seek(SeekFrom::Start(keep))?;
        self.len.set(keep);
        self.trailer.set(false);
        *self.tail.borrow_mut() = tail;
        self.mark_flushed();
        self.started.set(true);
        Ok(())
    }

    /// Records that whole items end at `len`, with the proof of the file there.
    fn mark_flushed(&self) {
        self.flushed.set(self.len.get());
        if let Dest::File { id, .. } = &self.dest {
            let tail = self.tail.borrow();
            let proof = FileProof { tail_len: tail.len() as u32, tail_xxh3: xxh3_64(&tail), file_id: *id };
            self.proof.set(Some(proof));
        }
    }

    /// Keeps the last [`TAIL`] bytes written.
    fn remember(&self, bytes: &[u8]) {
        let mut tail = self.tail.borrow_mut();
        if bytes.len() >= TAIL {
            tail.clear();
            tail.extend_from_slice(&bytes[bytes.len() - TAIL..]);
        } else {
            let excess = (tail.len() + bytes.len()).saturating_sub(TAIL);
            tail.drain(..excess);
            tail.extend_from_slice(bytes);
        }
    }

    /// Whether the output is a regular file (one that can be cut back and positioned).
    pub(crate) fn is_file(&self) -> bool {
        matches!(self.dest, Dest::File { .. })
    }

    /// Writes `bytes` after what is flushed, outside it: the closing bytes that make the file
    /// whole (a JSON array's `]`) while the items go on. They are not counted, not part of
    /// any checkpoint's proof, and cut before the next write, so a resume cuts them back as
    /// it cuts any byte past its checkpoint. Call right after a flush; a stream takes nothing.
    pub(crate) fn write_trailer(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Dest::File { file, .. } = &mut self.dest else {
            return Ok(());
        };
        file.write_all(bytes)?;
        file.seek(SeekFrom::Start(self.len.get()))?;
        self.trailer.set(true);
        Ok(())
    }

    /// Where whole items end: the file's length at the last flush (or as opened). `None` for a
    /// stream.
    pub(crate) fn offset(&self) -> Option<u64> {
        matches!(self.dest, Dest::File { .. }).then(|| self.flushed.get())
    }

    /// What proves the file at [`offset`](Self::offset), for the checkpoint. `None` for a
    /// stream.
    pub(crate) fn proof(&self) -> Option<FileProof> {
        self.proof.get()
    }

    /// A file sink's checkpoint: where its whole items end, with the proof.
    pub(crate) fn checkpoint(&self) -> SinkCheckpoint {
        SinkCheckpoint { offset: self.offset(), state: Vec::new(), file: self.proof() }
    }

    /// Runs `read` over the bytes the file holds (a CSV sink reads its header back). A stream
    /// reads as empty.
    pub(crate) fn read_back<R>(&self, read: impl FnOnce(&mut dyn Read) -> R) -> Result<R, SinkError> {
        match &self.dest {
            // A handle of its own: the sink's may be write-only, and its position must stay.
            Dest::File { path, .. } => {
                let file = File::open(path).map_err(|e| self.io(e))?;
                Ok(read(&mut file.take(self.len.get())))
            }
            Dest::Stream(_) => Ok(read(&mut io::empty())),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.start()?;
        match &mut self.dest {
            Dest::File { file, .. } => {
                if self.trailer.get() {
                    file.set_len(self.len.get())?;
                    self.trailer.set(false);
                }
                let n = file.write(buf)?;
                self.len.set(self.len.get() + n as u64);
                self.remember(&buf[..n]);
                Ok(n)
            }
            Dest::Stream(w) => w.write(buf),
        }
    }

    // Not `start`: a writer's drop flushes too, and dropping a sink that was never written to
    // must leave a committed file alone.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.dest {
            Dest::File { file, .. } => {
                file.flush()?;
                self.mark_flushed();
                Ok(())
            }
            Dest::Stream(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(content: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    fn resume_at(offset: u64, file: Option<FileProof>) -> SinkResume {
        SinkResume { offset: Some(offset), state: vec![], file }
    }

    /// Writes `committed` then `more` to `path` as a crawl would, flushing in between; returns
    /// the checkpoint's offset and proof after `committed`.
    fn crawl_wrote(path: &Path, committed: &[u8], more: &[u8]) -> (u64, Option<FileProof>) {
        let mut out = Output::create(path, Existing::Replace).unwrap();
        out.open(None).unwrap();
        out.write_all(committed).unwrap();
        out.flush().unwrap();
        let checkpoint = (out.offset().unwrap(), out.proof());
        out.write_all(more).unwrap();
        out.flush().unwrap();
        checkpoint
    }

    #[test]
    fn create_leaves_the_file_alone_until_it_starts() {
        let (_dir, path) = file_with("old content\n");
        let out = Output::create(&path, Existing::Replace).unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old content\n");
        let mut out = Output::create(&path, Existing::Replace).unwrap();
        out.write_all(b"new\n").unwrap();
        out.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(out.offset(), Some(4));
    }

    #[test]
    fn a_second_output_on_a_file_in_use_is_refused_until_the_first_closes() {
        let (_dir, path) = file_with("");
        let first = Output::create(&path, Existing::Refuse).unwrap();
        let e = Output::create(&path, Existing::Replace).err().expect("refused while the first is open");
        assert!(matches!(e, SinkError::Locked { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("is being written by another crawl"), "{text}");
        assert!(text.contains(&format!("process {}", std::process::id())), "the holder named: {text}");
        drop(first);
        Output::create(&path, Existing::Refuse).expect("free once the first is closed");
    }

    #[test]
    fn a_new_output_refuses_a_file_holding_data_unless_it_may_replace_it() {
        let (_dir, path) = file_with("someone's data\n");
        let out = Output::create(&path, Existing::Refuse).unwrap();
        let e = out.open(None).unwrap_err();
        assert!(matches!(e, SinkError::Exists { found: 15, .. }), "{e}");
        assert!(e.to_string().contains("-O"), "{e}");
        // Closed, so the next one may lock the file.
        drop(out);
        // Never opened: the first write refuses too.
        let mut out = Output::create(&path, Existing::Refuse).unwrap();
        assert!(out.write_all(b"x").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone's data\n", "left alone");
        drop(out);

        std::fs::write(&path, "").unwrap();
        let out = Output::create(&path, Existing::Refuse).unwrap();
        assert_eq!(out.open(None).unwrap(), 0, "an empty file holds nothing to lose");
    }

    #[test]
    fn open_keeps_the_proven_prefix_and_counts_from_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let (offset, proof) = crawl_wrote(&path, b"keep\n", b"cut\n");
        assert_eq!(offset, 5);
        let mut out = Output::create(&path, Existing::Refuse).unwrap();
        assert_eq!(out.open(Some(&resume_at(offset, proof))).unwrap(), 5);
        assert_eq!(out.offset(), Some(5));
        assert_eq!(out.proof(), proof, "the same proof until more is written");
        out.write_all(b"more\n").unwrap();
        assert_eq!(out.offset(), Some(5), "not flushed yet");
        out.flush().unwrap();
        assert_eq!(out.offset(), Some(10));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep\nmore\n");
        assert!(matches!(out.open(None), Err(SinkError::Resume { .. })), "opened twice");
    }

    #[test]
    fn a_file_that_differs_before_the_offset_is_not_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let (offset, proof) = crawl_wrote(&path, b"{\"n\":1}\n{\"n\":2}\n", b"{\"n\":3}\n");
        // Rewritten in place (same inode), longer than the checkpoint.
        let theirs = "{\"other\":1}\n{\"other\":2}\n{\"other\":3}\n";
        std::fs::write(&path, theirs).unwrap();
        let out = Output::create(&path, Existing::Replace).unwrap();
        let e = out.open(Some(&resume_at(offset, proof))).unwrap_err();
        assert!(matches!(e, SinkError::NotOurs { committed: 16, .. }), "{e}");
        assert!(e.to_string().contains("--fresh"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs, "left alone");
    }

    #[test]
    fn at_offset_zero_only_the_same_file_or_an_empty_one_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let (offset, proof) = crawl_wrote(&path, b"", b"{\"n\":1}\n");
        assert_eq!(offset, 0);
        // The crawl's own file, with an item written after the checkpoint: cut back.
        let out = Output::create(&path, Existing::Refuse).unwrap();
        assert_eq!(out.open(Some(&resume_at(0, proof))).unwrap(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        // Another file put in its place: left alone.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "theirs\n").unwrap();
        let out = Output::create(&path, Existing::Refuse).unwrap();
        let e = out.open(Some(&resume_at(0, proof))).unwrap_err();
        assert!(matches!(e, SinkError::NotOurs { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs\n");
    }

    #[test]
    fn a_checkpoint_without_a_proof_cuts_nothing() {
        let (_dir, path) = file_with("abcdef");
        let out = Output::create(&path, Existing::Replace).unwrap();
        let e = out.open(Some(&resume_at(3, None))).unwrap_err();
        assert!(matches!(e, SinkError::NotOurs { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "abcdef");
    }

    #[test]
    fn the_proof_covers_the_last_bytes_across_many_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = Output::create(&path, Existing::Replace).unwrap();
        for chunk in big.chunks(333) {
            out.write_all(chunk).unwrap();
        }
        out.flush().unwrap();
        let proof = out.proof().unwrap();
        assert_eq!(proof.tail_len as usize, TAIL);
        assert_eq!(proof.tail_xxh3, xxh3_64(&big[big.len() - TAIL..]));
        out.write_all(b"after").unwrap();
        drop(out);
        let out = Output::create(&path, Existing::Replace).unwrap();
        assert_eq!(out.open(Some(&resume_at(10_000, Some(proof)))).unwrap(), 10_000);
        assert_eq!(std::fs::read(&path).unwrap(), big);
    }

    #[test]
    fn open_past_the_end_names_the_file_and_both_lengths() {
        let (_dir, path) = file_with("short\n");
        let out = Output::create(&path, Existing::Replace).unwrap();
        let err = out.open(Some(&resume_at(100, None))).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, SinkError::ResumeBeyondEnd { committed: 100, found: 6, .. }), "{text}");
        assert!(
            text.contains(&path.display().to_string())
                && text.contains("100 bytes")
                && text.contains("only 6")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "short\n", "left alone");
    }

    #[test]
    fn a_stream_has_no_offset_and_ignores_the_prefix() {
        let mut out = Output::stream("-".into(), Box::new(io::sink()));
        assert_eq!(out.open(Some(&resume_at(100, None))).unwrap(), 0);
        out.write_all(b"x").unwrap();
        out.flush().unwrap();
        assert_eq!((out.offset(), out.proof()), (None, None));
    }
}
