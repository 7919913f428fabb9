//! The formats the file sinks write, as a file's extension names them: one mapping for the
//! command line's `-o` and a spider file's `output` keys.

use std::path::Path;

/// A file sink's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// One JSON object per line ([`JsonLinesSink`](crate::JsonLinesSink)).
    JsonLines,
    /// One JSON array ([`JsonArraySink`](crate::JsonArraySink)).
    JsonArray,
    /// A header row, then one row per item ([`CsvSink`](crate::CsvSink)).
    Csv,
}

impl FileFormat {
    /// The format `path`'s extension names (`.jsonl`, `.ndjson` or `.jl`; `.json`; `.csv`, in
    /// any case); `None` without an extension or for one no sink writes.
    pub fn named_by(path: &Path) -> Option<FileFormat> {
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        match ext.as_str() {
            "jsonl" | "ndjson" | "jl" => Some(FileFormat::JsonLines),
            "json" => Some(FileFormat::JsonArray),
            "csv" => Some(FileFormat::Csv),
            _ => None,
        }
    }

    /// Its usual extension, which is also its key in a spider file's `output`.
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::JsonLines => "jsonl",
            FileFormat::JsonArray => "json",
            FileFormat::Csv => "csv",
        }
    }

    /// What it writes, in words.
    pub fn describe(self) -> &'static str {
        match self {
            FileFormat::JsonLines => "JSON Lines",
            FileFormat::JsonArray => "one JSON array",
            FileFormat::Csv => "CSV",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_formats_in_any_case() {
        let named = |p: &str| FileFormat::named_by(Path::new(p));
        assert_eq!(named("a.jsonl"), Some(FileFormat::JsonLines));
        assert_eq!(named("a.NDJSON"), Some(FileFormat::JsonLines));
        assert_eq!(named("a.json"), Some(FileFormat::JsonArray));
        assert_eq!(named("out/a.Csv"), Some(FileFormat::Csv));
        assert_eq!((named("/dev/full"), named("a.xyz")), (None, None));
    }
}
