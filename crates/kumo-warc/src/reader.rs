//! Reading a `.warc.gz` back, strictly: each gzip member must hold exactly one whole record.
//! The CDXJ index is built with it, and the tests check what the writer wrote.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::WarcError;
use crate::records::RECORD_END;

/// What the index and the tests need of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordInfo {
    /// Where the record's gzip member starts in the file.
    pub offset: u64,
    /// The member's compressed length.
    pub length: u64,
    /// WARC-Type: `response`, `request`, `revisit`, `metadata`, `warcinfo`...
    pub warc_type: String,
    /// WARC-Record-ID, angle brackets included.
    pub record_id: String,
    /// WARC-Date, as written.
    pub date: String,
    /// WARC-Target-URI.
    pub target: Option<String>,
    /// WARC-Concurrent-To: the id of the record this one goes with.
    pub concurrent_to: Option<String>,
    /// WARC-Payload-Digest.
    pub payload_digest: Option<String>,
    /// WARC-Block-Digest.
    pub block_digest: Option<String>,
    /// The record's Content-Type (of its block).
    pub content_type: Option<String>,
    /// The block's length.
    pub content_length: u64,
    /// The status code of the block's HTTP head (response and revisit records).
    pub http_status: Option<u16>,
    /// The Content-Type of the block's HTTP head (response and revisit records).
    pub http_content_type: Option<String>,
    /// Every WARC header field, in file order.
    pub headers: Vec<(String, String)>,
}

impl RecordInfo {
    /// The first WARC header field named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One record: what [`RecordInfo`] says of it, and its block (the bytes Content-Length counts).
#[derive(Debug, Clone)]
pub struct Record {
    /// Its header fields and place in the file.
    pub info: RecordInfo,
    /// Its block, without the CRLF CRLF that follows it.
    pub block: Vec<u8>,
}

/// The records of a file, one gzip member at a time.
pub struct WarcReader {
    path: PathBuf,
    input: Counting<BufReader<File>>,
    failed: bool,
}

impl WarcReader {
    /// Opens the file at `path`; records are read as the iterator asks for them.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, WarcError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(WarcError::io(&path))?;
        let input = Counting { inner: BufReader::with_capacity(64 * 1024, file), pos: 0 };
        Ok(WarcReader { path, input, failed: false })
    }

    fn malformed(&mut self, offset: u64, why: impl Into<String>) -> WarcError {
        self.failed = true;
        WarcError::Malformed { path: self.path.clone(), offset, why: why.into() }
    }

    fn next_record(&mut self) -> Result<Option<Record>, WarcError> {
        let offset = self.input.pos;
        match self.input.fill_buf() {
            Ok([]) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(WarcError::Io { path: self.path.clone(), source: e }),
        }
        let mut data = Vec::new();
        // The bufread decoder takes exactly one member from the input and leaves the rest.
        let inflated = flate2::bufread::GzDecoder::new(&mut self.input).read_to_end(&mut data);
        if let Err(e) = inflated {
            return Err(self.malformed(offset, format!("not a whole gzip member ({e})")));
        }
        let length = self.input.pos - offset;
        parse_record(data, offset, length).map(Some).map_err(|why| self.malformed(offset, why))
    }
}

impl Iterator for WarcReader {
    type Item = Result<Record, WarcError>;

    /// Stops after the first error: past a bad member there is no telling where the next starts.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        self.next_record().transpose()
    }
}

/// The records of the file at `path`, without their blocks.
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<RecordInfo>, WarcError> {
    WarcReader::open(path)?.map(|r| r.map(|r| r.info)).collect()
}

/// Splits a member's contents into header fields and block, checking the framing.
fn parse_record(mut data: Vec<u8>, offset: u64, length: u64) -> Result<Record, String> {
    let (info, head_end) = parse_head(&data, offset, length)?;
    let rest = (data.len() - head_end) as u64;
    if rest != info.content_length + RECORD_END.len() as u64 {
        return Err(format!(
            "{rest} bytes follow the header, Content-Length {} and CRLF CRLF make {}",
            info.content_length,
            info.content_length + 4
        ));
    }
    if !data.ends_with(RECORD_END) {
        return Err("the block is not followed by CRLF CRLF".into());
    }
    data.truncate(data.len() - RECORD_END.len());
    data.drain(..head_end);
    Ok(Record { info, block: data })
}

/// Reads the WARC header at the start of a member's contents and, for HTTP responses and
/// revisits, the status and Content-Type of the block's head. Returns the info and where the
/// block starts.
fn parse_head(data: &[u8], offset: u64, length: u64) -> Result<(RecordInfo, usize), String> {
    let head_end = find(data, b"\r\n\r\n").ok_or("no end of the WARC header")? + 4;
    let head = std::str::from_utf8(&data[..head_end - 4]).map_err(|_| "the WARC header is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let version = lines.next().unwrap_or("");
    if !matches!(version, "WARC/1.1" | "WARC/1.0") {
        return Err(format!("the record starts with {version:?}, not a WARC version"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) =
            line.split_once(':').ok_or_else(|| format!("header line without a colon: {line:?}"))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let get = |name: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    let need = |name: &str| get(name).ok_or_else(|| format!("no {name}"));
    let content_length: u64 =
        need("Content-Length")?.parse().map_err(|_| "Content-Length is not a number".to_string())?;
    let warc_type = need("WARC-Type")?;
    let content_type = get("Content-Type");
    let (http_status, http_content_type) = match warc_type.as_str() {
        "response" | "revisit"
            if content_type.as_deref().is_some_and(|t| t.starts_with("application/http")) =>
        {
            let block = &data[head_end..];
            http_head(&block[..block.len().min(content_length as usize)])?
        }
        _ => (None, None),
    };
    let info = RecordInfo {
        offset,
        length,
        record_id: need("WARC-Record-ID")?,
        date: need("WARC-Date")?,
        target: get("WARC-Target-URI"),
        concurrent_to: get("WARC-Concurrent-To"),
        payload_digest: get("WARC-Payload-Digest"),
        block_digest: get("WARC-Block-Digest"),
        warc_type,
        content_type,
        content_length,
        http_status,
        http_content_type,
        headers,
    };
    Ok((info, head_end))
}

/// The status code and Content-Type of an HTTP response head at the start of `block`.
fn http_head(block: &[u8]) -> Result<(Option<u16>, Option<String>), String> {
    // A revisit may have no block at all.
    if block.is_empty() {
        return Ok((None, None));
    }
    let end = find(block, b"\r\n\r\n").ok_or("the HTTP head has no end")?;
    let head = String::from_utf8_lossy(&block[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .strip_prefix("HTTP/")
        .and_then(|s| s.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("bad HTTP status line {status_line:?}"))?;
    let content_type = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.trim().to_string());
    Ok((Some(status), content_type))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Counts the bytes taken from a reader, so each member's offset and length are known.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.pos += amt as u64;
    }
}
