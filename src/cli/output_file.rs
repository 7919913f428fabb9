//! What `-o`/`-O` write: standard output, a PostgreSQL table, or a file whose format its
//! extension names, as Scrapy's feed exports do (never a JSON Lines file named `.csv`).

use std::path::Path;

use anyhow::{Result, bail};
use kumo_pipeline::{
    CsvSink, Existing, FileFormat, JsonArraySink, JsonLinesSink, PgSinkConfig, PostgresSink, Sink,
};

/// Where page records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    Stdout,
    Postgres(&'a str),
    /// A file, in the format its extension names (JSON Lines without one).
    File(&'a Path, FileFormat),
}

impl<'a> Target<'a> {
    /// The file it names, if it names one.
    pub fn file(self) -> Option<&'a Path> {
        match self {
            Target::File(path, _) => Some(path),
            _ => None,
        }
    }
}

/// Reads `-o`/`-O`'s value; an extension that names no format kumo writes is a usage error.
pub fn target(value: &str) -> Result<Target<'_>> {
    if value == "-" {
        return Ok(Target::Stdout);
    }
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        return Ok(Target::Postgres(value));
    }
    let path = Path::new(value);
    let format = match (FileFormat::named_by(path), path.extension()) {
        (Some(format), _) => format,
        (None, None) => FileFormat::JsonLines,
        (None, Some(other)) => bail!(
            "kumo cannot tell what to write to {value} from its extension .{}: name the file \
             .jsonl (JSON Lines), .json (one JSON array) or .csv (CSV)",
            other.to_string_lossy()
        ),
    };
    Ok(Target::File(path, format))
}

/// Opens the sink `target` names; `existing` says what a new file does with data already in it,
/// and `pg_table` is the table of a PostgreSQL target.
pub async fn open(target: Target<'_>, existing: Existing, pg_table: &str) -> Result<Box<dyn Sink>> {
    Ok(match target {
        Target::Stdout => Box::new(JsonLinesSink::stdout()),
        Target::Postgres(url) => {
            let cfg = PgSinkConfig::jsonb(pg_table).with_key(["url"]);
            Box::new(PostgresSink::connect(url, cfg).await?)
        }
        Target::File(path, FileFormat::JsonLines) => Box::new(JsonLinesSink::create_with(path, existing)?),
        Target::File(path, FileFormat::JsonArray) => Box::new(JsonArraySink::create_with(path, existing)?),
        Target::File(path, FileFormat::Csv) => Box::new(CsvSink::create_with(path, None, existing)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_the_format() {
        let file = |v: &str| match target(v).unwrap() {
            Target::File(_, f) => f,
            other => panic!("{other:?}"),
        };
        assert_eq!(file("pages.jsonl"), FileFormat::JsonLines);
        assert_eq!(file("pages.NDJSON"), FileFormat::JsonLines);
        assert_eq!(file("/dev/full"), FileFormat::JsonLines);
        assert_eq!(file("pages.json"), FileFormat::JsonArray);
        assert_eq!(file("out/pages.csv"), FileFormat::Csv);
        assert_eq!(target("-").unwrap(), Target::Stdout);
        assert!(matches!(target("postgres://u@h/db").unwrap(), Target::Postgres(_)));
        let e = target("pages.xyz").unwrap_err().to_string();
        assert!(e.contains("extension .xyz") && e.contains(".csv"), "{e}");
    }
}
