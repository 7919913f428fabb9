//! JSON Lines: one item per line, to a file or to standard output.

use std::io::{BufWriter, Write};
use std::path::Path;

use async_trait::async_trait;
use kumo_core::Item;

use crate::output::{Existing, Output};
use crate::{Sink, SinkCheckpoint, SinkError, SinkResume};

/// Writes each item as one line of JSON. A file sink resumes by cutting its file back to the
/// committed offset ([`Sink::open`]); standard output and other writers just go on.
pub struct JsonLinesSink {
    out: BufWriter<Output>,
}

impl JsonLinesSink {
    /// Opens (creating) `path`; the error names the path. The file is emptied when the sink
    /// starts, unless [`Sink::open`] resumes it at a checkpoint.
    pub fn create(path: &Path) -> Result<Self, SinkError> {
        Self::create_with(path, Existing::Replace)
    }

    /// [`create`](Self::create), saying what a new output does with a file holding data.
    pub fn create_with(path: &Path, existing: Existing) -> Result<Self, SinkError> {
        Ok(Self::new(Output::create(path, existing)?))
    }

    /// Writes to standard output.
    pub fn stdout() -> Self {
        Self::from_writer("-".into(), Box::new(std::io::stdout()))
    }

    /// Writes to `w`; `target` names it in errors and in [`Sink::name`].
    pub fn from_writer(target: String, w: Box<dyn Write + Send>) -> Self {
        Self::new(Output::stream(target, w))
    }

    fn new(out: Output) -> Self {
        JsonLinesSink { out: BufWriter::with_capacity(64 * 1024, out) }
    }

    fn io(&self, error: std::io::Error) -> SinkError {
        self.out.get_ref().io(error)
    }
}

// Writes go to a 64 KiB buffer, so the occasional blocking flush to a local file or pipe is
// shorter than a hop to a blocking thread would be.
#[async_trait]
impl Sink for JsonLinesSink {
    fn name(&self) -> String {
        format!("jsonl:{}", self.out.get_ref().target())
    }

    async fn open(&mut self, resume: Option<&SinkResume>) -> Result<(), SinkError> {
        self.out.get_ref().open(resume).map(drop)
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        for item in items {
            // The buffer passes bytes on as it fills: an I/O error can surface here too, and
            // must name the output, not blame the item.
            serde_json::to_writer(&mut self.out, item)
                .map_err(|e| if e.is_io() { self.io(e.into()) } else { SinkError::Encode(e) })?;
            self.out.write_all(b"\n").map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        // Even with nothing written, a file that was not resumed ends up empty.
        self.out.get_ref().start().map_err(|e| self.io(e))?;
        self.out.flush().map_err(|e| self.io(e))
    }

    fn checkpoint(&mut self) -> SinkCheckpoint {
        self.out.get_ref().checkpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_line_per_item_in_field_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let mut s = JsonLinesSink::create(&path).unwrap();
        s.write(&[Item::new().with("url", "http://h/").with("status", 200)]).await.unwrap();
        s.write(&[Item::new().with("b", 1).with("a", 2)]).await.unwrap();
        s.flush().await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"url\":\"http://h/\",\"status\":200}\n{\"b\":1,\"a\":2}\n");
        assert_eq!(s.checkpoint().offset, Some(text.len() as u64));
    }

    #[test]
    fn unwritable_path_names_the_path() {
        let err = JsonLinesSink::create(Path::new("/nonexistent-dir/x.jsonl")).err().unwrap();
        assert!(err.to_string().contains("/nonexistent-dir/x.jsonl"), "{err}");
    }

    #[tokio::test]
    async fn without_open_an_existing_file_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(&path, "{\"old\":1}\n{\"old\":2}\n").unwrap();
        let mut s = JsonLinesSink::create(&path).unwrap();
        s.write(&[Item::new().with("new", 1)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"new\":1}\n");
        drop(s);
        // And with no item at all, as `File::create` did.
        let mut s = JsonLinesSink::create(&path).unwrap();
        s.flush().await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[tokio::test]
    async fn resume_cuts_back_to_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let item = |n: i32| Item::new().with("n", n);
        let mut s = JsonLinesSink::create(&path).unwrap();
        s.open(None).await.unwrap();
        s.write(&[item(1), item(2)]).await.unwrap();
        s.flush().await.unwrap();
        let committed = s.checkpoint();
        s.write(&[item(3)]).await.unwrap();
        drop(s); // the crash: item 3 reached the file but not a checkpoint

        let mut s = JsonLinesSink::create(&path).unwrap();
        let resume = SinkResume { offset: committed.offset, state: vec![], file: committed.file };
        s.open(Some(&resume)).await.unwrap();
        s.write(&[item(3), item(4)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n");
    }

    /// A writer whose device is full.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(28))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_full_device_is_an_output_error_not_an_encoding_one() {
        let mut s = JsonLinesSink::from_writer("full".into(), Box::new(Full));
        let big = Item::new().with("text", "x".repeat(100_000));
        let e = s.write(&[big]).await.unwrap_err();
        assert!(matches!(e, SinkError::Io { .. }), "{e}");
        assert!(e.to_string().starts_with("cannot write full: No space left"), "{e}");
    }

    #[tokio::test]
    async fn stdout_like_writers_have_no_offset() {
        let mut s = JsonLinesSink::from_writer("mem".into(), Box::new(std::io::sink()));
        s.open(Some(&SinkResume { offset: Some(10), ..Default::default() })).await.unwrap();
        s.write(&[Item::new().with("a", 1)]).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(s.checkpoint(), SinkCheckpoint::default());
    }
}
