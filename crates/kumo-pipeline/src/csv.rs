//! CSV: one row per item under a header row, to a file or any writer.
//!
//! The columns are fixed when the sink is made (a model's fields, in order) or else taken from
//! the first item's fields. A CSV file has one header, so a field that appears only in later
//! items has no column: it is left out of the file. Use JSON Lines or give the columns when
//! items vary in shape.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

use async_trait::async_trait;
use kumo_core::Item;
use serde_json::Value;

use crate::output::{Existing, Output};
use crate::{Sink, SinkCheckpoint, SinkError, SinkResume};

/// Writes items as CSV rows (RFC 4180 quoting, `\n` line ends).
///
/// Values: strings as they are, numbers and booleans as their JSON text, `null` and missing
/// fields as an empty cell, arrays and objects as compact JSON. Fields that are not columns
/// are ignored.
///
/// A file sink resumes by cutting its file back to the committed offset ([`Sink::open`]); the
/// header is then already there, and gives the columns when none were given.
pub struct CsvSink {
    out: csv::Writer<Output>,
    columns: Option<Vec<String>>,
    header_written: bool,
}

impl CsvSink {
    /// Opens (creating) `path`; the error names the path. The file is emptied when the sink
    /// starts, unless [`Sink::open`] resumes it at a checkpoint. `columns`
    /// fixes the columns and their order; `None` takes them from the first item.
    pub fn create(path: &Path, columns: Option<Vec<String>>) -> Result<Self, SinkError> {
        Self::create_with(path, columns, Existing::Replace)
    }

    /// [`create`](Self::create), saying what a new output does with a file holding data.
    pub fn create_with(
        path: &Path,
        columns: Option<Vec<String>>,
        existing: Existing,
    ) -> Result<Self, SinkError> {
        Ok(Self::new(Output::create(path, existing)?, columns))
    }

    /// Writes to `w`; `target` names it in errors and in [`Sink::name`].
    pub fn from_writer(target: String, w: Box<dyn Write + Send>, columns: Option<Vec<String>>) -> Self {
        Self::new(Output::stream(target, w), columns)
    }

    fn new(out: Output, columns: Option<Vec<String>>) -> Self {
        // The csv writer buffers by itself; 64 KiB like the JSON Lines sink.
        let out = csv::WriterBuilder::new().buffer_capacity(64 * 1024).from_writer(out);
        CsvSink { out, columns, header_written: false }
    }

    fn io(&self, error: impl Into<io::Error>) -> SinkError {
        self.out.get_ref().io(error)
    }

    fn write_header(&mut self) -> Result<(), SinkError> {
        if let Some(columns) = &self.columns {
            self.out.write_record(columns).map_err(|e| self.io(e))?;
        }
        self.header_written = true;
        Ok(())
    }

    /// After resuming a file that holds a header: takes the columns from it, or checks that
    /// the given ones match it (rows under another header would be misread).
    fn adopt_header(&mut self) -> Result<(), SinkError> {
        let output = self.out.get_ref();
        let resume_err = |reason: String| SinkError::Resume { target: output.target().to_string(), reason };
        let header = output
            .read_back(|r| {
                let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(r);
                reader.records().next().transpose()
            })?
            .map_err(|e| resume_err(format!("cannot read the header row: {e}")))?
            .ok_or_else(|| resume_err("the kept part of the file has no header row".into()))?;
        let header: Vec<String> = header.iter().map(String::from).collect();
        match &self.columns {
            Some(columns) if *columns != header => {
                return Err(resume_err(format!(
                    "the file's header is {} but the columns are {}",
                    header.join(","),
                    columns.join(",")
                )));
            }
            Some(_) => {}
            None => self.columns = Some(header),
        }
        self.header_written = true;
        Ok(())
    }
}

/// The text of one cell.
fn cell(value: Option<&Value>) -> Cow<'_, str> {
    match value {
        None | Some(Value::Null) => Cow::Borrowed(""),
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(Value::Bool(b)) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Some(Value::Number(n)) => Cow::Owned(n.to_string()),
        // Display of a Value is compact JSON and cannot fail.
        Some(v @ (Value::Array(_) | Value::Object(_))) => Cow::Owned(v.to_string()),
    }
}

// Rows go to a 64 KiB buffer; as with JSON Lines, the occasional blocking write to a local file
// is shorter than a hop to a blocking thread.
#[async_trait]
impl Sink for CsvSink {
    fn name(&self) -> String {
        format!("csv:{}", self.out.get_ref().target())
    }

    async fn open(&mut self, resume: Option<&SinkResume>) -> Result<(), SinkError> {
        let kept = self.out.get_ref().open(resume)?;
        // A committed offset past 0 covers at least the header: it is written before any row
        // and a checkpoint follows a flush.
        if kept > 0 { self.adopt_header() } else { Ok(()) }
    }

    async fn write(&mut self, items: &[Item]) -> Result<(), SinkError> {
        let Some(first) = items.first() else { return Ok(()) };
        if self.columns.is_none() {
            self.columns = Some(first.0.keys().cloned().collect());
        }
        if !self.header_written {
            self.write_header()?;
        }
        let columns = self.columns.as_deref().unwrap_or_default();
        let mut row = Vec::with_capacity(columns.len());
        for item in items {
            row.clear();
            row.extend(columns.iter().map(|c| cell(item.get(c))));
            self.out.write_record(row.iter().map(|c| c.as_bytes())).map_err(|e| self.out.get_ref().io(e))?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        // Fixed columns make a header even when no item came: the file still says its shape.
        if !self.header_written && self.columns.is_some() {
            self.write_header()?;
        }
        // Even with nothing written, a file that was not resumed ends up empty.
        self.out.get_ref().start().map_err(|e| self.io(e))?;
        self.out.flush().map_err(|e| self.io(e))
    }

    fn checkpoint(&mut self) -> SinkCheckpoint {
        self.out.get_ref().checkpoint()
    }
}
