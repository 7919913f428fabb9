//! The CDXJ index of a closed file, line for line what `cdxj-indexer -s` writes for it:
//! `{surt} {timestamp14} {json}`, sorted bytewise.
//!
//! [`build`](crate::build) computes each line's start (all but the member's length and
//! offset and the file's name) while it has the fields at hand, and the writer appends the
//! finished lines, unsorted, to a side file as it writes the records; closing sorts them. Reading
//! a file back to index it costs about as much CPU as writing it did (every member has to be
//! inflated), so that is left for files whose side file a crash lost.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write as _};
use std::path::{Path, PathBuf};

use crate::date::timestamp14;
use crate::error::WarcError;
use crate::reader::{RecordInfo, WarcReader};
use crate::records::WARC_FIELDS;
use crate::surt::surt;

/// Lines sorted in memory at once; a larger index is sorted in runs of this size and merged.
const RUN_BYTES: usize = 16 << 20;

/// The fields of an index line that the record itself gives.
pub(crate) struct IndexFields<'a> {
    pub(crate) url: &'a str,
    pub(crate) date: &'a str,
    pub(crate) mime: Option<&'a str>,
    pub(crate) status: Option<u16>,
    pub(crate) digest: Option<&'a str>,
}

impl IndexFields<'_> {
    /// The line up to the member's length: `{surt} {timestamp} {"url": …, "digest": …`.
    pub(crate) fn line_start(&self) -> String {
        let mut s = String::with_capacity(2 * self.url.len() + 128);
        let _ = write!(s, "{} {} {{", surt(self.url), timestamp14(self.date));
        let mut first = true;
        let status = self.status.map(|s| s.to_string());
        for (name, value) in [
            ("url", Some(self.url)),
            ("mime", self.mime),
            ("status", status.as_deref()),
            ("digest", self.digest),
        ] {
            if let Some(v) = value {
                if !first {
                    s.push_str(", ");
                }
                first = false;
                let _ = write!(s, "\"{name}\": ");
                push_json_string(&mut s, v);
            }
        }
        s
    }
}

/// The rest of a line: the member's place and the file's name, in cdxj-indexer's field order.
pub(crate) fn push_line_end(line: &mut String, length: u64, offset: u64, filename: &str) {
    if !line.ends_with('{') {
        line.push_str(", ");
    }
    let _ = write!(line, "\"length\": \"{length}\", \"offset\": \"{offset}\", \"filename\": ");
    push_json_string(line, filename);
    line.push_str("}\n");
}

/// The line cdxj-indexer writes for a record with its default fields, or None for the records
/// it leaves out (requests, warcinfo, and metadata or resources that are WARC fields).
fn index_line(r: &RecordInfo, filename: &str) -> Option<String> {
    match r.warc_type.as_str() {
        "response" | "revisit" => {}
        "resource" | "metadata" if r.content_type.as_deref() != Some(WARC_FIELDS) => {}
        _ => return None,
    }
    let mime = match r.warc_type.as_str() {
        "revisit" => Some("warc/revisit".to_string()),
        "response" => r.http_content_type.as_deref().map(mime_of),
        _ => r.content_type.as_deref().map(mime_of),
    };
    let fields = IndexFields {
        url: r.target.as_deref().unwrap_or(""),
        date: &r.date,
        mime: mime.as_deref(),
        status: r.http_status,
        digest: r.payload_digest.as_deref(),
    };
    let mut line = fields.line_start();
    push_line_end(&mut line, r.length, r.offset, filename);
    Some(line)
}

/// The index lines of the file at `path`, read whole, sorted, each ending in a newline.
/// `filename` is what the lines call the file (its name without the folder).
pub fn index_lines(path: &Path, filename: &str) -> Result<Vec<String>, WarcError> {
    let mut lines = Vec::new();
    for record in WarcReader::open(path)? {
        lines.extend(index_line(&record?.info, filename));
    }
    // cdxj-indexer sorts Python strings, which for UTF-8 is byte order (`LC_ALL=C sort`).
    lines.sort_unstable();
    Ok(lines)
}

/// `NAME.cdxj.{what}` beside `NAME.cdxj`.
fn beside(index: &Path, what: &str) -> PathBuf {
    let mut s = index.as_os_str().to_owned();
    s.push(".");
    s.push(what);
    PathBuf::from(s)
}

/// The unsorted lines of a file being written, in `NAME.cdxj.lines`.
pub(crate) struct LineFile {
    path: PathBuf,
    out: BufWriter<File>,
}

impl LineFile {
    pub(crate) fn create(index: &Path) -> Result<Self, WarcError> {
        let path = beside(index, "lines");
        let file = File::create(&path).map_err(WarcError::io(&path))?;
        Ok(LineFile { out: BufWriter::with_capacity(64 * 1024, file), path })
    }

    pub(crate) fn push(&mut self, line: &str) -> Result<(), WarcError> {
        self.out.write_all(line.as_bytes()).map_err(WarcError::io(&self.path))
    }

    /// Gives up on the side file (the index is then made by reading the WARC file back).
    pub(crate) fn discard(self) -> Result<(), WarcError> {
        drop(self.out);
        fs::remove_file(&self.path).map_err(WarcError::io(&self.path))
    }

    /// Sorts the lines into `index`.
    pub(crate) fn finish(self, index: &Path) -> Result<(), WarcError> {
        self.out
            .into_inner()
            .map_err(|e| WarcError::Io { path: self.path.clone(), source: e.into_error() })?;
        sort_into(&self.path, index)?;
        fs::remove_file(&self.path).map_err(WarcError::io(&self.path))
    }
}

/// Indexes `warc` by reading it whole, for a file whose side file is gone (a resumed one).
pub(crate) fn index_by_reading(warc: &Path, filename: &str, index: &Path) -> Result<(), WarcError> {
    let mut lines = LineFile::create(index)?;
    for record in WarcReader::open(warc)? {
        if let Some(line) = index_line(&record?.info, filename) {
            lines.push(&line)?;
        }
    }
    lines.finish(index)
}

/// Writes the lines of `unsorted` to `index`, sorted, holding at most [`RUN_BYTES`] of them in
/// memory: a larger set is sorted in runs written beside the index, then merged. The result
/// goes through `NAME.cdxj.open`, renamed when complete, so a crash never leaves half an
/// index under the real name.
fn sort_into(unsorted: &Path, index: &Path) -> Result<(), WarcError> {
    let tmp = beside(index, "open");
    let mut out = BufWriter::with_capacity(64 * 1024, File::create(&tmp).map_err(WarcError::io(&tmp))?);
    let mut input =
        BufReader::with_capacity(64 * 1024, File::open(unsorted).map_err(WarcError::io(unsorted))?);
    let mut runs: Vec<PathBuf> = Vec::new();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut held = 0;
    loop {
        let mut line = Vec::new();
        let n = input.read_until(b'\n', &mut line).map_err(WarcError::io(unsorted))?;
        if n > 0 {
            held += n;
            lines.push(line);
        }
        let end = n == 0;
        if (end && !runs.is_empty() && !lines.is_empty()) || held >= RUN_BYTES {
            let run = beside(index, &format!("run{}", runs.len()));
            write_sorted(&mut lines, &run)?;
            runs.push(run);
            held = 0;
        }
        if end {
            break;
        }
    }
    let written = if runs.is_empty() {
        // cdxj-indexer sorts Python strings, which for UTF-8 is byte order (`LC_ALL=C sort`).
        lines.sort_unstable();
        lines.iter().try_for_each(|l| out.write_all(l))
    } else {
        merge(&runs, &mut out)
    };
    written.map_err(WarcError::io(&tmp))?;
    let file = out.into_inner().map_err(|e| WarcError::Io { path: tmp.clone(), source: e.into_error() })?;
    file.sync_all().map_err(WarcError::io(&tmp))?;
    fs::rename(&tmp, index).map_err(WarcError::io(index))?;
    for run in &runs {
        fs::remove_file(run).map_err(WarcError::io(run))?;
    }
    Ok(())
}

fn write_sorted(lines: &mut Vec<Vec<u8>>, path: &Path) -> Result<(), WarcError> {
    lines.sort_unstable();
    let mut out = BufWriter::new(File::create(path).map_err(WarcError::io(path))?);
    lines
        .drain(..)
        .try_for_each(|l| out.write_all(&l))
        .and_then(|()| out.flush())
        .map_err(WarcError::io(path))
}

/// Merges sorted runs into `out`.
fn merge(runs: &[PathBuf], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut readers =
        runs.iter().map(|r| File::open(r).map(BufReader::new)).collect::<Result<Vec<_>, _>>()?;
    let mut heads = BinaryHeap::new();
    for (i, r) in readers.iter_mut().enumerate() {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? > 0 {
            heads.push(Reverse((line, i)));
        }
    }
    while let Some(Reverse((line, i))) = heads.pop() {
        out.write_all(&line)?;
        let mut next = line;
        next.clear();
        if readers[i].read_until(b'\n', &mut next)? > 0 {
            heads.push(Reverse((next, i)));
        }
    }
    Ok(())
}

/// The media type alone: what comes before the first `;` or white space.
pub(crate) fn mime_of(content_type: &str) -> String {
    content_type.split([';', ' ', '\t', '\r', '\n', '\x0b', '\x0c']).next().unwrap_or("").trim().to_string()
}

/// A JSON string as Python's `json.dumps` writes it: ASCII only, `\uXXXX` in lower case.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_as_python_writes_them() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"b\\c\n\u{7f}é😀/");
        assert_eq!(s, r#""a\"b\\c\n\u007f\u00e9\ud83d\ude00/""#);
    }

    #[test]
    fn mime_is_the_type_alone() {
        assert_eq!(mime_of("text/html; charset=utf-8"), "text/html");
        assert_eq!(mime_of("text/html;charset=utf-8"), "text/html");
        assert_eq!(mime_of("image/png"), "image/png");
    }

    #[test]
    fn lines_are_sorted_through_runs_when_many() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("x.cdxj");
        let mut lines = LineFile::create(&index).unwrap();
        let mut expected = Vec::new();
        let mut rng = fastrand::Rng::with_seed(3);
        // A bit over two runs' worth.
        let filler = "f".repeat(200);
        let mut held = 0;
        while held < 2 * RUN_BYTES + 1000 {
            let line = format!("{:016x} {filler}\n", rng.u64(..));
            held += line.len();
            lines.push(&line).unwrap();
            expected.push(line);
        }
        lines.finish(&index).unwrap();
        expected.sort_unstable();
        assert_eq!(fs::read_to_string(&index).unwrap(), expected.concat());
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["x.cdxj"], "runs and side files are gone");
    }
}
