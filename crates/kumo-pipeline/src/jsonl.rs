//! JSON Lines: one item per line, to a file or to standard output.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use async_trait::async_trait;
use kumo_core::Item;

use crate::{Sink, SinkError};

/// Writes each item as one line of JSON.
pub struct JsonLinesSink {
    target: String,
    out: BufWriter<Box<dyn Write + Send>>,
}

impl JsonLinesSink {
    /// Creates (truncates) `path`. The error names the path.
    pub fn create(path: &Path) -> Result<Self, SinkError> {
        let target = path.display().to_string();
        let file = File::create(path).map_err(|error| SinkError::Io { target: target.clone(), error })?;
        Ok(Self::from_writer(target, Box::new(file)))
    }

    /// Writes to standard output.
    pub fn stdout() -> Self {
        Self::from_writer("-".into(), Box::new(io::stdout()))
    }

    pub fn from_writer(target: String, w: Box<dyn Write + Send>) -> Self {
        JsonLinesSink { target, out: BufWriter::with_capacity(64 * 1024, w) }
    }

    fn io(&self, error: io::Error) -> SinkError {
        SinkError::Io { target: self.target.clone(), error }
    }
}

// Writes go to a 64 KiB buffer, so the occasional blocking flush to a local file or pipe is
// shorter than a hop to a blocking thread would be.
#[async_trait]
impl Sink for JsonLinesSink {
    fn name(&self) -> String {
        format!("jsonl:{}", self.target)
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        for item in items {
            serde_json::to_writer(&mut self.out, item)?;
            self.out.write_all(b"\n").map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.out.flush().map_err(|e| self.io(e))
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
    }

    #[test]
    fn unwritable_path_names_the_path() {
        let err = JsonLinesSink::create(Path::new("/nonexistent-dir/x.jsonl")).err().unwrap();
        assert!(err.to_string().contains("/nonexistent-dir/x.jsonl"), "{err}");
    }
}
