//! The names of a crawl's files: `{prefix}-{YYYYMMDDhhmmss}-{seq:05}.warc.gz`, `.open` while
//! written, and the index `{prefix}-{YYYYMMDDhhmmss}-{seq:05}.cdxj` beside it (with its
//! working files `….cdxj.lines`, `….cdxj.run0`…, `….cdxj.open` while it is made).

use std::path::Path;

use crate::error::WarcError;

pub(crate) const WARC_EXT: &str = ".warc.gz";
pub(crate) const OPEN_EXT: &str = ".open";
pub(crate) const INDEX_EXT: &str = ".cdxj";

/// What a file of the crawl is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `….warc.gz.open`: being written, or left by a crash.
    Open,
    /// `….warc.gz`: closed.
    Closed,
    /// `….cdxj`: the index of a closed file.
    Index,
    /// `….cdxj.*`: the working files of an index being made, or left by a crash.
    IndexTemp,
}

/// A file of the crawl found in its folder.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The name as it is in the folder.
    pub(crate) name: String,
    /// The WARC file's final name (`….warc.gz`), whatever this file is.
    pub(crate) warc: String,
    pub(crate) seq: u32,
    pub(crate) kind: Kind,
}

/// The final name of file `seq`, started at `stamp`.
pub(crate) fn warc_name(prefix: &str, stamp: &str, seq: u32) -> String {
    format!("{prefix}-{stamp}-{seq:05}{WARC_EXT}")
}

pub(crate) fn open_name(warc: &str) -> String {
    format!("{warc}{OPEN_EXT}")
}

/// `NAME.cdxj` for `NAME.warc.gz`.
pub(crate) fn index_name(warc: &str) -> String {
    format!("{}{INDEX_EXT}", warc.strip_suffix(WARC_EXT).unwrap_or(warc))
}

/// Reads `name` as a file of the crawl `prefix`, or None when it is not one.
pub(crate) fn parse(prefix: &str, name: &str) -> Option<Found> {
    let rest = name.strip_prefix(prefix)?.strip_prefix('-')?;
    let (stem, kind) = if let Some(s) = rest.strip_suffix(".warc.gz.open") {
        (s, Kind::Open)
    } else if let Some(s) = rest.strip_suffix(WARC_EXT) {
        (s, Kind::Closed)
    } else if let Some(s) = rest.strip_suffix(INDEX_EXT) {
        (s, Kind::Index)
    } else {
        (rest.split_once(".cdxj.")?.0, Kind::IndexTemp)
    };
    let (stamp, seq) = stem.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if stamp.len() != 14 || !digits(stamp) || seq.len() < 5 || !digits(seq) {
        return None;
    }
    let seq = seq.parse().ok()?;
    Some(Found { name: name.to_string(), warc: format!("{prefix}-{stem}{WARC_EXT}"), seq, kind })
}

/// The files of the crawl `prefix` in `dir`.
pub(crate) fn scan(dir: &Path, prefix: &str) -> Result<Vec<Found>, WarcError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(WarcError::io(dir))? {
        let entry = entry.map_err(WarcError::io(dir))?;
        if let Some(name) = entry.file_name().to_str()
            && let Some(f) = parse(prefix, name)
        {
            found.push(f);
        }
    }
    found.sort_by(|a, b| (a.seq, &a.name).cmp(&(b.seq, &b.name)));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let w = warc_name("shop", "20261127055031", 7);
        assert_eq!(w, "shop-20261127055031-00007.warc.gz");
        assert_eq!(index_name(&w), "shop-20261127055031-00007.cdxj");
        for (name, kind) in [
            (w.clone(), Kind::Closed),
            (open_name(&w), Kind::Open),
            (index_name(&w), Kind::Index),
            (format!("{}.open", index_name(&w)), Kind::IndexTemp),
            (format!("{}.lines", index_name(&w)), Kind::IndexTemp),
            (format!("{}.run12", index_name(&w)), Kind::IndexTemp),
        ] {
            let f = parse("shop", &name).unwrap();
            assert_eq!((f.seq, f.kind, f.warc.as_str()), (7, kind, w.as_str()), "{name}");
        }
        assert_eq!(parse("shop", "shop-20261127055031-123456.warc.gz").unwrap().seq, 123_456);
    }

    #[test]
    fn other_files_are_not_ours() {
        for name in [
            "shop-20261127055031-00007.warc",
            "shop-2026112705503-00007.warc.gz",
            "shop-20261127055031-0007.warc.gz",
            "shop-x-20261127055031-00007.warc.gz",
            "shopx-20261127055031-00007.warc.gz",
            "other-20261127055031-00007.warc.gz",
        ] {
            assert!(parse("shop", name).is_none(), "{name}");
        }
        assert!(parse("shop-x", "shop-x-20261127055031-00007.warc.gz").is_some());
    }
}
