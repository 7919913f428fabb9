//! Where a file sink's bytes go. A file is opened without truncating it, so that a resumed run
//! can keep the prefix its last checkpoint committed; it is cut and positioned once, by
//! [`Output::open`] or else at the first write, and its bytes are counted so a checkpoint can
//! say where the whole items end.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::SinkError;

/// A positionable file or a plain stream, counting what reaches a file.
///
/// The state `open` changes sits in `Cell`s because the CSV writer lends its writer only by
/// shared reference (`csv::Writer::get_ref`).
pub(crate) struct Output {
    target: String,
    dest: Dest,
    /// Set once the output is positioned: by `open`, or fresh at the first write or flush.
    started: Cell<bool>,
    /// Bytes of the file holding output: the kept prefix plus every byte written since.
    len: Cell<u64>,
    /// `len` at the last successful flush, where whole items end.
    flushed: Cell<u64>,
}

enum Dest {
    /// A regular file: cut back, positioned and counted.
    File { file: File, path: PathBuf },
    /// Standard output, a pipe, a device, any writer: nothing to cut back or count.
    Stream(Box<dyn Write + Send>),
}

impl Output {
    /// Opens (creating) `path` for writing without touching its content. The error names the
    /// path. A path that is not a regular file (`/dev/stdout`, a named pipe) is a stream.
    pub(crate) fn create(path: &Path) -> Result<Self, SinkError> {
        let target = path.display().to_string();
        let err = |error| SinkError::Io { target: target.clone(), error };
        let file = OpenOptions::new().write(true).create(true).truncate(false).open(path).map_err(err)?;
        let dest = if file.metadata().map_err(err)?.is_file() {
            Dest::File { file, path: path.to_path_buf() }
        } else {
            Dest::Stream(Box::new(file))
        };
        Ok(Output::new(target, dest))
    }

    pub(crate) fn stream(target: String, w: Box<dyn Write + Send>) -> Self {
        Output::new(target, Dest::Stream(w))
    }

    fn new(target: String, dest: Dest) -> Self {
        Output { target, dest, started: Cell::new(false), len: Cell::new(0), flushed: Cell::new(0) }
    }

    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    pub(crate) fn io(&self, error: impl Into<io::Error>) -> SinkError {
        SinkError::Io { target: self.target.clone(), error: error.into() }
    }

    /// Positions the output before anything is written: a file keeps its first `keep` bytes
    /// (`None`: none) and is written after them. Returns the bytes kept (0 for a stream,
    /// which has nothing to keep or cut).
    pub(crate) fn open(&self, keep: Option<u64>) -> Result<u64, SinkError> {
        if self.started.get() {
            return Err(SinkError::Resume {
                target: self.target.clone(),
                reason: "the sink was opened after it had started writing".into(),
            });
        }
        let keep = keep.unwrap_or(0);
        let Dest::File { file, .. } = &self.dest else {
            self.started.set(true);
            return Ok(0);
        };
        let found = file.metadata().map_err(|e| self.io(e))?.len();
        if keep > found {
            return Err(SinkError::ResumeBeyondEnd { target: self.target.clone(), committed: keep, found });
        }
        self.position(file, keep).map_err(|e| self.io(e))?;
        Ok(keep)
    }

    /// Starts the output fresh unless it is positioned already: a sink that was never opened
    /// writes its file from empty, as `File::create` would have left it.
    pub(crate) fn start(&self) -> io::Result<()> {
        match &self.dest {
            Dest::File { file, .. } if !self.started.get() => self.position(file, 0),
            _ => {
                self.started.set(true);
                Ok(())
            }
        }
    }

    fn position(&self, mut file: &File, keep: u64) -> io::Result<()> {
        file.set_len(keep)?;
        file.seek(SeekFrom::Start(keep))?;
        self.len.set(keep);
        self.flushed.set(keep);
        self.started.set(true);
        Ok(())
    }

    /// Where whole items end: the file's length at the last flush (or as opened). `None` for a
    /// stream.
    pub(crate) fn offset(&self) -> Option<u64> {
        matches!(self.dest, Dest::File { .. }).then(|| self.flushed.get())
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
                let n = file.write(buf)?;
                self.len.set(self.len.get() + n as u64);
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
                self.flushed.set(self.len.get());
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

    #[test]
    fn create_leaves_the_file_alone_until_it_starts() {
        let (_dir, path) = file_with("old content\n");
        let out = Output::create(&path).unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old content\n");
        let mut out = Output::create(&path).unwrap();
        out.write_all(b"new\n").unwrap();
        out.flush().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(out.offset(), Some(4));
    }

    #[test]
    fn open_keeps_the_prefix_and_counts_from_there() {
        let (_dir, path) = file_with("keep\ncut\n");
        let mut out = Output::create(&path).unwrap();
        assert_eq!(out.open(Some(5)).unwrap(), 5);
        assert_eq!(out.offset(), Some(5));
        out.write_all(b"more\n").unwrap();
        assert_eq!(out.offset(), Some(5), "not flushed yet");
        out.flush().unwrap();
        assert_eq!(out.offset(), Some(10));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep\nmore\n");
        assert!(matches!(out.open(Some(0)), Err(SinkError::Resume { .. })), "opened twice");
    }

    #[test]
    fn open_past_the_end_names_the_file_and_both_lengths() {
        let (_dir, path) = file_with("short\n");
        let out = Output::create(&path).unwrap();
        let err = out.open(Some(100)).unwrap_err();
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
        assert_eq!(out.open(Some(100)).unwrap(), 0);
        out.write_all(b"x").unwrap();
        out.flush().unwrap();
        assert_eq!(out.offset(), None);
    }
}
