//! [`WarcWriter`]: appends records to `.warc.gz` files that roll over at a size, and resumes
//! at a committed position after a crash.
//!
//! A file is written as `NAME.warc.gz.open` and renamed `NAME.warc.gz` when closed. Its CDXJ
//! index, if configured, gathers in `NAME.cdxj.lines` as records are appended and is sorted
//! into `NAME.cdxj` on close. Every record is its own gzip member, so cutting a file back to a
//! position the writer returned leaves a valid file.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::cdxj::{LineFile, index_by_reading, push_line_end};
use crate::date::file_stamp;
use crate::error::WarcError;
use crate::files::{self, Found, Kind, index_name, open_name, warc_name};
use crate::records::{RecordOptions, Records};
use crate::warcinfo::warcinfo;

/// One gigabyte, the size at which a file is closed by default.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1_000_000_000;

/// Where and how a [`WarcWriter`] writes its files.
#[derive(Debug, Clone)]
pub struct WarcConfig {
    /// The folder of the files, created if missing.
    pub dir: PathBuf,
    /// File names: `{prefix}-{YYYYMMDDhhmmss}-{seq:05}.warc.gz` (the time the file was started,
    /// UTC; seq from 00000).
    pub prefix: String,
    /// A file is closed and the next one started once it holds at least this many bytes; one
    /// append's records never straddle two files.
    pub max_file_bytes: u64,
    /// Write a CDXJ index beside each file when it is closed: `NAME.cdxj` for
    /// `NAME.warc.gz`, as `cdxj-indexer -s` would write it (one line per response and
    /// revisit, sorted bytewise).
    pub cdxj: bool,
    /// The warcinfo record's fields after `software`, `format`, `conformsTo` and
    /// `http-header-note`: e.g. ("robots", "obey"), ("crawl", "shop").
    pub info: Vec<(String, String)>,
    /// The warcinfo's `software`, e.g. "kumo/0.1.0".
    pub software: String,
    /// Settings of the warcinfo records the writer makes. Records from
    /// [`build`](crate::build) come compressed already, with the options given to it.
    pub record: RecordOptions,
}

impl WarcConfig {
    /// Files of `prefix` in `dir`, with the defaults: 1 GB files, CDXJ indexes, no extra info.
    pub fn new(dir: impl Into<PathBuf>, prefix: impl Into<String>) -> Self {
        WarcConfig {
            dir: dir.into(),
            prefix: prefix.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            cdxj: true,
            info: Vec::new(),
            software: format!("kumo/{}", env!("CARGO_PKG_VERSION")),
            record: RecordOptions::default(),
        }
    }
}

/// Where the committed part of the output ends: saved by the crawler with each commit, given
/// back to [`WarcWriter::open`] on resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarcPosition {
    /// The file's final name (`….warc.gz`, without `.open`).
    pub file: String,
    /// The file's sequence number, as in its name.
    pub seq: u32,
    /// Its length up to the end of the last appended record.
    pub offset: u64,
}

/// Appends [`Records`] to rolling `.warc.gz` files, fresh or resumed ([`WarcWriter::open`]).
pub struct WarcWriter {
    cfg: WarcConfig,
    current: Option<OpenFile>,
    next_seq: u32,
    written: u64,
}

/// The file being appended to.
struct OpenFile {
    /// The final name.
    name: String,
    seq: u32,
    /// The `.open` path.
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
    /// The file's index lines so far, unsorted; None when no index is written, or when it is
    /// made by reading the file back on close (a resumed file, or records not from `build`).
    lines: Option<LineFile>,
}

impl WarcWriter {
    /// A fresh writer (`resume` None) creates `dir` if needed and starts no file until the
    /// first append; its files are numbered after the closed files of this prefix already
    /// there (an earlier round of a re-crawl, whose originals its revisits refer to). It
    /// refuses ([`WarcError::NotEmpty`]) a folder holding a file of this prefix still `.open`:
    /// that crawl did not finish, and only its committed position says what of it to keep.
    ///
    /// Resuming, the file `resume.file` (found as `.open` or closed) is cut back to
    /// `resume.offset`, dropping records whose commit never landed, and reopened as `.open`
    /// (a closed file loses its index, rewritten when it closes again). It is an error
    /// ([`WarcError::Shorter`]) if it is shorter than that: it lost committed records. Files of
    /// the prefix with a higher seq hold only uncommitted records and are deleted with their
    /// indexes; those with a lower seq still `.open` (a crash between closing and renaming)
    /// are closed properly, and closed ones missing their index are indexed.
    pub fn open(cfg: WarcConfig, resume: Option<&WarcPosition>) -> Result<Self, WarcError> {
        match resume {
            None => Self::fresh(cfg),
            Some(pos) => Self::resume(cfg, pos),
        }
    }

    fn fresh(cfg: WarcConfig) -> Result<Self, WarcError> {
        fs::create_dir_all(&cfg.dir).map_err(WarcError::io(&cfg.dir))?;
        let found = files::scan(&cfg.dir, &cfg.prefix)?;
        // A file still `.open` belongs to a crawl that did not finish: only its committed
        // position may say what of it to keep.
        if let Some(open) = found.iter().find(|f| f.kind == Kind::Open) {
            return Err(WarcError::NotEmpty { dir: cfg.dir, file: open.name.clone() });
        }
        // Closed files are an earlier crawl's (or an earlier round's of this one, whose
        // revisits refer to them): new files go after them, in the same collection.
        let next_seq = found.iter().map(|f| f.seq + 1).max().unwrap_or(0);
        Ok(WarcWriter { cfg, current: None, next_seq, written: 0 })
    }

    fn resume(cfg: WarcConfig, pos: &WarcPosition) -> Result<Self, WarcError> {
        let bad = |why| WarcError::BadPosition { file: pos.file.clone(), seq: pos.seq, why };
        let named = files::parse(&cfg.prefix, &pos.file).ok_or(bad("is not a file name of this prefix"))?;
        if named.kind != Kind::Closed || named.warc != pos.file {
            return Err(bad("is not a file name of this prefix"));
        }
        if named.seq != pos.seq {
            return Err(bad("has a seq that differs from its file name's"));
        }
        let found = files::scan(&cfg.dir, &cfg.prefix)?;
        let dir = cfg.dir.clone();
        let open_path = dir.join(open_name(&pos.file));
        let closed_path = dir.join(&pos.file);

        // Check the file before touching anything, so a wrong position destroys nothing.
        let has = |kind| found.iter().any(|f| f.seq == pos.seq && f.warc == pos.file && f.kind == kind);
        let existing = if has(Kind::Open) {
            &open_path
        } else if has(Kind::Closed) {
            &closed_path
        } else {
            return Err(WarcError::Missing { file: pos.file.clone() });
        };
        let len = fs::metadata(existing).map_err(WarcError::io(existing))?.len();
        if len < pos.offset {
            return Err(WarcError::Shorter { file: pos.file.clone(), len, offset: pos.offset });
        }

        for f in found.iter().filter(|f| f.seq > pos.seq) {
            tracing::info!(file = %f.name, "deleting WARC output of commits that never landed");
            remove(&dir.join(&f.name))?;
        }
        // An index of the resumed file is stale: it is rewritten on close. Working files of
        // indexes are stale anywhere.
        for f in
            found.iter().filter(|f| f.kind == Kind::IndexTemp || (f.seq == pos.seq && f.kind == Kind::Index))
        {
            remove(&dir.join(&f.name))?;
        }
        for f in found.iter().filter(|f| f.seq < pos.seq) {
            match f.kind {
                Kind::Open => {
                    tracing::info!(file = %f.name, "closing a WARC file a crash left open");
                    let file = OpenOptions::new().append(true).open(dir.join(&f.name));
                    let file = file.map_err(WarcError::io(dir.join(&f.name)))?;
                    finish(&cfg, &f.warc, &dir.join(&f.name), file, None)?;
                }
                Kind::Closed if cfg.cdxj && !has_index(&found, f) => {
                    index_by_reading(&dir.join(&f.warc), &f.warc, &dir.join(index_name(&f.warc)))?;
                }
                Kind::Closed | Kind::Index | Kind::IndexTemp => {}
            }
        }

        if existing == &closed_path {
            fs::rename(&closed_path, &open_path).map_err(WarcError::io(&open_path))?;
        }
        let mut file =
            OpenOptions::new().read(true).write(true).open(&open_path).map_err(WarcError::io(&open_path))?;
        file.set_len(pos.offset).map_err(WarcError::io(&open_path))?;
        file.seek(SeekFrom::End(0)).map_err(WarcError::io(&open_path))?;
        let current = OpenFile {
            name: pos.file.clone(),
            seq: pos.seq,
            path: open_path,
            out: BufWriter::with_capacity(256 * 1024, file),
            len: pos.offset,
            lines: None,
        };
        Ok(WarcWriter { cfg, current: Some(current), next_seq: pos.seq + 1, written: 0 })
    }

    /// Appends the records (in order), rolling over first when the current file is at or past
    /// `max_file_bytes` (a new file starts with its warcinfo record); returns the position
    /// after them.
    ///
    /// The bytes are handed to the operating system before this returns, so a killed process
    /// loses none of what it was told is written; making them durable against a power loss is
    /// [`sync`](Self::sync)'s job.
    pub fn append(&mut self, records: &[Records]) -> Result<WarcPosition, WarcError> {
        if self.current.as_ref().is_some_and(|c| c.len >= self.cfg.max_file_bytes) {
            self.roll()?;
        }
        let file = match self.current.take() {
            Some(file) => file,
            None => self.start()?,
        };
        let file = self.current.insert(file);
        for r in records {
            file.index(r)?;
            file.out.write_all(&r.bytes).map_err(WarcError::io(&file.path))?;
            file.len += r.bytes.len() as u64;
            self.written += r.bytes.len() as u64;
        }
        file.out.flush().map_err(WarcError::io(&file.path))?;
        Ok(file.position())
    }

    /// The end of what was appended, if a file was started.
    pub fn position(&self) -> Option<WarcPosition> {
        self.current.as_ref().map(OpenFile::position)
    }

    /// Bytes written by this writer (all files, warcinfo included).
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Makes everything appended so far durable (fdatasync of the current file). Files closed
    /// by a rollover already are.
    pub fn sync(&mut self) -> Result<(), WarcError> {
        if let Some(f) = &mut self.current {
            f.out.flush().map_err(WarcError::io(&f.path))?;
            f.out.get_ref().sync_data().map_err(WarcError::io(&f.path))?;
        }
        Ok(())
    }

    /// Flushes, fsyncs, renames `.open` to the final name, and writes the CDXJ if configured.
    pub fn close(mut self) -> Result<(), WarcError> {
        match self.current.take() {
            Some(f) => f.close(&self.cfg),
            None => Ok(()),
        }
    }

    fn roll(&mut self) -> Result<(), WarcError> {
        if let Some(f) = self.current.take() {
            f.close(&self.cfg)?;
        }
        Ok(())
    }

    /// Starts the next file with its warcinfo record.
    fn start(&mut self) -> Result<OpenFile, WarcError> {
        let now = SystemTime::now();
        let seq = self.next_seq;
        let name = warc_name(&self.cfg.prefix, &file_stamp(now), seq);
        let path = self.cfg.dir.join(open_name(&name));
        let file =
            OpenOptions::new().write(true).create_new(true).open(&path).map_err(WarcError::io(&path))?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        let info = warcinfo(&name, now, &self.cfg.software, &self.cfg.info, &self.cfg.record);
        out.write_all(&info.bytes).map_err(WarcError::io(&path))?;
        let len = info.bytes.len() as u64;
        self.written += len;
        self.next_seq = seq + 1;
        tracing::debug!(file = %name, "started a WARC file");
        let lines = match self.cfg.cdxj {
            true => Some(LineFile::create(&self.cfg.dir.join(index_name(&name)))?),
            false => None,
        };
        Ok(OpenFile { name, seq, path, out, len, lines })
    }
}

impl OpenFile {
    fn position(&self) -> WarcPosition {
        WarcPosition { file: self.name.clone(), seq: self.seq, offset: self.len }
    }

    /// Writes the index lines of `r`, about to be appended at the end of the file. Records
    /// that do not bring their lines (not made by `build`) make the file indexed by reading
    /// it back when it closes.
    fn index(&mut self, r: &Records) -> Result<(), WarcError> {
        let Some(lines) = &mut self.lines else { return Ok(()) };
        let Some(starts) = r.index_lines() else {
            return self.lines.take().map_or(Ok(()), LineFile::discard);
        };
        for (member, start) in starts {
            let offset = self.len + r.members[..*member].iter().sum::<u64>();
            let mut line = start.clone();
            push_line_end(&mut line, r.members[*member], offset, &self.name);
            lines.push(&line)?;
        }
        Ok(())
    }

    fn close(self, cfg: &WarcConfig) -> Result<(), WarcError> {
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|e| WarcError::Io { path: path.clone(), source: e.into_error() })?;
        finish(cfg, &self.name, &path, file, self.lines)
    }
}

/// Closes a finished file: fsync, rename from `.open` to `name`, then its index.
fn finish(
    cfg: &WarcConfig,
    name: &str,
    open_path: &Path,
    file: File,
    lines: Option<LineFile>,
) -> Result<(), WarcError> {
    file.sync_all().map_err(WarcError::io(open_path))?;
    drop(file);
    let closed = cfg.dir.join(name);
    fs::rename(open_path, &closed).map_err(WarcError::io(&closed))?;
    // The rename is durable only once the folder is synced.
    File::open(&cfg.dir).and_then(|d| d.sync_all()).map_err(WarcError::io(&cfg.dir))?;
    let index = cfg.dir.join(index_name(name));
    match lines {
        Some(lines) => lines.finish(&index)?,
        None if cfg.cdxj => index_by_reading(&closed, name, &index)?,
        None => {}
    }
    tracing::debug!(file = %name, "closed a WARC file");
    Ok(())
}

fn has_index(found: &[Found], f: &Found) -> bool {
    found.iter().any(|i| i.kind == Kind::Index && i.warc == f.warc)
}

fn remove(path: &Path) -> Result<(), WarcError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(WarcError::Io { path: path.to_path_buf(), source: e })
        }
        _ => Ok(()),
    }
}
