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
//!   key length u16, value length u32, stored length u32 (the same when uncompressed), key,
//!   stored value;
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

/// Checks every `*.jnl` file in `db`, oldest first; `dir` is the state directory named in
/// errors.
pub(crate) fn check(dir: &Path, db: &Path) -> Result<(), StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| StoreError::Io { path, error }
    };
    let mut journals = Vec::new();
    for e in fs::read_dir(db).map_err(io(db))? {
        let path = e.map_err(io(db))?.path();
        if path.extension().is_some_and(|x| x == "jnl") {
            // fjall numbers its journals in the order it writes them.
            let id = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok());
            journals.push((id.unwrap_or(u64::MAX), path));
        }
    }
    journals.sort();
    let mut last_seqno = None;
    for (_, path) in journals {
        let path = path.as_path();
        let damaged = |detail: String| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            StoreError::Corrupt {
                path: dir.into(),
                detail: format!("the database journal {name} is damaged {detail}"),
            }
        };
        let len = fs::metadata(path).map_err(io(path))?.len();
        let walk = walk(path, &mut last_seqno).map_err(io(path))?;
        if let Some(at) = walk.backwards_at {
            return Err(damaged(format!(
                "at byte {at} of {len}: a commit's sequence number goes backwards, so opening \
                 would let older writes hide newer ones"
            )));
        }
        // fjall preallocates its journals, so zeros after the last entry are the normal case.
        let stop = walk.decodable;
        if stop < len && has_end_marker_after(path, stop + 1).map_err(io(path))? {
            return Err(damaged(format!(
                "at byte {stop} of {len}, and whole commits follow the damage: opening would \
                 silently drop them"
            )));
        }
    }
    Ok(())
}

/// What walking one journal found.
struct Walk {
    /// How many bytes from the start decode as whole entries (where fjall stops reading).
    decodable: u64,
    /// Where a commit's start entry carries a sequence number not above the one before it.
    backwards_at: Option<u64>,
}

/// Walks the entries of the journal at `path` as fjall will. `last_seqno` carries the last
/// commit's sequence number from journal to journal: fjall numbers commits under its journal
/// lock, so they only ever go up (a flipped number is not in its checksum, which covers a
/// commit's items only). A start entry's number counts once its commit's end entry is read:
/// a write cut short by a full disk can end at a page boundary inside a start entry, whose
/// number then reads as the zeros of the unwritten page, and that torn commit is one fjall
/// drops, not damage.
fn walk(path: &Path, last_seqno: &mut Option<u64>) -> std::io::Result<Walk> {
    let mut r = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut pos = 0u64;
    // The open commit's start: where it is and its number.
    let mut open: Option<(u64, u64)> = None;
    loop {
        match entry(&mut r) {
            Ok(Some((n, kind))) => {
                match kind {
                    Kind::Start(seqno) => open = Some((pos, seqno)),
                    Kind::End => {
                        if let Some((at, seqno)) = open.take() {
                            if last_seqno.is_some_and(|last| seqno <= last) {
                                return Ok(Walk { decodable: at, backwards_at: Some(at) });
                            }
                            *last_seqno = Some(seqno);
                        }
                    }
                    Kind::Other => {}
                }
                pos += n;
            }
            Ok(None) => return Ok(Walk { decodable: pos, backwards_at: None }),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                return Ok(Walk { decodable: pos, backwards_at: None });
            }
            Err(e) => return Err(e),
        }
    }
}

/// What an entry means to the walk.
enum Kind {
    /// A commit's start, with its sequence number.
    Start(u64),
    /// A commit's end.
    End,
    /// An item or a keyspace clear.
    Other,
}

/// How many bytes from the start decode as whole entries (where fjall stops reading).
#[cfg(test)]
fn decodable_len(path: &Path) -> std::io::Result<u64> {
    Ok(walk(path, &mut None)?.decodable)
}

/// Reads one entry and returns its length and kind; `None` at the end of the file or at an
/// entry fjall cannot decode.
fn entry(r: &mut impl Read) -> std::io::Result<Option<(u64, Kind)>> {
    let mut tag = [0u8; 1];
    if r.read(&mut tag)? == 0 {
        return Ok(None);
    }
    let len = match tag[0] {
        TAG_START => {
            let mut rest = [0u8; 12];
            r.read_exact(&mut rest)?;
            return Ok(Some((13, Kind::Start(u64::from_le_bytes(rest[4..].try_into().expect("8 bytes"))))));
        }
        TAG_ITEM => {
            let mut head = [0u8; 1 + 1 + 8 + 2 + 4 + 4];
            r.read_exact(&mut head)?;
            let value_type = head[0];
            let compression = head[1];
            let key_len = u16::from_le_bytes([head[10], head[11]]) as usize;
            let value_len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as usize;
            let stored_len = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes")) as usize;
            // fjall writes an uncompressed value's two lengths equal; it asserts that they
            // are when it reads (a panic in builds with debug assertions), so unequal ones are
            // damage here, not something to hand to fjall.
            if !matches!(value_type, 0 | 1 | 2 | 4)
                || compression > 1
                || (compression == 0 && value_len != stored_len)
            {
                return Ok(None);
            }
            skip_n(r, key_len)?;
            if compression == 1 {
                // fjall decompresses while reading; a value that does not decompress to its
                // stated size ends its journal there too. LZ4 expands at most about 255 times,
                // so a larger stated size is damage, found without allocating it.
                if value_len as u64 > stored_len as u64 * 256 + 256
                    || !lz4_decodes_to(&read_n(r, stored_len)?, value_len)
                {
                    return Ok(None);
                }
            } else {
                skip_n(r, stored_len)?;
            }
            (1 + head.len() + key_len + stored_len) as u64
        }
        TAG_END => {
            let mut rest = [0u8; END_LEN - 1];
            r.read_exact(&mut rest)?;
            if &rest[8..] != TRAILER {
                return Ok(None);
            }
            return Ok(Some((END_LEN as u64, Kind::End)));
        }
        TAG_CLEAR => {
            skip_n(r, 8)?;
            9
        }
        _ => return Ok(None),
    };
    Ok(Some((len, Kind::Other)))
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
        // The trailer is rare and memmem is fast even in a debug build (dependencies are
        // optimized): a byte-by-byte window scan of the 64 MiB took seconds per open there.
        let found = memchr::memmem::find_iter(&buf[..filled], TRAILER)
            .any(|at| at >= END_LEN - TRAILER.len() && buf[at + TRAILER.len() - END_LEN] == TAG_END);
        if found {
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

    /// A full disk cut a write at a page boundary 4 bytes into a start entry: its number reads
    /// as zeros, below the last commit's, but no end follows, so it is a torn tail.
    #[test]
    fn a_start_torn_at_a_page_boundary_is_a_torn_tail() {
        let mut bytes: Vec<u8> = (1..6).flat_map(batch).collect();
        let whole = bytes.len();
        bytes.extend(&batch(6)[..4]);
        bytes.resize(whole + 4096, 0);
        let (t, p) = journal(&bytes);
        assert_eq!(decodable_len(&p).unwrap(), whole as u64 + 13, "the start decodes, with zeros");
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
    fn a_sequence_number_that_goes_backwards_is_damage() {
        // Commit 3's number flipped below commit 2's: every entry still decodes.
        let mut bytes: Vec<u8> = (0..5).flat_map(batch).collect();
        let at = 3 * batch(0).len();
        bytes[at + 5..at + 13].copy_from_slice(&1u64.to_le_bytes());
        let (t, _) = journal(&bytes);
        let e = check(t.path(), t.path()).unwrap_err();
        assert!(e.to_string().contains(&format!("damaged at byte {at}")), "{e}");
        assert!(e.to_string().contains("sequence number goes backwards"), "{e}");

        // Across journals, in fjall's order (2 after 10 would be wrong; 10 after 2 is right).
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("2.jnl"), (0..3).flat_map(batch).collect::<Vec<u8>>()).unwrap();
        fs::write(t.path().join("10.jnl"), (3..6).flat_map(batch).collect::<Vec<u8>>()).unwrap();
        check(t.path(), t.path()).unwrap();
        fs::write(t.path().join("11.jnl"), batch(4)).unwrap();
        assert!(check(t.path(), t.path()).is_err(), "11.jnl starts below where 10.jnl ended");
    }

    #[test]
    fn unequal_lengths_of_an_uncompressed_value_are_damage() {
        let one = batch(0).len();
        let mut bytes: Vec<u8> = (0..3).flat_map(batch).collect();
        let value_len_at = one + 13 + 1 + 2 + 8 + 2; // the second batch's item: its value length
        bytes[value_len_at] ^= 0x01;
        let (t, p) = journal(&bytes);
        assert_eq!(decodable_len(&p).unwrap(), one as u64 + 13, "its start decodes, its item does not");
        assert!(check(t.path(), t.path()).is_err(), "batch 2 follows the damage");
    }

    #[test]
    fn an_impossible_decompressed_size_is_damage_found_without_allocating_it() {
        let value = lz4_flex::compress(&[7u8; 1000]);
        let mut bad = vec![TAG_START];
        bad.extend(1u32.to_le_bytes());
        bad.extend(1u64.to_le_bytes());
        bad.extend([TAG_ITEM, 0, 1]);
        bad.extend(7u64.to_le_bytes());
        bad.extend(1u16.to_le_bytes());
        bad.extend(u32::MAX.to_le_bytes()); // 4 GiB from a few bytes
        bad.extend((value.len() as u32).to_le_bytes());
        bad.push(1);
        bad.extend(&value);
        let mut bytes = bad;
        bytes.extend(batch(2));
        let (t, p) = journal(&bytes);
        assert_eq!(decodable_len(&p).unwrap(), 13);
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
