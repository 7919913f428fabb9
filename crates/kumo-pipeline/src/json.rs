//! One JSON array of items, to a file: `[`, the items one per line, `]`.
//!
//! The file is a whole JSON document after every flush, so after every checkpoint: the closing
//! `]` is written past the flushed items as a trailer (`Output::write_trailer`), cut before the
//! next item and left out of the checkpoint. A crawl killed mid-write leaves bytes past its
//! checkpoint, as any file sink does; the resumed crawl cuts them back and closes the array
//! again at its next flush.

use std::io::{BufWriter, Write};
use std::path::Path;

use async_trait::async_trait;
use kumo_core::Item;

use crate::output::{Existing, Output};
use crate::{Sink, SinkCheckpoint, SinkError, SinkResume};

/// What opens the array, before the first item.
const HEAD: &[u8] = b"[\n";
/// What closes it, after the last item.
const CLOSE: &[u8] = b"\n]\n";

/// Writes items as the elements of one JSON array in a regular file (not a stream: a pipe
/// cannot take back the closing `]` when more items come).
pub struct JsonArraySink {
    out: BufWriter<Output>,
    /// Whether the file holds an item: the next one needs a comma first.
    has_items: bool,
    /// Whether the file holds the array's head.
    has_head: bool,
}

impl JsonArraySink {
    /// Opens (creating) `path`, saying what a new output does with a file holding data; the
    /// error names the path. A path that is not a regular file is refused.
    pub fn create_with(path: &Path, existing: Existing) -> Result<Self, SinkError> {
        let out = Output::create(path, existing)?;
        if !out.is_file() {
            return Err(out.io(std::io::Error::other(
                "a JSON array is written to a regular file only (its closing ] is taken back when \
                 more items come); use JSON Lines (.jsonl) for a pipe or a device",
            )));
        }
        Ok(JsonArraySink { out: BufWriter::with_capacity(64 * 1024, out), has_items: false, has_head: false })
    }

    fn io(&self, error: std::io::Error) -> SinkError {
        self.out.get_ref().io(error)
    }

    fn head(&mut self) -> Result<(), SinkError> {
        if !self.has_head {
            self.out.write_all(HEAD).map_err(|e| self.io(e))?;
            self.has_head = true;
        }
        Ok(())
    }
}

#[async_trait]
impl Sink for JsonArraySink {
    fn name(&self) -> String {
        format!("json:{}", self.out.get_ref().target())
    }

    async fn open(&mut self, resume: Option<&SinkResume>) -> Result<(), SinkError> {
        let kept = self.out.get_ref().open(resume)?;
        // What a checkpoint keeps: nothing, the head alone, or the head and whole items.
        self.has_head = kept >= HEAD.len() as u64;
        self.has_items = kept > HEAD.len() as u64;
        Ok(())
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        self.head()?;
        for item in items {
            if self.has_items {
                self.out.write_all(b",\n").map_err(|e| self.io(e))?;
            }
            serde_json::to_writer(&mut self.out, item)
                .map_err(|e| if e.is_io() { self.io(e.into()) } else { SinkError::Encode(e) })?;
            self.has_items = true;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        // Even with nothing written, a file that was not resumed ends up an empty array.
        self.out.get_ref().start().map_err(|e| self.io(e))?;
        self.head()?;
        self.out.flush().map_err(|e| self.io(e))?;
        self.out.get_mut().write_trailer(CLOSE).map_err(|e| self.out.get_ref().io(e))
    }

    fn checkpoint(&mut self) -> SinkCheckpoint {
        self.out.get_ref().checkpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(n: i32) -> Item {
        Item::new().with("n", n)
    }

    fn parsed(path: &Path) -> serde_json::Value {
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not one JSON document ({e}): {text:?}"))
    }

    #[tokio::test]
    async fn every_flush_leaves_one_whole_array() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut s = JsonArraySink::create_with(&path, Existing::Replace).unwrap();
        s.open(None).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(parsed(&path), serde_json::json!([]));
        s.write(&[item(1), item(2)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(parsed(&path), serde_json::json!([{"n": 1}, {"n": 2}]));
        s.write(&[item(3)]).await.unwrap();
        s.flush().await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[\n{\"n\":1},\n{\"n\":2},\n{\"n\":3}\n]\n");
    }

    #[tokio::test]
    async fn resume_cuts_back_and_closes_the_array_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut s = JsonArraySink::create_with(&path, Existing::Replace).unwrap();
        s.open(None).await.unwrap();
        s.write(&[item(1)]).await.unwrap();
        s.flush().await.unwrap();
        let committed = s.checkpoint();
        s.write(&[item(2)]).await.unwrap();
        s.flush().await.unwrap();
        drop(s); // the crash: item 2 reached the file but not a checkpoint

        let mut s = JsonArraySink::create_with(&path, Existing::Refuse).unwrap();
        let resume = SinkResume { offset: committed.offset, state: vec![], file: committed.file };
        s.open(Some(&resume)).await.unwrap();
        s.write(&[item(2), item(3)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(parsed(&path), serde_json::json!([{"n": 1}, {"n": 2}, {"n": 3}]));
    }

    #[tokio::test]
    async fn a_resume_before_any_item_writes_no_leading_comma() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut s = JsonArraySink::create_with(&path, Existing::Replace).unwrap();
        s.open(None).await.unwrap();
        s.flush().await.unwrap();
        let committed = s.checkpoint();
        drop(s);
        let mut s = JsonArraySink::create_with(&path, Existing::Refuse).unwrap();
        let resume = SinkResume { offset: committed.offset, state: vec![], file: committed.file };
        s.open(Some(&resume)).await.unwrap();
        s.write(&[item(1)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(parsed(&path), serde_json::json!([{"n": 1}]));
    }

    #[test]
    fn a_stream_is_refused() {
        let e = JsonArraySink::create_with(Path::new("/dev/null"), Existing::Replace).err().unwrap();
        assert!(e.to_string().contains("regular file only"), "{e}");
    }
}
