//! A check of fjall's write-ahead journal files before fjall recovers them.
//!
//! fjall 3 reads its journal entry by entry and takes the first entry it cannot decode for the
//! end of the journal: it truncates the file there and opens without an error. That is right
//! for a torn tail (a crash in the middle of a write), but when the damage sits in the middle,
//! every later commit is silently thrown away. A torn tail never holds a *complete* batch after
//! the damage (a batch's end marker is written last), so: walk the entries as fjall will, and
//! if a whole end marker follows the point where fjall would stop, refuse the state instead.
//! (fjall preallocates each journal file with zeros, which also end the walk: no marker
//! follows them.)
//!
//! The entry layout mirrors fjall 3.1 `journal/entry.rs` (little-endian):
//! - start `1`: item count u32, sequence number u64;
//! - item `2`: value type u8 (0, 1, 2 or 4), compression u8 (0 none, 1 lz4), keyspace u64,
//!   key length u16, value length u32, stored length u32, key, stored value;
//! - end `3`: checksum u64, then the trailer `FJL\x03`;
//! - clear `4`: keyspace u64.
//!
//! Checksums are fjall's to check (a mismatch is an error there, which the store reports).

use std::fs::{self, File};
use std::io::{self, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

use crate::StoreError;

const TRAILER: &[u8; 4] = b"FJL\x03";
const TAG_START: u8 = 1;
const TAG_ITEM: u8 = 2;
const TAG_END: u8 = 3;
const TAG_CLEAR: u8 = 4;
/// An end entry: tag, checksum, trailer.
const END_LEN: usize = 1 + 8 + TRAILER.len();

/// Checks every `*.jnl` file in `db`; `dir` is the state directory named in errors.
pub(crate) fn check(dir: &Path, db: &Path) -> Result<(), StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| StoreError::Io { path, error }
    };
    for e in fs::read_dir(db).map_err(io(db))? {
        let path = e.map_err(io(db))?.path();
        if path.extension().is_none_or(|x| x != "jnl") {
            continue;
        }
        let path = path.as_path();
        let len = fs::metadata(path).map_err(io(path))?.len();
        let stop = decodable_len(path).map_err(io(path))?;
        // fjall preallocates its journals, so zeros after the last entry are the normal case.
        if stop < len && has_end_marker_after(path, stop + 1).map_err(io(path))? {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            return Err(StoreError::Corrupt {
                path: dir.into(),
                detail: format!(
                    "the database journal {name} is damaged at byte {stop} of {len}, and whole \
                     commits follow the damage: opening would silently drop them"
                ),
            });
        }
    }
    Ok(())
}

/// How many bytes from the start decode as whole journal entries (where fjall stops reading).
fn decodable_len(path: &Path) -> std::io::Result<u64> {
    let mut r = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut pos = 0u64;
    loop {
        match entry_len(&mut r) {
            Ok(Some(n)) => pos += n,
            Ok(None) => return Ok(pos),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(pos),
            Err(e) => return Err(e),
        }
    }
}

/// Reads one entry and returns its length; `None` at the end of the file or at an entry
/// fjall cannot decode.
fn entry_len(r: &mut impl Read) -> std::io::Result<Option<u64>> {
    let mut tag = [0u8; 1];
    if r.read(&mut tag)? == 0 {
        return Ok(None);
    }
    Ok(match tag[0] {
        TAG_START => {
            skip_n(r, 12)?;
            Some(13)
        }
        TAG_ITEM => {
            let mut head = [0u8; 1 + 1 + 8 + 2 + 4 + 4];
            r.read_exact(&mut head)?;
            let value_type = head[0];
            let compression = head[1];
            let key_len = u16::from_le_bytes([head[10], head[11]]) as usize;
            let value_len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as usize;
            let stored_len = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes")) as usize;
            if !matches!(value_type, 0 | 1 | 2 | 4) || compression > 1 {
                return Ok(None);
            }
            skip_n(r, key_len)?;
            if compression == 1 {
                // fjall decompresses while reading; a value that does not decompress to its
                // stated size ends its journal there too.
                if !lz4_decodes_to(&read_n(r, stored_len)?, value_len) {
                    return Ok(None);
                }
            } else {
                skip_n(r, stored_len)?;
            }
            Some((1 + head.len() + key_len + stored_len) as u64)
        }
        TAG_END => {
            let mut rest = [0u8; END_LEN - 1];
            r.read_exact(&mut rest)?;
            if &rest[8..] != TRAILER {
                return Ok(None);
            }
            Some(END_LEN as u64)
        }
        TAG_CLEAR => {
            skip_n(r, 8)?;
            Some(9)
        }
        _ => None,
    })
}

/// Reads `n` bytes (an entry's key or value), failing with `UnexpectedEof` if the file ends
/// first; a length larger than the file is found without allocating it.
fn read_n(r: &mut impl Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let got = r.take(n as u64).read_to_end(&mut buf)?;
    if got < n {
        return Err(ErrorKind::UnexpectedEof.into());
    }
    Ok(buf)
}

/// Skips `n` bytes, failing with `UnexpectedEof` if the file ends first.
fn skip_n(r: &mut impl Read, n: usize) -> std::io::Result<()> {
    if io::copy(&mut r.take(n as u64), &mut io::sink())? < n as u64 {
        return Err(ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

fn lz4_decodes_to(stored: &[u8], len: usize) -> bool {
    let mut out = vec![0u8; len];
    matches!(lz4_flex::decompress_into(stored, &mut out), Ok(n) if n == len)
}

/// Whether a whole end entry (tag, any checksum, trailer) starts at or after `from`. Reads
/// the file in blocks (a journal is preallocated to 64 MiB), keeping the last few bytes of
/// each block so a marker across two blocks is found.
fn has_end_marker_after(path: &Path, from: u64) -> std::io::Result<bool> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(from))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut kept = 0;
    loop {
        let n = f.read(&mut buf[kept..])?;
        if n == 0 {
            return Ok(false);
        }
        let filled = kept + n;
        if buf[..filled].windows(END_LEN).any(|w| w[0] == TAG_END && &w[9..] == TRAILER) {
            return Ok(true);
        }
        kept = (END_LEN - 1).min(filled);
        buf.copy_within(filled - kept..filled, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn item(key: &[u8], value: &[u8]) -> Vec<u8> {
        let mut b = vec![TAG_ITEM, 0, 0];
        b.extend(7u64.to_le_bytes());
        b.extend((key.len() as u16).to_le_bytes());
        b.extend((value.len() as u32).to_le_bytes());
        b.extend((value.len() as u32).to_le_bytes());
        b.extend(key);
        b.extend(value);
        b
    }

    fn batch(n: u8) -> Vec<u8> {
        let mut b = vec![TAG_START];
        b.extend(1u32.to_le_bytes());
        b.extend(u64::from(n).to_le_bytes());
        b.extend(item(&[n], b"value"));
        b.push(TAG_END);
        b.extend(99u64.to_le_bytes());
        b.extend(TRAILER);
        b
    }

    fn journal(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("0.jnl");
        fs::write(&p, bytes).unwrap();
        (t, p)
    }

    #[test]
    fn whole_batches_decode_to_the_end() {
        let bytes: Vec<u8> = (0..5).flat_map(batch).collect();
        let (t, p) = journal(&bytes);
        assert_eq!(decodable_len(&p).unwrap(), bytes.len() as u64);
        check(t.path(), t.path()).unwrap();
    }

    #[test]
    fn a_torn_tail_is_crash_recovery_not_damage() {
        let mut bytes: Vec<u8> = (0..5).flat_map(batch).collect();
        let whole = bytes.len();
        bytes.extend(&batch(5)[..20]);
        let (t, p) = journal(&bytes);
        // The torn batch's start entry decodes; its item does not.
        assert_eq!(decodable_len(&p).unwrap(), whole as u64 + 13);
        check(t.path(), t.path()).unwrap();
    }

    #[test]
    fn damage_before_whole_batches_is_refused() {
        let one = batch(0).len();
        let mut bytes: Vec<u8> = (0..5).flat_map(batch).collect();
        bytes[one] = 0x77; // the second batch's start tag
        let (t, p) = journal(&bytes);
        assert_eq!(decodable_len(&p).unwrap(), one as u64);
        let e = check(t.path(), t.path()).unwrap_err();
        assert!(e.to_string().contains("0.jnl is damaged at byte"), "{e}");
    }

    #[test]
    fn a_length_past_the_end_is_found_without_allocating_it() {
        let mut bytes = batch(0);
        let len_at = 13 + 1 + 2 + 8 + 2 + 4; // the second batch's item: its stored length
        let mut b1 = batch(1);
        b1[len_at..len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend(b1);
        bytes.extend(batch(2));
        let (t, _) = journal(&bytes);
        assert!(check(t.path(), t.path()).is_err(), "batch 2 follows the damage");
    }

    #[test]
    fn preallocated_zeros_after_the_entries_are_no_damage() {
        let t = tempfile::tempdir().unwrap();
        let mut old: Vec<u8> = (0..3).flat_map(batch).collect();
        old.resize(200_000, 0);
        fs::write(t.path().join("1.jnl"), old).unwrap();
        fs::write(t.path().join("2.jnl"), batch(4)).unwrap();
        check(t.path(), t.path()).unwrap();
    }

    #[test]
    fn a_marker_across_two_read_blocks_is_found() {
        let t = tempfile::tempdir().unwrap();
        // The end marker starts 6 bytes before the first block's end (reading from byte 1).
        let mut bytes = vec![0x77u8; (1 << 16) + 1 - 6 - 40];
        bytes.extend(batch(1));
        let p = t.path().join("0.jnl");
        fs::write(&p, bytes).unwrap();
        assert!(has_end_marker_after(&p, 1).unwrap());
        assert!(check(t.path(), t.path()).is_err());
    }
}
