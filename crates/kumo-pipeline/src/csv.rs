//! CSV: one row per item under a header row, to a file or any writer.
//!
//! The columns are fixed when the sink is made (a model's fields, in order) or else taken from
//! the first item's fields. A CSV file has one header, so a field that appears only in later
//! items has no column: it is left out of the file. Use JSON Lines or give the columns when
//! items vary in shape.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use async_trait::async_trait;
use kumo_core::Item;
use serde_json::Value;

use crate::{Sink, SinkError};

/// Writes items as CSV rows (RFC 4180 quoting, `\n` line ends).
///
/// Values: strings as they are, numbers and booleans as their JSON text, `null` and missing
/// fields as an empty cell, arrays and objects as compact JSON. Fields that are not columns
/// are ignored.
pub struct CsvSink {
    target: String,
    out: csv::Writer<Box<dyn Write + Send>>,
    columns: Option<Vec<String>>,
    header_written: bool,
}

impl CsvSink {
    /// Creates (truncates) `path`. `columns` fixes the columns and their order; `None` takes
    /// them from the first item. The error names the path.
    pub fn create(path: &Path, columns: Option<Vec<String>>) -> Result<Self, SinkError> {
        let target = path.display().to_string();
        let file = File::create(path).map_err(|error| SinkError::Io { target: target.clone(), error })?;
        Ok(Self::from_writer(target, Box::new(file), columns))
    }

    /// Writes to `w`; `target` names it in errors and in [`Sink::name`].
    pub fn from_writer(target: String, w: Box<dyn Write + Send>, columns: Option<Vec<String>>) -> Self {
        // The csv writer buffers by itself; 64 KiB like the JSON Lines sink.
        let out = csv::WriterBuilder::new().buffer_capacity(64 * 1024).from_writer(w);
        CsvSink { target, out, columns, header_written: false }
    }

    fn io(&self, error: impl Into<io::Error>) -> SinkError {
        SinkError::Io { target: self.target.clone(), error: error.into() }
    }

    fn write_header(&mut self) -> Result<(), SinkError> {
        if let Some(columns) = &self.columns {
            self.out.write_record(columns).map_err(|e| self.io(e))?;
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
        format!("csv:{}", self.target)
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
            self.out
                .write_record(row.iter().map(|c| c.as_bytes()))
                .map_err(|e| SinkError::Io { target: self.target.clone(), error: e.into() })?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        // Fixed columns make a header even when no item came: the file still says its shape.
        if !self.header_written && self.columns.is_some() {
            self.write_header()?;
        }
        self.out.flush().map_err(|e| self.io(e))
    }
}
