//! What the state commands (`frontier`, `failures`) share: opening a stopped crawl's state
//! without ever creating one, and where their JSON lines go to or come from.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use kumo_store_embedded::{EmbeddedConfig, EmbeddedStore};

use super::args::StateDir;

/// Opens the state in `--state DIR`; a directory without kumo state is an error.
pub fn open(state: &StateDir) -> Result<EmbeddedStore> {
    Ok(EmbeddedStore::open_existing(state.dir()?, EmbeddedConfig::default())?)
}

/// Opens the state in `--state DIR`, creating it if the directory is missing or empty.
pub fn open_or_create(state: &StateDir) -> Result<EmbeddedStore> {
    Ok(EmbeddedStore::open(state.dir()?, EmbeddedConfig::default())?)
}

/// `-`: standard output; anything else: a file, created or truncated.
pub fn output(target: &str) -> Result<Box<dyn Write>> {
    if target == "-" {
        return Ok(Box::new(BufWriter::new(io::stdout().lock())));
    }
    let f = File::create(target).with_context(|| format!("cannot write {target}"))?;
    Ok(Box::new(BufWriter::new(f)))
}

/// `-`: standard input; anything else: a file.
pub fn input(source: &str) -> Result<Box<dyn BufRead>> {
    if source == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    let f = File::open(Path::new(source)).with_context(|| format!("cannot read {source}"))?;
    Ok(Box::new(BufReader::new(f)))
}

/// Where a report goes, for messages: the file name, or "standard output".
pub fn describe(target: &str) -> &str {
    if target == "-" { "standard output" } else { target }
}
